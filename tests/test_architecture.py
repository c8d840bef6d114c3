"""Rules of the code's shape that a reviewer would otherwise check by hand, computed from the code:
every figure is computed in the dbt DAG, so nothing outside it reads a staging or intermediate model
(issue 20); no function over 80 lines, no module over 400, no import cycle, no import from a higher
stage, a simulator that shares nothing with the code it tests, one chart function and one
template section per figure (issue 36), and each source kind declared once (issue 43; what each
declaration holds: tests/test_source_kinds.py). That templates read typed figures, never a dict's
methods on one: tests/test_architecture_typed.py."""

from __future__ import annotations

import ast
import json
import re
from collections import defaultdict
from pathlib import Path

import jinja2

from flows import DBT_PROJECT_DIR, EXPECTATIONS_DIR
from flows.figures.document import MonthDocument, StudyDocument
from flows.ingest.sources.registry import LANDED_SOURCES, SOURCE_KINDS
from flows.report.render import MONTH_CHARTS, STUDY_CHARTS, sections_of

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 80
# a staging or intermediate model named in a query: `stg_<source>__<table>` or `int_<name>`
INNER_MODEL = re.compile(r"\b(stg_[a-z0-9]+__[a-z0-9_]+|int_[a-z0-9]+_[a-z0-9_]+)\b")


def python_files() -> list[Path]:
    return sorted((REPO_ROOT / "flows").rglob("*.py"))


def test_no_function_in_flows_is_longer_than_80_lines() -> None:
    long = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long


def test_nothing_outside_dbt_reads_a_staging_or_intermediate_model() -> None:
    """The Python code and the data-quality suites read marts only."""
    readers = [*python_files(), *(REPO_ROOT / "expectations").glob("*.json"), *(REPO_ROOT / "templates").rglob("*")]
    found = [
        f"{path.relative_to(REPO_ROOT)}: {match}"
        for path in readers
        if path.is_file()
        for match in INNER_MODEL.findall(path.read_text())
    ]
    assert not found


MAX_MODULE_LINES = 400
# The stages, lowest first: a module imports from its own stage or a lower one, never a higher one.
# flows' own top-level modules (the Prefect flows and the CLI) are the top. The source formats'
# readers and the `[[sources]]` tables (flows/ingest/sources) use core's utilities, and the config
# (flows/config) reads the source kinds from their declarations (flows/ingest/sources/registry.py):
# the readers are a stage between core and the config, the rest of ingest one above the config.
STAGES = ["core", "sources", "config", "ingest", "warehouse", "quality", "figures", "report", "publish", "delivery"]


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The project's modules that `path` imports anywhere in it (top level, in functions, or under
    TYPE_CHECKING: each is a dependency), `from package import module` resolved to the module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name in known}


def import_graph(root: str) -> dict[str, set[str]]:
    paths = sorted((REPO_ROOT / root).rglob("*.py"))
    known = {module_name(p) for p in paths}
    return {module_name(p): imported_modules(p, known) - {module_name(p)} for p in paths}


def stage_of(module: str) -> int:
    if module == "flows":
        return 0  # the package's __init__: the runtime folders' paths, which every stage may read
    if module.startswith("flows.ingest.sources"):
        return STAGES.index("sources")
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else len(STAGES)


def test_no_module_is_longer_than_400_lines() -> None:
    files = [*python_files(), *sorted((REPO_ROOT / "simulator").rglob("*.py"))]
    long = {
        str(p.relative_to(REPO_ROOT)): n for p in files if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long


def test_no_module_imports_from_a_higher_stage() -> None:
    upward = [
        f"{module} -> {imported}"
        for module, imports in import_graph("flows").items()
        for imported in sorted(imports)
        if stage_of(imported) > stage_of(module)
    ]
    assert not upward


def test_there_is_no_import_cycle() -> None:
    graph = import_graph("flows")
    cycles, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append(" -> ".join(path[path.index(module) :] + [module]))
            return
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert not cycles


def test_the_simulator_imports_nothing_from_flows_and_reads_no_dbt_file() -> None:
    """The simulator is the oracle the science is tested against: it shares no definition with the
    code under test."""
    found = []
    for path in sorted((REPO_ROOT / "simulator").rglob("*.py")):
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            found += [f"{path.name}: import {n}" for n in names if n == "flows" or n.startswith("flows.")]
        if "dbt_project" in text or "DBT_PROJECT_DIR" in text:
            found.append(f"{path.name}: reads dbt_project")
    assert not found


# The rendering's shape: each figure is drawn by one chart function and shown by one template
# section, for a month (one cluster) and a study (several clusters over a range) alike; the study
# adds only the sections that compare clusters (`study_` partials).
PARTIALS = REPO_ROOT / "templates" / "partials"
# the canvas and the figures: charts.py and every flows/report/*_charts.py
CHART_MODULES = {"charts.py", *(p.name for p in (REPO_ROOT / "flows" / "report").glob("*_charts.py"))}
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
        f"flows.report.{name.removesuffix('.py')}" for name in CHART_MODULES - {"charts.py"}
    }


