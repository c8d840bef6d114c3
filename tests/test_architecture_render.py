"""The rendering's shape, computed from the code (issue 36): each figure is drawn by one chart
function and shown by one template section, for a month (one cluster) and a study (several clusters
over a range) alike; the study adds only the sections that compare clusters (`study_` partials)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from flows.report.render import MONTH_CHARTS
from flows.report.study_report import STUDY_CHARTS

REPO_ROOT = Path(__file__).resolve().parent.parent
PARTIALS = REPO_ROOT / "templates" / "partials"
CHART_MODULES = {"charts.py", "failure_charts.py", "goodput_charts.py"}  # the canvas and the figures
INCLUDE = re.compile(r'{%\s*include\s+"partials/([a-z_]+)\.html\.j2"')
CHART_REF = re.compile(r"\bcharts\.([a-z_]+)\b")


def chart_functions() -> dict[str, list[str]]:
    """Each top-level `*_chart` function in flows/, with the modules that define it."""
    found = defaultdict(list)
    for path in sorted((REPO_ROOT / "flows").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_chart"):
                found[node.name].append(str(path.relative_to(REPO_ROOT)))
    return found


def test_each_chart_function_is_defined_once_in_the_chart_modules() -> None:
    functions = chart_functions()
    assert functions
    assert {name: paths for name, paths in functions.items() if len(paths) > 1} == {}
    assert {p for paths in functions.values() for p in paths if Path(p).name not in CHART_MODULES} == set()


def test_no_chart_function_is_a_study_copy_of_another() -> None:
    names = set(chart_functions())
    assert sorted(n for n in names if n.startswith("study_")) == []
    assert sorted(n for n in names if re.sub(r"^(month|monthly)_", "", n) != n) == []


def test_a_figure_both_reports_show_is_drawn_by_the_same_function() -> None:
    """The month's and the study's charts come from the one set of functions: the study draws a
    figure a month also shows with the month's function, for its several clusters."""
    month = {f.__name__: f for f in MONTH_CHARTS}
    study = {f.__name__: f for f in STUDY_CHARTS}
    assert {name for name in month.keys() & study.keys() if month[name] is not study[name]} == set()
    assert {f.__module__ for f in (*MONTH_CHARTS, *STUDY_CHARTS)} <= {
        "flows.report.failure_charts",
        "flows.report.goodput_charts",
    }


def test_no_study_section_repeats_a_section() -> None:
    """A `study_X` partial only where there is no `X`: the study's own sections are those that
    compare clusters; every other section takes the page's period (a month or a range)."""
    names = {p.name.split(".")[0] for p in PARTIALS.glob("*.j2")}
    assert sorted(n for n in names if n.startswith("study_") and n.removeprefix("study_") in names) == []


def test_the_study_page_shows_the_months_sections_and_only_comparisons_besides() -> None:
    month = INCLUDE.findall((REPO_ROOT / "templates" / "report.html.j2").read_text())
    study = INCLUDE.findall((REPO_ROOT / "templates" / "study.html.j2").read_text())
    assert len(set(month)) == len(month) and len(set(study)) == len(study)
    assert sorted(s for s in study if s not in month and not s.startswith("study_")) == []


def test_each_chart_is_shown_by_one_section() -> None:
    shown = defaultdict(set)
    for path in PARTIALS.glob("*.html.j2"):
        for chart in CHART_REF.findall(path.read_text()):
            shown[chart].add(path.name)
    assert shown
    assert {chart: sorted(paths) for chart, paths in shown.items() if len(paths) > 1} == {}
