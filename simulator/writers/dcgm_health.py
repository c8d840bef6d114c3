"""`dcgmi health -c -j` reports, one JSON file per check as a job epilog saves them: dcgm/<node>/<time>.json."""

from __future__ import annotations

import json
from pathlib import Path

from simulator.params import Clock

MAX_SIZE_OF_HEALTH_INFO = 54  # dcgmi splits longer messages into overflow lines of this width


def dcgm_health_json(incidents: dict[int, list[tuple[str, str, str]]]) -> dict:
    """`dcgmi health -c -j` output for {gpu: [(system, health, message)]} (layout of dcgmi's Health.cpp)."""
    rank = {"Healthy": 0, "Warning": 1, "Failure": 2}
    overall = "Healthy"
    gpus = {}
    for gpu, found in sorted(incidents.items()):
        errors = {}
        entity = "Healthy"
        for system, health, message in found:
            errors[system] = {"value": health, "overflow": _dcgm_overflow(message)}
            entity = max(entity, health, key=rank.get)
        gpus[str(gpu)] = {"value": entity, "children": {"Errors": {"children": errors}}}
        overall = max(overall, entity, key=rank.get)
    body: dict = {"Overall Health": {"value": overall}}
    if gpus:
        body["GPU"] = {"children": gpus}
    return {"header": ["Health Monitor Report"], "body": body}


def _dcgm_overflow(message: str) -> list[str]:
    """dcgmi breaks a message into lines of at most 54 characters at word boundaries."""
    lines, current = [], ""
    for word in message.split():
        if current and len(current) + 1 + len(word) > MAX_SIZE_OF_HEALTH_INFO:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    return [*lines, current] if current else lines


def write_dcgm_checks(
    out_dir: Path, checks: list[tuple[int, int, dict]], node_names: list[str], clock: Clock, lo: int, hi: int
) -> None:
    """Write the checks made in [lo, hi) under out_dir/dcgm/<node>/<YYYYmmddTHHMMSSZ>.json."""
    root = out_dir / "dcgm"
    root.mkdir(exist_ok=True)
    made: set[int] = set()  # nodes whose directory exists
    for t, node, report in checks:
        if lo <= t < hi:
            directory = root / node_names[node]
            if node not in made:
                directory.mkdir(parents=True, exist_ok=True)
                made.add(node)
            text = json.dumps(report, indent=3, sort_keys=True, separators=(",", " : ")) + "\n"
            with open(directory / f"{clock.datetime(t).strftime('%Y%m%dT%H%M%SZ')}.json", "w") as out:
                out.write(text)
