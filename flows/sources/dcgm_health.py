"""DCGM health checks: `dcgmi health -c -j` output saved one file per check, as a job epilog does.

Layout: `<dir>/<node>/<YYYYmmddTHHMMSSZ>.json` (the node from the folder, the UTC time of the
check from the file name). The JSON is dcgmi's: `{"header": ["Health Monitor Report"], "body":
{"Overall Health": {"value": ...}, "GPU": {"children": {"<id>": {"value": ..., "children":
{"Errors": {"children": {"<system>": {"value": "Warning|Failure", "overflow": [message lines]}}}}}}}}}`.
Each system that is not healthy becomes one health check; a file that is not such a report is an
error naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flows.sources import HealthCheck, InputFormatError, Quarantine


@dataclass
class DcgmReadStats:
    files: int = 0
    healthy_files: int = 0
    incidents: int = 0


def read_dcgm_health_dir(
    root: Path, stats: DcgmReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[HealthCheck]:
    stats = stats if stats is not None else DcgmReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    for path in sorted(root.glob("*/*.json")):
        stats.files += 1
        try:
            found = list(_read_one(path))
        except InputFormatError as error:
            quarantine.reject(error)
            continue
        stats.incidents += len(found)
        stats.healthy_files += not found
        yield from found


def _read_one(path: Path) -> Iterator[HealthCheck]:
    try:
        ts = datetime.strptime(path.stem, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise InputFormatError(path, 1, "file name", path.name, "expected <YYYYmmddTHHMMSSZ>.json") from None
    try:
        report = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        body = report["body"]
        overall = body["Overall Health"]["value"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputFormatError(path, 1, "document", path.name, f"not a dcgmi health report: {exc}") from None
    if overall == "Healthy":
        return
    for gpu, entity in body.get("GPU", {}).get("children", {}).items():
        systems = entity.get("children", {}).get("Errors", {}).get("children", {})
        for system, result in systems.items():
            yield HealthCheck(
                node=path.parent.name,
                ts=ts,
                source="dcgm",
                check=system,
                status=result.get("value", ""),
                message=f"GPU {gpu}: " + " ".join(result.get("overflow", [])),
                source_file=f"{path.parent.name}/{path.name}",
                source_line=1,
            )
