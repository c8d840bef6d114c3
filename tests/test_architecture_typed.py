"""Templates receive the typed figures (issue 43): the reports validate their figures once into
the documents of flows/figures/document.py and hand the templates those objects, which the
templates read as attributes, never with a dict's methods (a rule of tests/test_architecture.py's
kind, computed from the templates and the document classes)."""

from __future__ import annotations

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
    monkeypatch.setattr(study_report, "render_study_charts", lambda figures: {})
    golden = REPO_ROOT / "tests" / "data" / "golden" / "reports"
    month = render.build_report(json.loads((golden / "month" / "metrics.json").read_text()))
    study = study_report.render_study(json.loads((golden / "study" / "metrics.json").read_text()))
    assert [type(page.get("metrics", page.get("study"))) for page in pages] == [MonthDocument] * 3 + [StudyDocument] * 3
    assert all(page.get("metrics", page.get("study")) in (month.document, study.document) for page in pages)
    assert all(isinstance(f, PeriodFigures) for page in pages for _, f in page["period_clusters"])
