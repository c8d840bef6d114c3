"""The documents (flows/figures/document.py): a month's or a study's figures as computed, validated
once (`month_document`, `study_document`), and the one reader of a metrics.json (`read_document`):
its JSON parsed, a document of an earlier schema version upgraded once into the current model,
validated.

An earlier version is read through the keys that moved since (flows/figures/moved_keys.py `moved`:
version 5 says each number of a month's causes once). After the moves a document lacks only the
figures later versions added (each declaration's `since`: version 4's time_to_failure and
crash_loops to a version-3 document); each is filled in as not measured (flows/figures/measured.py
`write_unmeasured`), its reason that the file was written before the figure. A version-2 document
also lacks numbers version 3 added (a month's `totals.months_built`, a cause's `node_days`, ...),
which nothing can recompute from the file: it is refused (`EarlierSchemaError`), naming the command
that builds it again; its caller decides what to do without it.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from flows.figures.document import SCHEMA_VERSION, MonthDocument, StudyDocument
from flows.figures.measured import write_unmeasured
from flows.figures.moved_keys import MOVED_IN, MoveError, moved
from flows.figures.registry import FIGURES
from flows.figures.summary import summarise

Document = MonthDocument | StudyDocument


class DocumentError(ValueError):
    """A metrics.json that cannot be read as a document: not there, not JSON, or not of any schema."""


class EarlierSchemaError(DocumentError):
    """A metrics.json of a schema version whose figures cannot be read as the current ones: the
    month (or study) has to be built again."""


def metrics_json(path: Path) -> dict:
    """A metrics.json's JSON object, as written (DocumentError: unreadable, not JSON or no object)."""
    try:
        metrics = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise DocumentError(f"{path}: not a readable metrics.json ({type(error).__name__}: {error})") from None
    if not isinstance(metrics, dict):
        raise DocumentError(f"{path}: not a metrics.json (it holds no JSON object)")
    return metrics


def version_of(metrics: dict) -> object:
    """The schema version a metrics.json's JSON says it was written by (None: it says none)."""
    return metrics.get("schema_version")


def month_document(metrics: dict) -> MonthDocument:
    """The month's document: its full figures with their `summary`, validated (a figure no class
    declares, a missing one or one of the wrong type fails here, before anything is drawn or written)."""
    # As metrics.json stores them (sorted keys, JSON types): a report rendered again from the saved
    # file is byte-identical to the first.
    metrics = json.loads(json.dumps(metrics, sort_keys=True, default=str))
    metrics["summary"] = summarise(metrics)
    return MonthDocument.model_validate(metrics)


def study_document(study: dict) -> StudyDocument:
    """The study's document: its figures validated (a figure no class declares, a missing one or one
    of the wrong type fails here, before anything is drawn or written)."""
    # as metrics.json stores it: a study rendered again from the saved file is byte-identical
    return StudyDocument.model_validate(json.loads(json.dumps(study, sort_keys=True, default=str)))


def read_document(path: Path) -> Document:
    """The document a metrics.json holds, a month's or a study's, in the current schema: one of an
    earlier version upgraded (`upgraded`). DocumentError names the file and what is wrong."""
    return document_of(metrics_json(path), path)


def document_of(metrics: dict, path: Path) -> Document:
    """`metrics` (the JSON of the metrics.json at `path`) as its document, upgraded to the current schema."""
    model: type[BaseModel] = StudyDocument if "clusters" in metrics else MonthDocument
    try:
        return model.model_validate(upgraded(metrics, path))  # type: ignore[return-value]
    except ValidationError as error:
        raise DocumentError(f"{path}: not a valid {model.__name__} ({_first_error(error)})") from None


def upgraded(metrics: dict, path: Path) -> dict:
    """`metrics` in the current schema: as it is when of the current version; of version 3 with the
    keys moved since and the figures version 4 added written as not measured; of version 2 or none
    refused (EarlierSchemaError, DocumentError)."""
    version = version_of(metrics)
    if version == SCHEMA_VERSION:
        return metrics
    if not isinstance(version, int) or isinstance(version, bool) or version > SCHEMA_VERSION:
        raise DocumentError(f"{path}: schema_version {version!r} is none this tool reads (it writes {SCHEMA_VERSION})")
    if version < MOVED_IN:
        raise EarlierSchemaError(
            f"{path}: metrics.json of schema version {version}, which lacks numbers schema version {MOVED_IN} "
            f"added (they cannot be computed from the file); build it again: {_rebuild_command(metrics)}"
        )
    try:
        current = {**moved(metrics), "schema_version": SCHEMA_VERSION}
    except MoveError as error:
        raise DocumentError(f"{path}: {error}") from None
    if "clusters" in current:
        return {
            **current,
            "clusters": {name: _with_added(c, version) for name, c in current["clusters"].items()},
        }
    return _with_added(current, version)


def _with_added(figures: dict, version: int) -> dict:
    """A period's figures (of a document of schema `version`) with each figure a later version added
    (its declaration's `since`) that they lack, not measured: written before the figure."""
    added = [figure for figure in FIGURES if figure.since > version and figure.key not in figures]
    missing = {figure.key: _unmeasured_shape(figure.type) for figure in added}
    why = f"written by schema version {version}, before this figure"
    if not missing:
        return figures
    written = write_unmeasured(missing, {key: why for key in missing})
    gaps = {**figures.get("not_measured", {}), **written.pop("not_measured")}
    return {**figures, **written, "not_measured": gaps}


def _unmeasured_shape(model: type[BaseModel]) -> dict:
    """A figure's keys as its class declares them (write_unmeasured nulls them): a block nested,
    a list empty, a value null (a parameter too: the file does not say what it would have been)."""
    shape: dict = {}
    for name, field in model.model_fields.items():
        kind = field.annotation
        if name == "not_measured":
            continue
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            shape[name] = _unmeasured_shape(kind)
        elif getattr(kind, "__origin__", None) is list:
            shape[name] = []
        else:
            shape[name] = None
    return shape


def _rebuild_command(metrics: dict) -> str:
    """The command that builds the document's month (or study) again: its own `reproduce` command."""
    command = (metrics.get("reproduce") or {}).get("command")
    if command:
        return command
    month = metrics.get("month", "YYYY-MM")
    return f"reliability-report run --month {month} --config <the cluster's config>"


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = error.error_count() - 1
    return f"{where}: {first['msg']}" + (f"; and {more} more" if more else "")
