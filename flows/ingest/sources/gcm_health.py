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
many a line holds. A line that is not such records goes to the quarantine whole, naming the file,
line and field: a field of the wrong type (types are strict: `true` is no result code nor a time,
`2.0` no result code), a node that is a list or not a node name, a time outside the clock's window
of valid times, JSON beyond the bounds of `json_input` (deep nesting, a huge integer, NaN), a line
longer than any field. A file that cannot be read to its end is quarantined from there on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from flows.ingest.sources.clock import UTC_ZONE, LocalClock, TimeZone, as_clock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import LF_ONLY, open_text
from flows.ingest.sources.health_files import READ_ERRORS, invalid, unreadable
from flows.ingest.sources.json_input import JsonRefused, load_json
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits, too_long
from flows.ingest.sources.node_names import node_name
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import HealthCheck

RESULTS = {0: "OK", 1: "WARNING", 2: "CRITICAL", 3: "UNKNOWN"}


@dataclass
class GcmReadStats:
    """What became of each line read: `lines` = `blank_lines` + `record_lines` + lines quarantined;
    the records of the record lines: `records` = `incidents` (landed) + `ok_results`.

    Skip counts: `blank_lines`, `ok_results`. The quarantine also holds one entry per file that
    cannot be read to its end (`files_quarantined`), which is not a line read.
    """

    files: int = 0
    lines: int = 0
    blank_lines: int = 0  # skip count
    record_lines: int = 0  # lines read whole: their records landed or skipped as OK
    records: int = 0
    ok_results: int = 0  # skip count: records of an OK result
    incidents: int = 0  # records landed as health checks
    files_quarantined: int = 0  # quarantine entries that are a file, not a line


def read_gcm_health_dir(
    root: Path,
    tz: TimeZone = UTC_ZONE,
    limits: InputLimits = DEFAULT_LIMITS,
    *,
    stats: GcmReadStats | None = None,
    quarantine: Quarantine | None = None,
) -> Iterator[HealthCheck]:
    """The non-OK results of every file under `root`, each line's records all or none."""
    stats = stats if stats is not None else GcmReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    clock = as_clock(tz)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        stats.files += 1
        relative = str(path.relative_to(root))
        line_no = 0
        try:
            with open_text(path, LF_ONLY) as handle:
                for line_no, line in enumerate(handle.lines(limits.max_field_chars), start=1):
                    stats.lines += 1
                    if not line.strip():
                        stats.blank_lines += 1
                        continue
                    try:
                        records = _records(line, path, line_no, limits)
                        checks = [_check(record, path, line_no, relative, clock) for record in records]
                    except InputFormatError as error:  # the line's records land together or not at all
                        quarantine.reject(error)
                        continue
                    stats.record_lines += 1
                    stats.records += len(checks)
                    stats.ok_results += checks.count(None)
                    stats.incidents += len(checks) - checks.count(None)
                    yield from (check for check in checks if check is not None)
        except READ_ERRORS as exc:
            stats.files_quarantined += 1
            quarantine.reject(unreadable(path, line_no + 1, exc))


class _Record(BaseModel):
    """One GCM health-check record (the fields read; others are allowed)."""

    # strict: a bool is no number, a float no result code, a number no text
    model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)
    node: StrictStr
    health_check: StrictStr = Field(min_length=1)
    result: StrictInt = Field(ge=0, le=3)  # a key of RESULTS
    message: StrictStr | None = Field(default=None, alias="_msg")
    start_time: float | None = None  # epoch seconds (strict: a number, never a bool or text)
    end_time: float | None = None


def _records(line: str, path: Path, line_no: int, limits: InputLimits) -> list[_Record]:
    if why := too_long(line, limits):
        raise InputFormatError(path, line_no, "record", line[:200], why)
    try:
        document = load_json(line, limits)
    except JsonRefused as exc:
        raise InputFormatError(path, line_no, "record", line.strip()[:200], str(exc)) from None
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
            raise invalid(path, line_no, exc, line.strip()[:200], "a GCM health-check record", "record") from None
    return records


def _check(record: _Record, path: Path, line_no: int, source_file: str, clock: LocalClock) -> HealthCheck | None:
    """The record as a health check; None for an OK result."""
    node = node_name(record.node, path, line_no)
    if record.result == 0:
        return None
    field = "end_time" if record.end_time is not None else "start_time"
    when = record.end_time if record.end_time is not None else record.start_time
    if when is None:
        raise InputFormatError(path, line_no, "start_time", record.health_check, "missing from the GCM record")
    try:
        ts = datetime.fromtimestamp(when, UTC)
    except (ValueError, OverflowError, OSError):
        raise InputFormatError(path, line_no, field, str(when), "expected epoch seconds") from None
    if (why := clock.implausible(ts)) is not None:
        raise InputFormatError(path, line_no, field, str(when), why)
    return HealthCheck(
        node=node,
        ts=ts,
        check=record.health_check,
        status=RESULTS[record.result],
        message=(record.message or "").strip(),
        source_file=source_file,
        source_line=line_no,
    )
