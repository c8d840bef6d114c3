"""Meta GCM health-check results (facebookresearch/gcm `health_checks ... --sink file|stdout`).

Every check GCM runs emits one record: `node`, `health_check` (its name, e.g. "xid errors",
"nvidia smi ecc_uncorrected", "check ibstat"), `result` (the Nagios-style exit code: 0 OK,
1 WARN, 2 CRITICAL, 3 UNKNOWN), `_msg`, `start_time` / `end_time` (epoch seconds, UTC), `job_id`,
`type` (prolog, epilog, nagios, app). Both sinks' layouts are read, one JSON document per line:
- stdout sink: a list of records, `[{"node": "gpu1", "health_check": "xid errors", "result": 2, ...}]`
- file sink: the record split by value type, `{"int": {"result": 2, "job_id": 0}, "double":
  {"start_time": ..., "end_time": ...}, "normal": {"node": ..., "health_check": ..., "_msg": ...}}`
The source is a directory: every file under it (rotated logs `health.log.1`, per-node folders,
`.gz`) is read. OK results are counted and skipped; every other result is one health check. A
line that is not such a record goes to the quarantine, naming the file, line and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flows.sources.errors import InputFormatError
from flows.sources.files import open_text
from flows.sources.quarantine import Quarantine
from flows.sources.records import HealthCheck

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
    stats = stats if stats is not None else GcmReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        stats.files += 1
        relative = str(path.relative_to(root))
        with open_text(path) as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    records = _records(line, path, line_no)
                    for record in records:
                        stats.records += 1
                        check = _check(record, path, line_no, relative)
                        if check is None:
                            stats.ok_results += 1
                            continue
                        stats.incidents += 1
                        yield check
                except InputFormatError as error:
                    quarantine.reject(error)


def _records(line: str, path: Path, line_no: int) -> list[dict]:
    try:
        document = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputFormatError(path, line_no, "record", line.strip(), f"not JSON: {exc.msg}") from None
    documents = document if isinstance(document, list) else [document]
    records = []
    for item in documents:
        if not isinstance(item, dict):
            raise InputFormatError(path, line_no, "record", line.strip(), "expected a GCM health-check record")
        if "normal" in item:  # file sink: values grouped by type
            item = {key: value for group in ("normal", "int", "double") for key, value in item.get(group, {}).items()}
        records.append(item)
    return records


def _check(record: dict, path: Path, line_no: int, source_file: str) -> HealthCheck | None:
    """The record as a health check; None for an OK result."""

    def need(field: str):
        value = record.get(field)
        if value in (None, ""):
            raise InputFormatError(path, line_no, field, json.dumps(record)[:80], "missing from the GCM record")
        return value

    result = need("result")
    if result not in RESULTS:
        raise InputFormatError(path, line_no, "result", str(result), "expected 0 (OK), 1, 2 or 3")
    node, name = str(need("node")), str(need("health_check"))
    if result == 0:
        return None
    when = record.get("end_time") or need("start_time")
    try:
        ts = datetime.fromtimestamp(float(when), UTC)
    except (TypeError, ValueError, OverflowError):
        raise InputFormatError(path, line_no, "end_time", str(when), "expected epoch seconds") from None
    return HealthCheck(
        node=node,
        ts=ts,
        source="gcm",
        check=name,
        status=RESULTS[result],
        message=str(record.get("_msg") or "").strip(),
        source_file=source_file,
        source_line=line_no,
    )
