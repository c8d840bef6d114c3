"""Every figure is declared once (issue 53, flows/figures/registry.py) and every list of figures is
that registry or derived from it: the period document's fields, the rules of what is measured and
what an unmeasured figure keeps, a correction's names, the OpenMetrics series, the pages' sections,
the Grafana panels. No other module of flows/ lists two figures in one literal, so a new figure is
its declaration and what it brings (its mart, partial, docs, simulator truth), nothing else."""

from __future__ import annotations

import ast
import json
import re

from saved_month import SAVED_MONTH, saved_metrics
from test_architecture import REPO_ROOT, _listed_names

from flows import DBT_PROJECT_DIR, TEMPLATES_DIR
from flows.delivery.fingerprint import SECTION_NAMES
from flows.figures import measured
from flows.figures.document import MonthDocument, StudyCluster
from flows.figures.period_figures import PeriodFigures
from flows.figures.read import month_document, study_document
from flows.figures.registry import FIGURES, figure_series, needs, page_sections, section_words
from flows.report import openmetrics
from flows.report.chart_lists import DRAWS, PERIOD_CHARTS, chart_names
from flows.report.render import MONTH_CHARTS, STUDY_CHARTS, render_charts

KEYS = {figure.key for figure in FIGURES}
DASHBOARD = REPO_ROOT / "flows" / "publish" / "grafana-dashboard.json"
METRIC = re.compile(r"\breliability_([a-z_]+)\{")


def test_the_period_documents_fields_are_the_registrys_figures() -> None:
    assert set(PeriodFigures.model_fields) == KEYS | {"parameters", "not_measured"}
    for document in (MonthDocument, StudyCluster):
        assert KEYS <= set(document.model_fields)
    for figure in FIGURES:
        assert PeriodFigures.model_fields[figure.key].annotation == figure.type


def test_what_is_measured_is_the_registrys_needs() -> None:
    """Each figure names rules flows/figures/measured.py knows; its paths and the keys it keeps
    unmeasured are the registry's."""
    assert measured.NEEDS == needs() and measured.FIGURES == tuple(needs())
    assert {rule for rules in needs().values() for rule in rules} <= set(measured.RULES)
    assert {path.split(".")[0] for path in measured.FIGURES} <= KEYS
    assert measured.KEEP == {f.key: f.keep for f in FIGURES if f.keep}


def test_a_correction_names_each_figure_as_its_declaration_does() -> None:
    assert {key: SECTION_NAMES[key] for key in KEYS} == section_words()


def test_the_openmetrics_series_are_the_registrys() -> None:
    """Besides the period's timestamps and the data-quality status (the document's own), every
    series is a figure's, in the registry's order; each exports only figures the registry declares."""
    own = (*openmetrics.PERIOD_SERIES, openmetrics.QUALITY_SERIES)
    assert openmetrics.SERIES == (*openmetrics.PERIOD_SERIES, *figure_series(), openmetrics.QUALITY_SERIES)
    for figure in FIGURES:
        for series in figure.series:
            assert {path.split(".")[0] for path in series.figures} <= KEYS, series.name
    names = [s.name for s in openmetrics.SERIES]
    assert len(set(names)) == len(names) and len(own) == 3


def test_the_pages_show_the_registrys_sections() -> None:
    """Each figure's section is its own partial, the page's and the plain text's; the one page
    template and the one text template include no figure's partial by name: they show `sections`
    and `text_sections` (flows/report/render.py), the registry's figures among them."""
    for figure in FIGURES:
        if figure.section:
            assert (TEMPLATES_DIR / "partials" / f"{figure.section}.html.j2").is_file(), figure.key
            assert (TEMPLATES_DIR / "partials" / f"{figure.section}.txt.j2").is_file(), figure.key
    assert sorted(p.name for p in TEMPLATES_DIR.glob("*.txt.j2")) == ["page.txt.j2"]
    for page in ("page.html.j2", "page.txt.j2"):
        text = (TEMPLATES_DIR / page).read_text()
        assert [s for s in page_sections() if f"partials/{s}." in text] == [], page
        assert "include" in text and "sections" in text, page


def test_each_figures_section_shows_its_declared_charts() -> None:
    """A figure's partial shows exactly the charts its declaration names, and no other partial does."""
    shown = {
        path.name.removesuffix(".html.j2"): set(re.findall(r"charts\.([a-z_]+)", path.read_text()))
        for path in (TEMPLATES_DIR / "partials").glob("*.html.j2")
    }
    for figure in FIGURES:
        if figure.section:
            assert shown[figure.section] == set(figure.charts), figure.key
    declared = {chart for figure in FIGURES for chart in figure.charts}
    others = {name: charts & declared for name, charts in shown.items() if name not in page_sections()}
    assert {name: charts for name, charts in others.items() if charts} == {}


