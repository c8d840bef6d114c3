"""Node events as `sacctmgr -P show event` prints them (DOWN, DOWN*, DRAIN with their Reason).

The `Cluster Registered TRES` row (Event=Cluster, empty NodeName) is not a node event and is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from flows.sources import InputFormatError, parse_local_timestamp

REQUIRED_FIELDS = ("Event", "NodeName", "Reason", "TimeStart", "TimeEnd", "State", "User")


@dataclass
class NodeEvent:
    node: str
    started_at: datetime
    ended_at: datetime | None
    state: str
    reason: str
    user: str
    source_line: int


def read_sacctmgr_events(path: Path, tz: ZoneInfo) -> Iterator[NodeEvent]:
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        header_line = handle.readline().rstrip("\r\n")
        header = header_line.split("|")
        missing = [f for f in REQUIRED_FIELDS if f not in header]
        if missing:
            raise InputFormatError(path, 1, "header", header_line, f"missing columns {', '.join(missing)}")
        index = {name: i for i, name in enumerate(header)}
        for line_no, line in enumerate(handle, start=2):
            line = line.rstrip("\r\n")
            if not line:
                continue
            values = line.split("|")
            if len(values) != len(header):
                raise InputFormatError(
                    path, line_no, "row", line, f"has {len(values)} fields, the header has {len(header)}"
                )
            row = {name: values[i] for name, i in index.items()}
            if row["Event"] == "Cluster" or not row["NodeName"]:
                continue
            try:
                nodes = list(NodeSet(row["NodeName"]))
            except NodeSetParseError as exc:
                raise InputFormatError(path, line_no, "NodeName", row["NodeName"], str(exc)) from None
            times = {}
            for name in ("TimeStart", "TimeEnd"):
                try:
                    times[name] = parse_local_timestamp(row[name], tz)
                except ValueError as exc:
                    raise InputFormatError(path, line_no, name, row[name], str(exc)) from None
            if times["TimeStart"] is None:
                raise InputFormatError(path, line_no, "TimeStart", row["TimeStart"], "a node event needs a start")
            for node in nodes:
                yield NodeEvent(
                    node=node,
                    started_at=times["TimeStart"],
                    ended_at=times["TimeEnd"],
                    state=row["State"],
                    reason=row["Reason"],
                    user=row["User"],
                    source_line=line_no,
                )
