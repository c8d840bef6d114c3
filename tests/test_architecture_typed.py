"""Templates receive the typed figures (issue 43): the reports validate their figures once into
the documents of flows/figures/document.py and hand the templates those objects, which the
templates read as attributes, never with a dict's methods (a rule of tests/test_architecture.py's
kind, computed from the templates and the document classes)."""

from __future__ import annotations

import ast
import json
import typing
from types import SimpleNamespace

import jinja2
from pydantic import BaseModel
from test_architecture import REPO_ROOT, _template_trees

from flows.figures.document import MonthDocument, StudyDocument
from flows.figures.period_figures import PeriodFigures
from flows.report import render, study_report

# a dict's methods (and the filter that calls them): on a figure object a template reads attributes
DICT_METHODS = {"get", "keys", "values", "items", "dictsort"}


def _dict_fields(model: type[BaseModel]) -> set[str]:
    """The fields typed as a dict (`dict[...]`, alone or in a union) of `model` and of the classes it holds."""
    names: set[str] = set()
    for name, field in model.model_fields.items():
        kinds, pending = [], [field.annotation]
        while pending:  # the annotation's types, through unions, lists and dicts
            kinds.append(typing.get_origin(pending[-1]) or pending[-1])
            pending += typing.get_args(pending.pop())
        names |= {name} if dict in kinds else set()
        names |= {n for k in kinds if isinstance(k, type) and issubclass(k, BaseModel) for n in _dict_fields(k)}
    return names


# the fields a template may call a dict method on: e.g. `study.clusters`, `metrics.inputs`, a family's `tests`
# (by name: `not_measured` is a dict of a period's figures and a string of a rate, either allowed)
DICT_FIELDS = _dict_fields(MonthDocument) | _dict_fields(StudyDocument)


def _dict_method_calls(tree: jinja2.nodes.Template) -> list[str]:
    """Each dict method called (or `dictsort` applied) on anything but a field named in DICT_FIELDS
    (`x.clusters.items()`, `x["clusters"].items()`; a variable set to such a field does not count)."""
    calls = (c for c in tree.find_all(jinja2.nodes.Call) if isinstance(c.node, jinja2.nodes.Getattr))
    receivers = [(c.lineno, c.node.attr, c.node.node) for c in calls]
    receivers += [(f.lineno, f.name, f.node) for f in tree.find_all(jinja2.nodes.Filter)]
    return [
        f"line {line}: {method}"
        for line, method, node in receivers
        if method in DICT_METHODS
        and getattr(node, "attr", getattr(getattr(node, "arg", None), "value", None)) not in DICT_FIELDS
    ]


def test_no_template_calls_a_dict_method_on_a_figure_object() -> None:
    """The pages receive the validated documents (flows/figures/document.py) and read each figure
    as an attribute: a key that may be absent is a field with a default of None (`is none`), a field
    only one class has is tested with `is defined`; `.get`, `.keys()`, `.values()`, `.items()` and
    `dictsort` only on a field the documents type as a dict (DICT_FIELDS)."""
    calls = {name: found for name, tree in _template_trees().items() if (found := _dict_method_calls(tree))}
    assert calls == {}


def test_the_pages_receive_the_documents_metrics_json_is_written_from(monkeypatch) -> None:
    """build_report and render_study validate once and hand every template the document itself
    (not a dict): the page's `metrics` or `study`, and each cluster's figures in `period_clusters`."""
    pages = []
    template = SimpleNamespace(render=lambda **context: pages.append(context) or "")
    monkeypatch.setattr(render, "environment", lambda: SimpleNamespace(get_template=lambda name: template))
    monkeypatch.setattr(render, "render_charts", lambda figures: {})
    golden = REPO_ROOT / "tests" / "data" / "golden" / "reports"
    month = render.build_report(json.loads((golden / "month" / "metrics.json").read_text()))
    study = study_report.render_study(json.loads((golden / "study" / "metrics.json").read_text()))
    assert [type(page.get("metrics", page.get("study"))) for page in pages] == [MonthDocument] * 3 + [StudyDocument] * 3
    assert all(page.get("metrics", page.get("study")) in (month.document, study.document) for page in pages)
    assert all(isinstance(f, PeriodFigures) for page in pages for _, f in page["period_clusters"])


# the outputs (issue 53): charts, OpenMetrics, exports, the artifact, delivery and publishing
OUTPUT_PACKAGES = ("flows/report", "flows/publish", "flows/delivery")
# string keys there that are no figure's: a backfill's outcomes (the artifact) and a sent-log line's fields
NOT_FIGURE_READS = {
    ("flows/report/artifact.py", "month"),
    ("flows/report/artifact.py", "outcome"),
    ("flows/delivery/sent_log.py", "cluster"),
    ("flows/delivery/sent_log.py", "month"),
}


def _schema_keys() -> set[str]:
    """Every key metrics.json's JSON Schema names (a figure's, a row's, a block's)."""
    keys: set[str] = set()
    pending: list = [json.loads((REPO_ROOT / "docs" / "metrics.schema.json").read_text())]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            keys |= set(node.get("properties", {})) if isinstance(node.get("properties"), dict) else set()
            pending += node.values()
        elif isinstance(node, list):
            pending += node
    return keys


def _string_key_reads(path, keys: set[str]) -> list[tuple[int, str]]:
    """Each `x["k"]` read and `x.get("k")` call in `path` whose key is one of `keys`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            key = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        if isinstance(key, str) and key in keys:
            found.append((node.lineno, key))
    return found


def test_no_output_reads_a_figure_by_string_key() -> None:
    """The outputs take the typed document (flows/figures/document.py, made or read by
    flows/figures/read.py) and read each figure as an attribute: no `["key"]` or `.get("key")` of
    a key metrics.json names, outside the model (NOT_FIGURE_READS: the run's own records)."""
    keys = _schema_keys()
    reads = [
        f"{relative}:{line}: {key}"
        for package in OUTPUT_PACKAGES
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        for line, key in _string_key_reads(path, keys)
        if ((relative := str(path.relative_to(REPO_ROOT))), key) not in NOT_FIGURE_READS
    ]
    assert reads == []
