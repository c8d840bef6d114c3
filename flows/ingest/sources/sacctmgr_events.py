"""Node events as `sacctmgr -P show event` prints them (DOWN, DOWN*, DRAIN with their Reason).

The `Cluster Registered TRES` row (Event=Cluster, empty NodeName) is not a node event and is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from flows.ingest.sources.clock import LocalClock, TimeZone, as_clock, parse_local_timestamp
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.hostlists import host_list_nodes
from flows.ingest.sources.parsable import parsable_layout, read_parsable_rows
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import NodeEvent

# `Event` is only in an explicit format list; the default layout has none, and its cluster row has no node.
REQUIRED_FIELDS = ("NodeName", "Reason", "TimeStart", "TimeEnd", "State", "User")


def read_sacctmgr_events(path: Path, tz: TimeZone, quarantine: Quarantine | None = None) -> Iterator[NodeEvent]:
    """Node events of the file, one per node of each event's NodeName list; an event whose nodes or
    times cannot be right (see `_events_from_row`) is quarantined."""
    quarantine = quarantine if quarantine is not None else Quarantine()
    clock = as_clock(tz)
    for line_no, row in read_parsable_rows(path, REQUIRED_FIELDS, quarantine):
        if row.get("Event") == "Cluster" or not row["NodeName"]:
            continue
        try:
            yield from _events_from_row(row, path, line_no, clock)
        except InputFormatError as error:
            quarantine.reject(error)


def _events_from_row(row: dict[str, str], path: Path, line_no: int, clock: LocalClock) -> list[NodeEvent]:
    """The row's events: its NodeName a host list (sized before it is expanded, host names only),
    a TimeStart, a TimeEnd (if any) not before it, both inside the clock's window of valid times."""
    try:
        nodes = host_list_nodes(row["NodeName"])
    except ValueError as exc:
        raise InputFormatError(path, line_no, "NodeName", row["NodeName"], str(exc)) from None
    times = {}
    for name in ("TimeStart", "TimeEnd"):
        try:
            times[name] = parse_local_timestamp(row[name], clock)
        except ValueError as exc:
            raise InputFormatError(path, line_no, name, row[name], str(exc)) from None
        if (why := clock.implausible(times[name])) is not None:
            raise InputFormatError(path, line_no, name, row[name], why)
    if times["TimeStart"] is None:
        raise InputFormatError(path, line_no, "TimeStart", row["TimeStart"], "a node event needs a start")
    if times["TimeEnd"] is not None and times["TimeEnd"] < times["TimeStart"]:
        raise InputFormatError(path, line_no, "TimeEnd", row["TimeEnd"], f"before the TimeStart {row['TimeStart']}")
    return [
        NodeEvent(
            node=node,
            started_at=times["TimeStart"],
            ended_at=times["TimeEnd"],
            state=row["State"],
            reason=row["Reason"],
            user=row["User"],
            source_line=line_no,
        )
        for node in nodes
    ]


def check_header(path: Path, site_timezone: str) -> None:
    """`check --month`: the header names every required column."""
    parsable_layout(path, REQUIRED_FIELDS)
