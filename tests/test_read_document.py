"""The one reader of metrics.json (flows/figures/read.py): a document of the current schema as
written, one of version 3 upgraded (the figures version 4 added not measured, saying why), one of
version 2 refused with the command that builds it again, a damaged file refused naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flows.figures.document import SCHEMA_VERSION, MonthDocument, StudyDocument, figures_of
from flows.figures.moved_keys import ADDED_IN_4, moved
from flows.figures.read import DocumentError, EarlierSchemaError, read_document

GOLDEN = Path(__file__).parent / "data" / "golden"
MODELS = {"month": MonthDocument, "study": StudyDocument}
ADDED = sorted(path for path in ADDED_IN_4 if "." not in path)  # a month's keys; a study's clusters' alike


@pytest.mark.parametrize("kind", MODELS)
def test_a_current_document_is_read_as_written(kind):
    path = GOLDEN / "reports" / kind / "metrics.json"
    document = read_document(path)
    assert isinstance(document, MODELS[kind])
    assert figures_of(document) == json.loads(path.read_text())


@pytest.mark.parametrize("kind", MODELS)
def test_a_version_3_document_gets_the_figures_version_4_added_as_not_measured(kind):
    path = GOLDEN / "v3" / f"{kind}.metrics.json"
    written = json.loads(path.read_text())
    document = read_document(path)
    assert isinstance(document, MODELS[kind]) and document.schema_version == SCHEMA_VERSION
    figures = figures_of(document)
    periods = list(figures["clusters"].values()) if kind == "study" else [figures]
    before = list(moved(written)["clusters"].values()) if kind == "study" else [moved(written)]
    why = "written by schema version 3, before this figure"
    for period, earlier in zip(periods, before, strict=True):
        for key in ADDED:
            assert period[key]["not_measured"] == why
            assert period["not_measured"][key] == why
        # every other figure as the file holds it (after the moves)
        assert {k: v for k, v in period.items() if k not in (*ADDED, "not_measured", "schema_version")} == {
            k: v for k, v in earlier.items() if k not in ("not_measured", "schema_version")
        }
    assert figures_of(MODELS[kind].model_validate(figures)) == figures  # a valid document of the current version


@pytest.mark.parametrize("kind", MODELS)
def test_a_version_2_document_is_refused_with_the_command_that_builds_it_again(kind):
    path = GOLDEN / "v2" / f"{kind}.metrics.json"
    with pytest.raises(EarlierSchemaError) as refused:
        read_document(path)
    message = str(refused.value)
    assert str(path) in message and "schema version" in message
    assert json.loads(path.read_text())["reproduce"]["command"] in message


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: "[1, 2]",  # no object
        lambda text: text.replace(f'"schema_version": {SCHEMA_VERSION}', '"schema_version": 9'),  # none this tool reads
        lambda text: text.replace('"cluster": "rsc2"', '"cluster": 7'),  # a figure of the wrong type
    ],
)
def test_a_damaged_file_is_refused_naming_it(tmp_path, damage):
    path = tmp_path / "metrics.json"
    path.write_text(damage((GOLDEN / "reports" / "month" / "metrics.json").read_text()))
    with pytest.raises(DocumentError) as refused:
        read_document(path)
    assert str(path) in str(refused.value) and not isinstance(refused.value, EarlierSchemaError)


@pytest.mark.parametrize(
    ("kind", "damage"),
    [
        ("month", lambda m: m["failures_by_cause"][0].pop("category")),  # a row moved by its category, without one
        ("month", lambda m: m["failures_by_cause"].__setitem__(0, 7)),  # a row that is no object
        ("study", lambda s: s.__setitem__("clusters", [1])),  # clusters that are no map
        ("study", lambda s: s["summary"]["headline"].__setitem__(0, "x")),  # a headline figure that is no object
    ],
)
def test_a_damaged_document_of_an_earlier_version_is_refused_naming_it(tmp_path, kind, damage):
    """The moves of an earlier version's keys (moved_keys.moved) meet values of another shape: one
    DocumentError naming the file, never a traceback of the move."""
    document = json.loads((GOLDEN / "v4" / f"{kind}.metrics.json").read_text())
    damage(document)
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(document))
    with pytest.raises(DocumentError, match="schema version 4") as refused:
        read_document(path)
    assert str(path) in str(refused.value)


def test_a_missing_file_is_refused_naming_it(tmp_path):
    shutil.rmtree(tmp_path)
    with pytest.raises(DocumentError, match="metrics.json"):
        read_document(tmp_path / "metrics.json")