def test_no_study_section_repeats_a_section() -> None:
    """A `study_X` partial only where there is no `X`: the study's own sections are those that
    compare clusters; every other section takes the page's period (a month or a range)."""
    names = {p.name.split(".")[0] for p in PARTIALS.glob("*.j2")}
    assert sorted(n for n in names if n.startswith("study_") and n.removeprefix("study_") in names) == []


def test_one_page_template_shows_any_period() -> None:
    """One HTML page for a month and a study (templates/page.html.j2): its sections come from the
    document's data (flows/report/render.py sections_of), not a template per kind of period; a
    study shows the month's sections and only its comparisons besides."""
    pages = sorted(p.name for p in (REPO_ROOT / "templates").glob("*.html.j2"))
    assert pages == ["archive_index.html.j2", "page.html.j2"]
    assert INCLUDE.findall((REPO_ROOT / "templates" / "page.html.j2").read_text()) == ["style"]
    month, study = (sections_of(document) for document in _documents())
    assert len(set(month)) == len(month) and len(set(study)) == len(study)
    assert sorted(s for s in study if s not in month and not s.startswith("study_")) == []


def _documents() -> tuple:
    """The golden month's and study's documents (tests/data/golden/reports)."""
    golden = REPO_ROOT / "tests" / "data" / "golden" / "reports"
    month = json.loads((golden / "month" / "metrics.json").read_text())
    study = json.loads((golden / "study" / "metrics.json").read_text())
    return MonthDocument.model_validate(month), StudyDocument.model_validate(study)


def test_each_chart_is_shown_by_one_section() -> None:
    shown = defaultdict(set)
    for path in PARTIALS.glob("*.html.j2"):
        for chart in CHART_REF.findall(path.read_text()):
            shown[chart].add(path.name)
    assert shown
    assert {chart: sorted(paths) for chart, paths in shown.items() if len(paths) > 1} == {}


def _listed_names(tree: ast.AST, names: set[str]) -> list[str]:
    """The collection literals (tuple, list, set, dict keys) of a module that hold two or more of `names`."""
    found = []
    for node in ast.walk(tree):
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict) and items:
            listed = [i.value for i in items if isinstance(i, ast.Constant) and i.value in names]
            if len(listed) >= 2:
                found.append(", ".join(listed))
    return found


def test_no_other_module_lists_kinds_or_landed_sources() -> None:
    """Kinds and landed source names are listed once, in the declarations: no other module of flows/
    holds two of them in one literal, no suite in expectations/ a set of source names, and no dbt
    model or macro names a source (they read the seed landed_sources)."""
    names = set(SOURCE_KINDS) | set(LANDED_SOURCES)
    listed = [
        f"{path.relative_to(REPO_ROOT)}: {found}"
        for path in sorted((REPO_ROOT / "flows").rglob("*.py"))
        if path != REPO_ROOT / "flows" / "ingest" / "sources" / "registry.py"
        for found in _listed_names(ast.parse(path.read_text()), names)
    ]
    for path in sorted(EXPECTATIONS_DIR.glob("*.json")):
        listed += [f"{path.name}: {found}" for found in _json_lists(json.loads(path.read_text()), names)]
    for path in sorted((DBT_PROJECT_DIR / "models").rglob("*.sql")) + sorted(
        (DBT_PROJECT_DIR / "macros").rglob("*.sql")
    ):
        listed += [f"{path.name}: '{name}'" for name in LANDED_SOURCES if f"'{name}'" in path.read_text()]
    assert not listed


def _json_lists(value: object, names: set[str]) -> list[str]:
    """The lists of a JSON document that hold two or more of `names`."""
    if isinstance(value, dict):
        return [found for item in value.values() for found in _json_lists(item, names)]
    if not isinstance(value, list):
        return []
    listed = [item for item in value if isinstance(item, str) and item in names]
    return ([", ".join(listed)] if len(listed) >= 2 else []) + [f for item in value for f in _json_lists(item, names)]


