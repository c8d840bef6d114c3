"""A landed month's manifest.json, typed: what landed from each input (its file, records, reader
statistics, hash, DST counts, quarantined rows), when the records were dumped (`as_of`, parsed once
here) and when they landed. flows/ingest/land.py writes it; a run reads it once (`read_manifest`)
and passes the Manifest to the stages that need it; metrics.json's `inputs` are its `sources`."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, StrictInt, ValidationError

from flows.core.months import Month, observed_end


class LandedMonthError(RuntimeError):
    """A landed month on disk that cannot be used: its manifest or a table is missing or unreadable."""


class LandedInput(BaseModel):
    """What landed from one input. Besides the keys declared here it carries its reader's statistics
    (the reader's stats dataclass, flows/ingest/sources/, flattened: counts, and the job records'
    `conflicts`, the first conflicting records described), which differ from reader to reader."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, bool | StrictInt | None | list[str]]

    file: str
    records: StrictInt
    format: str | None = None  # the job records' only: the reader that read them
    sha256: str
    quarantined: StrictInt
    dst_ambiguous_times: StrictInt
    dst_nonexistent_times: StrictInt
    # a node source's first and last record landed (naive UTC; flows/ingest/coverage.py)
    first_record: datetime | None = None
    last_record: datetime | None = None


class AsOf(BaseModel):
    """When the month's records were dumped (naive UTC) and how that is known."""

    model_config = ConfigDict(extra="forbid")

    time: datetime
    basis: Literal["given", "pull", "records"] | None = None


class NodeNameCheck(BaseModel):
    """Of one source that names nodes (not the scheduler's own): how many it names, how many of them
    no job record or Slurm node event names, and that in words with its likely cause (None: none)."""

    model_config = ConfigDict(extra="forbid")

    source: str
    nodes: StrictInt
    not_in_job_records: StrictInt
    finding: str | None


class Manifest(BaseModel):
    """A landed month's manifest."""

    model_config = ConfigDict(extra="forbid")

    cluster: str | None = None
    month: str | None = None
    sources: dict[str, LandedInput]
    quarantine_sample: list[str]
    landed_at: str | None = None  # as written (ISO 8601, seconds); shown as it is
    as_of: AsOf
    # where the job records begin to observe the month (naive UTC; flows/core/months.py
    # observed_start); None in a month landed before it was recorded: from the month's start
    observed_start: datetime | None = None
    no_jobs_declared: bool = False  # --no-jobs-ran, and no record in the month
    node_names: list[NodeNameCheck] = []  # data quality reads them (expectations/node_names.json)

    def inputs(self) -> dict[str, dict]:
        """The sources as metrics.json's `inputs` gives them: each as landed, its statistics included."""
        return {kind: entry.model_dump(mode="json", exclude_unset=True) for kind, entry in self.sources.items()}

    def observed(self, month: Month) -> tuple[datetime, datetime]:
        """The window of `month` its job records observe (naive UTC): from where they begin
        (`observed_start`) to the month's end or the dump, whichever came first."""
        end = observed_end(month, self.as_of.time)
        return min(self.observed_start or month.start.replace(tzinfo=None), end), end


def write_manifest(landed_dir: Path, manifest: dict) -> None:
    """Write the landed month's manifest.json, validated: a key the Manifest does not declare fails the landing."""
    written = Manifest.model_validate(manifest).model_dump(mode="json", exclude_unset=True)
    (landed_dir / "manifest.json").write_text(json.dumps(written, indent=1))


def read_manifest(landed_dir: Path) -> Manifest:
    """A landed month's manifest; a LandedMonthError naming the file, line and field if it is damaged."""
    path = landed_dir / "manifest.json"
    again = "run the month again to land it again"
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise LandedMonthError(f"{path} does not exist: the month's landing is incomplete; {again}") from None
    except json.JSONDecodeError as error:
        raise LandedMonthError(
            f"{path}:{error.lineno}: not JSON ({error.msg} at column {error.colno}); {again}"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise LandedMonthError(f"{path}: cannot be read ({error}); {again}") from None
    if not isinstance(manifest, dict):
        raise LandedMonthError(f"{path}: not a JSON object; {again}")
    as_of = manifest.get("as_of")
    fields = {"sources": "sources" in manifest, "as_of.time": isinstance(as_of, dict) and "time" in as_of}
    fields["quarantine_sample"] = "quarantine_sample" in manifest
    if missing := [name for name, present in fields.items() if not present]:
        raise LandedMonthError(f"{path}: field {missing[0]} is missing; {again}")
    try:
        return Manifest.model_validate(manifest)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(map(str, first["loc"]))
        raise LandedMonthError(f"{path}: field {field}: {first['msg']}; {again}") from None
