"""DCGM health checks and diagnostics, saved one JSON file per run, as a job epilog does:
`dcgmi health -c -j` (the health watches) and `dcgmi diag -r <level> -j` (the active diagnostic).

Layout: `<dir>/<node>/<YYYYmmddTHHMMSSZ>.json` (the node from the folder, the UTC time of the
check from the file name). The JSON is dcgmi's: `{"header": ["Health Monitor Report"], "body":
{"Overall Health": {"value": ...}, "GPU": {"children": {"<id>": {"value": ..., "children":
{"Errors": {"children": {"<system>": {"value": "Warning|Failure", "overflow": [message lines]}}}}}}}}}`.
Each system that is not healthy becomes one health check. A diagnostic's JSON is `{"DCGM GPU
Diagnostic": {"test_categories": [{"category": ..., "tests": [{"name": "GPU Memory", "results":
[{"gpu_id" (or "gpu_ids"): "0", "status": "Pass|Fail|Warn|Skip" (any case), "warnings": [...],
"info": [...]}]}]}]}}`; each failed or warning result becomes a check named `diag <test>` with
the health report's words for its status (Failure, Warning), so one set of taxonomy rules reads
both. A file that is neither is an error naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flows.sources.errors import InputFormatError
from flows.sources.quarantine import Quarantine
from flows.sources.records import HealthCheck


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
    except json.JSONDecodeError as exc:
        raise InputFormatError(path, 1, "document", path.name, f"not JSON: {exc.msg}") from None
    if isinstance(report, dict) and "DCGM GPU Diagnostic" in report:
        yield from _diag_checks(report["DCGM GPU Diagnostic"], path, ts)
        return
    try:
        body = report["body"]
        overall = body["Overall Health"]["value"]
    except (KeyError, TypeError) as exc:
        raise InputFormatError(path, 1, "document", path.name, f"not a dcgmi health report or diag: {exc}") from None
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


DIAG_STATUS = {"fail": "Failure", "warn": "Warning"}


def _diag_checks(diag: dict, path: Path, ts: datetime) -> Iterator[HealthCheck]:
    try:
        tests = [test for category in diag.get("test_categories", []) for test in category["tests"]]
        results = [(test["name"], result) for test in tests for result in test.get("results", [])]
    except (KeyError, TypeError) as exc:
        raise InputFormatError(path, 1, "test_categories", path.name, f"not a dcgmi diag result: {exc}") from None
    for name, result in results:
        status = DIAG_STATUS.get(str(result.get("status", "")).lower())
        if status is None:  # Pass, Skip
            continue
        gpu = result.get("gpu_id", result.get("gpu_ids", "all"))
        notes = [w.get("warning", "") if isinstance(w, dict) else str(w) for w in result.get("warnings", [])]
        yield HealthCheck(
            node=path.parent.name,
            ts=ts,
            source="dcgm",
            check=f"diag {name}",
            status=status,
            message=f"GPU {gpu}: " + " ".join(notes + [str(i) for i in result.get("info", [])]),
            source_file=f"{path.parent.name}/{path.name}",
            source_line=1,
        )