# --- one rendering per period (issue 43): no month/study flag, and templates that only format

# the flags a month and a study were told apart by: `compared` (the report's charts and sections),
# `monthly` (the figures)
PERIOD_FLAGS = {"compared", "monthly"}


def _python_period_flags(path: Path) -> list[str]:
    """Where a module branches on a period flag: a flag's name or attribute in a condition (an if,
    a conditional expression, a while, a comprehension's if), or a parameter named as a flag."""
    tree = ast.parse(path.read_text())
    conditions = [n.test for n in ast.walk(tree) if isinstance(n, ast.If | ast.IfExp | ast.While)]
    conditions += [c for n in ast.walk(tree) if isinstance(n, ast.comprehension) for c in n.ifs]
    named = [(n, n.id) for c in conditions for n in ast.walk(c) if isinstance(n, ast.Name)]
    named += [(n, n.attr) for c in conditions for n in ast.walk(c) if isinstance(n, ast.Attribute)]
    named += [(n, n.arg) for n in ast.walk(tree) if isinstance(n, ast.arg)]
    return [f"{path.relative_to(REPO_ROOT)}:{node.lineno} {name}" for node, name in named if name in PERIOD_FLAGS]


def test_no_figure_or_chart_module_branches_on_month_or_study() -> None:
    """flows/figures and flows/report hold no `compared` or `monthly` variable, attribute or
    parameter: a period's figures and charts are computed and drawn alike for a month and a study,
    told apart by their data (how many clusters, what the figures hold)."""
    modules = [p for stage in ("figures", "report") for p in sorted((REPO_ROOT / "flows" / stage).rglob("*.py"))]
    assert [found for path in modules for found in _python_period_flags(path)] == []


def _template_trees() -> dict[str, jinja2.nodes.Template]:
    env = jinja2.Environment()
    return {p.name: env.parse(p.read_text()) for p in sorted((REPO_ROOT / "templates").rglob("*.j2"))}


def test_no_template_branches_on_month_or_study_outside_the_studys_own_sections() -> None:
    """No template reads or sets a period flag, but the study's own comparison sections
    (partials/study_*): every other section is one rendering over the page's clusters."""
    flagged = {
        name
        for name, tree in _template_trees().items()
        if not name.startswith("study_") and any(n.name in PERIOD_FLAGS for n in tree.find_all(jinja2.nodes.Name))
    }
    assert flagged == set()


def _joins(tree: jinja2.nodes.Template) -> set[str]:
    """What a template computes that the figures should give:
    - `sum`: a `sum` filter (a total);
    - `position`: `loop.index0`, a row's position used to find its match in another list;
    - `key`: a loop over one list filtered by equality with the row of an enclosing loop, or a
      selectattr/rejectattr "equalto" a variable (rows of two lists joined by key)."""
    found = {"sum" for f in tree.find_all(jinja2.nodes.Filter) if f.name == "sum"}
    found |= {
        "position"
        for g in tree.find_all(jinja2.nodes.Getattr)
        if isinstance(g.node, jinja2.nodes.Name) and g.node.name == "loop" and g.attr == "index0"
    }
    for f in tree.find_all(jinja2.nodes.Filter):
        equalto = f.name in ("selectattr", "rejectattr") and len(f.args) == 3
        if equalto and getattr(f.args[1], "value", None) == "equalto" and not isinstance(f.args[2], jinja2.nodes.Const):
            found.add("key")
    for outer in tree.find_all(jinja2.nodes.For):
        targets = {n.name for n in outer.target.find_all(jinja2.nodes.Name)} | (
            {outer.target.name} if isinstance(outer.target, jinja2.nodes.Name) else set()
        )
        for inner in (n for n in outer.find_all(jinja2.nodes.For) if n.test is not None):
            if isinstance(inner.test, jinja2.nodes.Compare) and any(
                n.name in targets for n in inner.test.find_all(jinja2.nodes.Name)
            ):
                found.add("key")
    return found


def test_no_template_joins_aligns_or_sums() -> None:
    """Templates only format: a join of two lists, an alignment by position or a total is computed
    in flows/figures and written into the document."""
    assert {name: found for name, tree in _template_trees().items() if (found := _joins(tree))} == {}
