"""Node events as `sacctmgr -P show event` prints them (DOWN, DOWN*, DRAIN with their Reason).

Every record is landed (one event per node of its NodeName, a host list: flows/ingest/sources/hostlists.py),
quarantined, or skipped and counted: the `Cluster Registered TRES` row (Event=Cluster, or without an
Event column its Reason, and an empty NodeName) is not a node event; a node event with an empty
NodeName names no node.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flows.ingest.sources.clock import LocalClock, TimeZone, as_clock, parse_local_timestamp
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.hostlists import HostListError, host_list_nodes
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits
from flows.ingest.sources.parsable import parsable_layout, read_parsable_rows
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import NodeEvent

# `Event` is only in an explicit format list; the default layout has none, and its cluster row has no node.
REQUIRED_FIELDS = ("NodeName", "Reason", "TimeStart", "TimeEnd", "State", "User")
CLUSTER_REASON = "Cluster Registered TRES"  # the cluster row's Reason


@dataclass
class SacctmgrReadStats:
    rows: int = 0  # records read (a row of the wrong width is quarantined, not counted)
    events: int = 0  # node events landed (one per node of a record's NodeName)
    cluster_records: int = 0  # the cluster's `Cluster Registered TRES` rows: no node event, skipped
    without_node: int = 0  # node events with an empty NodeName: no node to put them on, skipped
    joined_lines: int = 0  # lines read as part of the record before them (a Reason holding a newline)


def read_sacctmgr_events(
    path: Path,
    tz: TimeZone,
    limits: InputLimits = DEFAULT_LIMITS,
    quarantine: Quarantine | None = None,
    stats: SacctmgrReadStats | None = None,
) -> Iterator[NodeEvent]:
    """Node events of the file, one per node of each event's NodeName list; an event whose nodes or
    times cannot be right (see `_events_from_row`) is quarantined, a record that is no node's event
    counted (see the module docstring)."""
    quarantine = quarantine if quarantine is not None else Quarantine()
    stats = stats if stats is not None else SacctmgrReadStats()
    clock = as_clock(tz)
    for line_no, row in read_parsable_rows(path, REQUIRED_FIELDS, quarantine, stats=stats):
        stats.rows += 1
        if row.get("Event") == "Cluster" or (
            "Event" not in row and not row["NodeName"] and row["Reason"] == CLUSTER_REASON
        ):
            stats.cluster_records += 1
            continue
        if not row["NodeName"]:
            stats.without_node += 1
            continue
        try:
            events = _events_from_row(row, path, line_no, clock, limits)
        except InputFormatError as error:
            quarantine.reject(error)
            continue
        stats.events += len(events)
        yield from events


def _events_from_row(
    row: dict[str, str], path: Path, line_no: int, clock: LocalClock, limits: InputLimits
) -> list[NodeEvent]:
    """The row's events: its NodeName a host list (checked and sized before it is expanded, host
    names only), a TimeStart, a TimeEnd (if any) not before it, both inside the clock's window of
    valid times."""
    try:
        nodes = host_list_nodes(row["NodeName"], limits)
    except HostListError as exc:
        shown = row["NodeName"] if len(row["NodeName"]) <= 200 else row["NodeName"][:200] + "..."
        raise InputFormatError(path, line_no, "NodeName", shown, str(exc)) from None
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