def test_each_period_draws_the_charts_its_figures_declare() -> None:
    """Both kinds of period show every figure's section (render.py sections_of): each chart a
    figure declares is drawn by the month's and by the study's chart list, unless
    flows/report/chart_lists.py DRAWS says that kind has no such chart (None, said there). The
    lists hold no chart but the figures' and the period's own (PERIOD_CHARTS), in page order, and
    each function draws the chart of its name (the golden month and study have every one)."""
    declared = [chart for figure in FIGURES for chart in figure.charts]
    assert set(DRAWS) == set(declared) | set(PERIOD_CHARTS) and not set(declared) & set(PERIOD_CHARTS)
    assert chart_names() == (*PERIOD_CHARTS, *declared)
    for kind, charts in (("month", MONTH_CHARTS), ("study", STUDY_CHARTS)):
        draws = [getattr(DRAWS[name], kind) for name in chart_names()]
        assert charts == tuple(draw for draw in draws if draw is not None), kind
    study = json.loads((SAVED_MONTH.parent / "study" / "metrics.json").read_text())
    drawn = {
        "month": list(render_charts(month_document(saved_metrics()))),
        "study": list(render_charts(study_document(study))),
    }
    for kind, names in drawn.items():
        assert names == [name for name in chart_names() if getattr(DRAWS[name], kind)], kind


def test_each_figure_names_marts_that_exist() -> None:
    models = {p.stem for p in (DBT_PROJECT_DIR / "models" / "marts").rglob("*.sql")}
    ymls = {p.stem for p in (DBT_PROJECT_DIR / "models" / "marts").rglob("*.yml")}
    for figure in FIGURES:
        if figure.key != "projections":  # the model's, from r_f: no mart of its own
            assert figure.marts, figure.key
        assert set(figure.marts) <= models & ymls, figure.key


def test_the_grafana_panels_show_the_registrys_series() -> None:
    """Each panel of the dashboard queries the series of one figure (or the data's quality), and
    its title begins with that figure's `panel`; each figure with a panel has one."""
    owner = {s.name: f for f in FIGURES for s in f.series}
    panels = json.loads(DASHBOARD.read_text())["panels"]
    shown = set()
    for panel in panels:
        metrics = {m for t in panel["targets"] for m in METRIC.findall(t["expr"])}
        if metrics == {openmetrics.QUALITY_SERIES.name}:
            continue
        figures = {owner[m].key for m in metrics}
        assert len(figures) == 1, (panel["title"], metrics)
        figure = owner[metrics.pop()]
        assert figure.panel and panel["title"].startswith(figure.panel), panel["title"]
        shown.add(figure.key)
    assert shown == {f.key for f in FIGURES if f.panel}


# Blocks named after figures that are not the period's figures (issue 53 leaves them; its item 3,
# one document for any period, would make them periods' figures): a month's trailing windows hold
# their own MTTF and repair rows (document.Window), a study joins its clusters' tables side by side.
NOT_PERIOD_FIGURES = {
    "flows/figures/compare.py": "mttf_by_size, node_repairs",
    "flows/figures/side_by_side.py": "mttf_by_size, projections",
}


def test_no_other_module_lists_figures() -> None:
    """No module of flows/ but the registry holds two figure keys in one literal: every list of
    figures is derived from the registry (NOT_PERIOD_FIGURES aside)."""
    listed = {
        str(path.relative_to(REPO_ROOT)): found
        for path in sorted((REPO_ROOT / "flows").rglob("*.py"))
        if path.name != "registry.py"
        for found in _listed_names(ast.parse(path.read_text()), KEYS)
    }
    assert listed == NOT_PERIOD_FIGURES


def _marts_read() -> list[tuple[str, str, tuple[str, ...]]]:
    """(module, table, columns) of every Mart(...) of flows/: what the figures read of a mart."""

    def constants(node: ast.expr) -> list[str]:
        if isinstance(node, ast.Constant):
            return [node.value]
        if isinstance(node, ast.Starred):
            return constants(node.value)
        return [value for item in getattr(node, "elts", []) for value in constants(item)]

    found = []
    for path in sorted((REPO_ROOT / "flows").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Mart" and len(node.args) == 2:
                table, columns = node.args
                found.append((path.name, table.value, tuple(constants(columns))))
    return found


def test_the_columns_a_figure_reads_are_its_marts_documented_columns() -> None:
    """A mart's columns are stated in its SQL and its yml (dbt_project/models); each column a figure
    reads of it (flows/figures `Mart`) is one its yml documents, so Python restates none unchecked."""
    import yaml

    documented = {}
    for yml in (DBT_PROJECT_DIR / "models" / "marts").rglob("*.yml"):
        for model in yaml.safe_load(yml.read_text()).get("models", []):
            documented[model["name"]] = {c["name"] for c in model.get("columns", [])}
    read = _marts_read()
    assert len(read) >= 15
    undocumented = {
        (module, table): sorted(set(columns) - documented.get(table, set())) for module, table, columns in read
    }
    assert {where: columns for where, columns in undocumented.items() if columns} == {}


def test_the_reports_exposure_depends_on_every_figures_marts() -> None:
    """dbt's exposure of the report (dbt_project/models/exposures.yml) names every mart a figure
    reads, so dbt's lineage shows what each figure of the page comes from."""
    import yaml

    (exposure,) = yaml.safe_load((DBT_PROJECT_DIR / "models" / "exposures.yml").read_text())["exposures"]
    named = {ref.removeprefix("ref('").removesuffix("')") for ref in exposure["depends_on"]}
    assert {mart for figure in FIGURES for mart in figure.marts} - named == set()
