"""metrics.json is typed (flows/figures/document.py): the committed JSON Schema (and the other files
flows/figures/derived.py derives) is the one the classes and declarations give, the saved month's
and study's metrics.json are valid documents written byte for byte from the model, and a figure the classes do not declare fails the write. Every metrics.json the suite writes
is validated by its writer (flows/report/render.py write_report, study_report.py write_study)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError
from saved_month import SAVED_MONTH, saved_metrics

from flows.figures.derived import ROOT, derived_files, metrics_schema
from flows.figures.document import MonthDocument, StudyDocument
from flows.report.render import write_report

GOLDEN = SAVED_MONTH.parent  # the month's and the study's report directories (tests/test_study.py writes them)
SAVED = {"month": MonthDocument, "study": StudyDocument}


@pytest.mark.parametrize(("path", "text"), derived_files().items(), ids=lambda p: getattr(p, "name", ""))
def test_the_committed_derived_files_are_those_the_declarations_give(path: Path, text: str) -> None:
    """The schema, metrics.md's table of the figures and dbt's exposure (flows/figures/derived.py)."""
    assert path.read_text() == text, (
        f"{path.relative_to(ROOT)} is stale: run `.venv/bin/python -m flows.figures.derived` and commit it"
    )


@pytest.mark.parametrize("name", sorted(SAVED))
def test_a_saved_metrics_json_is_a_valid_document_written_from_its_model(name: str) -> None:
    """Valid against the classes and against the JSON Schema, and the model writes the file's bytes."""
    path = GOLDEN / name / "metrics.json"
    figures = json.loads(path.read_text())
    jsonschema.validate(figures, metrics_schema())
    document = SAVED[name].model_validate(figures)
    written = json.dumps(document.model_dump(mode="json", exclude_unset=True), indent=1, sort_keys=True) + "\n"
    assert written == path.read_text()


def test_a_figure_no_class_declares_fails_the_write(tmp_path: Path) -> None:
    metrics = saved_metrics()
    metrics["totals"]["repair_hours"] = 1.5  # a figure added without its class
    with pytest.raises(ValidationError, match="totals.repair_hours"):
        write_report(tmp_path, metrics)
    assert not list(tmp_path.iterdir())  # nothing written
    metrics = saved_metrics()
    metrics["node_failure_rate"]["all"]["value"] = "2.1"  # a number written as text
    with pytest.raises(ValidationError, match="node_failure_rate.all.value"):
        MonthDocument.model_validate(metrics)


def test_the_written_metrics_json_is_the_saved_one(tmp_path: Path, monkeypatch) -> None:
    """Rendered again from the saved file, the writer writes the same bytes (the summary made again)."""
    # metrics.json is written from the validated document, not from the charts (the same bytes
    # with them or without): not drawing them saves ~8 s
    monkeypatch.setattr("flows.report.render.render_charts", lambda metrics: {})
    write_report(tmp_path, saved_metrics())
    assert (tmp_path / "metrics.json").read_text() == (SAVED_MONTH / "metrics.json").read_text()
