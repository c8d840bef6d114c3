"""Node states and reasons from a `scontrol show node -o` snapshot (one line per node).

The accounting events of `sacctmgr show event` miss some drains: a node drained while busy
records its event only once its last job ends, and a drain resumed before that leaves none
(seen on Slurm 22.05: tests/data/slurm-22.05/). A snapshot taken by cron or at pull time shows every node that
is DOWN, DRAINED/DRAINING or FAIL now, with the reason, who set it and when
(`Reason=xid 79 gpu fell off bus [root@2026-11-22T03:22:04]`, always last on the line). Values
can contain spaces (`OS=Linux 6.1 #1 SMP`), so only NodeName, State and Reason are taken, by name.
Each such node becomes a node event starting at the reason's time with no end (still in force).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from flows.ingest.sources.clock import LocalClock, TimeZone, as_clock, parse_local_timestamp
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.hostlists import not_a_host_name
from flows.ingest.sources.limits import too_long
from flows.ingest.sources.node_names import NODE_NAME
from flows.ingest.sources.parsable import lf_lines
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.records import NodeEvent

_NODE = re.compile(r"^NodeName=(\S+)")
_HOST_NAME = re.compile(NODE_NAME)
_STATE = re.compile(r"\sState=(\S+)")
# Reason= and what follows it (the rest of the line), then `[user@time]` at its end: found by position,
# never by a pattern that may backtrack over a run of spaces (linear in the line)
_REASON = re.compile(r"\sReason=")
_SET_BY = re.compile(r"\[([^\]@]*)@([^\]]+)\]")


@dataclass
class ScontrolReadStats:
    nodes: int = 0
    out_of_service: int = 0  # DOWN, DRAIN or FAIL with a reason: one event each


def event_state(state: str) -> str | None:
    """The accounting-event state of a node state (`DOWN+NOT_RESPONDING` is DOWN*), None when in service."""
    base, *flags = state.upper().rstrip("*").split("+")
    if base == "DOWN":
        return "DOWN*" if "NOT_RESPONDING" in flags or state.endswith("*") else "DOWN"
    if base in ("FAIL", "FAILING") or "FAIL" in flags:
        return "FAIL"
    if base in ("DRAIN", "DRAINED", "DRAINING") or "DRAIN" in flags:
        return "DRAIN"
    return None


def read_scontrol_nodes(
    path: Path, tz: TimeZone, stats: ScontrolReadStats | None = None, quarantine: Quarantine | None = None
) -> Iterator[NodeEvent]:
    """A node event for each node out of service with a reason; a line that cannot be read (no
    NodeName or State, a NodeName that is not a host name, a reason time outside the clock's window
    of valid times) is quarantined."""
    stats = stats if stats is not None else ScontrolReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    clock = as_clock(tz)
    with open_text(path) as handle:
        for line_no, line in enumerate(lf_lines(handle), start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            try:
                if (why := too_long(line)) is not None:
                    raise InputFormatError(path, line_no, "line", line[:200], why)
                event = _event(line, path, line_no, clock, stats)
            except InputFormatError as error:
                quarantine.reject(error)
                continue
            if event is not None:
                stats.out_of_service += 1
                yield event


def _reason(line: str) -> tuple[str, str | None, str | None] | None:
    """The Reason (always last on the line), who set it and when (`[user@time]` after a space), or None."""
    found = _REASON.search(line)
    if found is None:
        return None
    rest = line[found.end() :].rstrip()
    bracket = rest.rfind("[")
    set_by = _SET_BY.fullmatch(rest, bracket) if bracket > 0 and rest[bracket - 1].isspace() else None
    if set_by is None:
        return rest, None, None
    return rest[:bracket].rstrip(), set_by.group(1), set_by.group(2)


def _event(line: str, path: Path, line_no: int, clock: LocalClock, stats: ScontrolReadStats) -> NodeEvent | None:
    node, state = _NODE.match(line), _STATE.search(line)
    if not node:
        raise InputFormatError(path, line_no, "NodeName", line[:40], "not a `scontrol show node -o` line")
    if not _HOST_NAME.fullmatch(node.group(1)):
        raise InputFormatError(path, line_no, "NodeName", node.group(1), not_a_host_name(node.group(1)))
    if not state:
        raise InputFormatError(path, line_no, "State", line[:40], "the node has no State")
    stats.nodes += 1
    kind = event_state(state.group(1))
    reason = _reason(line)
    if kind is None or reason is None or reason[0] in ("", "(null)"):
        return None
    text, user, when = reason
    if when is None:
        raise InputFormatError(path, line_no, "Reason", text[:200], "no [user@time] after the reason")
    try:
        started = parse_local_timestamp(when, clock)
    except ValueError as exc:
        raise InputFormatError(path, line_no, "Reason", when, str(exc)) from None
    if (why := clock.implausible(started)) is not None:
        raise InputFormatError(path, line_no, "Reason", when, why)
    return NodeEvent(
        node=node.group(1),
        started_at=started,
        ended_at=None,
        state=kind,
        reason=text,
        user=user,
        source_line=line_no,
    )
