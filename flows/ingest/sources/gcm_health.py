"""Meta GCM health-check results (facebookresearch/gcm `health_checks ... --sink file|stdout`).

Every check GCM runs emits one record: `node`, `health_check` (its name, e.g. "xid errors",
"nvidia smi ecc_uncorrected", "check ibstat"), `result` (the Nagios-style exit code: 0 OK,
1 WARN, 2 CRITICAL, 3 UNKNOWN), `_msg`, `start_time` / `end_time` (epoch seconds, UTC), `job_id`,
`type` (prolog, epilog, nagios, app). Both sinks' layouts are read, one JSON document per line:
- stdout sink: a list of records, `[{"node": "gpu1", "health_check": "xid errors", "result": 2, ...}]`
- file sink: the record split by value type, `{"int": {"result": 2, "job_id": 0}, "double":
  {"start_time": ..., "end_time": ...}, "normal": {"node": ..., "health_check": ..., "_msg": ...}}`
The source is a directory: every file under it (rotated logs `health.log.1`, per-node folders,
`.gz`) is read. OK results are counted and skipped; every other result is one health check, however
many a line holds. A line that is not such records (a field of the wrong type, a node that is a
list or not a node name) goes to the quarantine whole, naming the file, line and field; a file
that cannot be read to its end is quarantined from there on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.health_files import READ_ERRORS, invalid, unreadable
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck

RESULTS = {0: "OK", 1: "WARNING", 2: "CRITICAL", 3: "UNKNOWN"}


@dataclass
class GcmReadStats:
    files: int = 0
    records: int = 0
    ok_results: int = 0
    incidents: int = 0


def read_gcm_health_dir(
    root: Path, stats: GcmReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[HealthCheck]:
    """The non-OK results of every file under `root`, each line's records all or none."""
    stats = stats if stats is not None else GcmReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        stats.files += 1
        relative = str(path.relative_to(root))
        line_no = 0
        try:
            with open_text(path) as handle:
                for line_no, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        checks = [_check(record, path, line_no, relative) for record in _records(line, path, line_no)]
                    except InputFormatError as error:  # the line's records land together or not at all
                        quarantine.reject(error)
                        continue
                    stats.records += len(checks)
                    stats.ok_results += checks.count(None)
                    stats.incidents += len(checks) - checks.count(None)
                    yield from (check for check in checks if check is not None)
        except READ_ERRORS as exc:
            quarantine.reject(unreadable(path, line_no + 1, exc))


class _Record(BaseModel):
    """One GCM health-check record (the fields read; others are allowed)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    node: StrictStr
    health_check: StrictStr = Field(min_length=1)
    result: Literal[0, 1, 2, 3]
    message: str | None = Field(default=None, alias="_msg")
    start_time: float | None = None
    end_time: float | None = None


def _records(line: str, path: Path, line_no: int) -> list[_Record]:
    try:
        document = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputFormatError(path, line_no, "record", line.strip(), f"not JSON: {exc.msg}") from None
    records = []
    for item in document if isinstance(document, list) else [document]:
        if isinstance(item, dict) and "normal" in item:  # file sink: values grouped by type
            groups = [item.get(group, {}) for group in ("normal", "int", "double")]
            bad = [
                name
                for name, group in zip(("normal", "int", "double"), groups, strict=True)
                if not isinstance(group, dict)
            ]
            if bad:
                raise InputFormatError(path, line_no, bad[0], line.strip(), "a file-sink group is an object of values")
            item = {key: value for group in groups for key, value in group.items()}
        try:
            records.append(_Record.model_validate(item))
        except ValidationError as exc:
            raise invalid(path, line_no, exc, line.strip(), "a GCM health-check record", "record") from None
    return records


def _check(record: _Record, path: Path, line_no: int, source_file: str) -> HealthCheck | None:
    """The record as a health check; None for an OK result."""
    node = node_name(record.node, path, line_no)
    if record.result == 0:
        return None
    when = record.end_time if record.end_time is not None else record.start_time
    if when is None:
        raise InputFormatError(path, line_no, "start_time", record.health_check, "missing from the GCM record")
    try:
        ts = datetime.fromtimestamp(when, UTC)
    except (ValueError, OverflowError, OSError):
        raise InputFormatError(path, line_no, "end_time", str(when), "expected epoch seconds") from None
    return HealthCheck(
        node=node,
        ts=ts,
        check=record.health_check,
        status=RESULTS[record.result],
        message=(record.message or "").strip(),
        source_file=source_file,
        source_line=line_no,
    )
