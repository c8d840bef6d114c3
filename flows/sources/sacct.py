"""Slurm job records as `sacct --allusers --duplicates --allocations --parsable2` prints them.

Columns are found by the header, never by position. Step rows (`123.batch`, `123.0`) are not
attempts and are skipped (and counted). Each remaining row is one attempt.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from flows.sources import InputFormatError, Quarantine, TimeZone, parse_local_timestamp, read_parsable_rows

REQUIRED_FIELDS = (
    "JobID",
    "JobIDRaw",
    "JobName",
    "User",
    "Account",
    "Partition",
    "QOS",
    "State",
    "ExitCode",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "NNodes",
    "NodeList",
    "AllocTRES",
)
OPTIONAL_FIELDS = ("ReqTRES", "Reason", "DerivedExitCode")
# Open XDMoD's documented dump (`sacct --noheader ... --format jobid,...,jobname`, XDMoD 11): 26 fields.
XDMOD_FIELDS = (
    "JobID",
    "JobIDRaw",
    "Cluster",
    "Partition",
    "QOS",
    "Account",
    "Group",
    "GID",
    "User",
    "UID",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "ExitCode",
    "State",
    "NNodes",
    "NCPUS",
    "ReqCPUS",
    "ReqMem",
    "ReqTRES",
    "AllocTRES",
    "Timelimit",
    "NodeList",
    "JobName",
)

_ELAPSED_RE = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)(?:\.\d+)?$")
_EXIT_RE = re.compile(r"^(\d+):(\d+)$")
_STATE_RE = re.compile(r"^([A-Z_]+)(?: by (\d+))?$")
_NO_NODES = ("", "None assigned", "(null)")


@dataclass
class Attempt:
    job_id: str
    job_id_raw: str
    job_name: str
    user: str
    account: str
    partition: str
    qos: str
    state: str  # the state word, e.g. CANCELLED
    cancelled_by_uid: int | None
    exit_code: int | None
    exit_signal: int | None
    submit_at: datetime
    eligible_at: datetime | None
    start_at: datetime | None
    end_at: datetime | None
    elapsed_seconds: int
    n_nodes: int
    node_list: str
    nodes: list[str]
    gpus: int
    req_gpus: int | None
    reason: str
    source_line: int


@dataclass
class SacctReadStats:
    rows: int = 0
    attempts: int = 0
    steps_skipped: int = 0


def parse_elapsed(text: str) -> int:
    """`[D-]HH:MM:SS` or `MM:SS` to seconds."""
    match = _ELAPSED_RE.match(text)
    if not match:
        raise ValueError("expected [D-]HH:MM:SS")
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def gpus_from_tres(tres: str) -> int:
    """GPU count of a TRES string. The untyped `gres/gpu=N` is authoritative; typed entries
    (`gres/gpu:h100=N`) duplicate it and are only summed when no untyped entry exists."""
    untyped, typed = None, 0
    for item in filter(None, tres.split(",")):
        key, _, value = item.partition("=")
        if key == "gres/gpu":
            untyped = int(value)
        elif key.startswith("gres/gpu:"):
            typed += int(value)
    return untyped if untyped is not None else typed


def expand_nodes(node_list: str) -> list[str]:
    if node_list in _NO_NODES:
        return []
    return list(NodeSet(node_list))


def read_sacct(
    path: Path,
    tz: TimeZone,
    stats: SacctReadStats | None = None,
    quarantine: Quarantine | None = None,
    header: tuple[str, ...] | None = None,
) -> Iterator[Attempt]:
    """Attempts of a sacct dump; `header=XDMOD_FIELDS` for Open XDMoD's headerless files."""
    stats = stats if stats is not None else SacctReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    for line_no, row in read_parsable_rows(path, REQUIRED_FIELDS, quarantine, header):
        stats.rows += 1
        if "." in row["JobID"]:
            stats.steps_skipped += 1
            continue
        try:
            attempt = _attempt_from_row(row, path, line_no, tz)
        except InputFormatError as error:
            quarantine.reject(error)
            continue
        stats.attempts += 1
        yield attempt


def _attempt_from_row(row: dict[str, str], path: Path, line_no: int, tz: TimeZone) -> Attempt:
    def field(name: str, convert):
        try:
            return convert(row[name])
        except (ValueError, NodeSetParseError) as exc:
            raise InputFormatError(path, line_no, name, row[name], str(exc) or "invalid value") from None

    def timestamp(name: str) -> datetime | None:
        return field(name, lambda v: parse_local_timestamp(v, tz))

    state_match = _STATE_RE.match(row["State"])
    if not state_match:
        raise InputFormatError(path, line_no, "State", row["State"], "expected STATE or 'CANCELLED by <uid>'")
    exit_code, exit_signal = field("ExitCode", _parse_exit)
    submit = timestamp("Submit")
    if submit is None:
        raise InputFormatError(path, line_no, "Submit", row["Submit"], "every attempt has a submit time")
    nodes = field("NodeList", expand_nodes)
    req_tres = row.get("ReqTRES", "")
    return Attempt(
        job_id=row["JobID"],
        job_id_raw=field("JobIDRaw", lambda v: str(int(v))),
        job_name=row["JobName"],
        user=row["User"],
        account=row["Account"],
        partition=row["Partition"],
        qos=row["QOS"],
        state=state_match.group(1),
        cancelled_by_uid=int(state_match.group(2)) if state_match.group(2) else None,
        exit_code=exit_code,
        exit_signal=exit_signal,
        submit_at=submit,
        eligible_at=timestamp("Eligible"),
        start_at=timestamp("Start"),
        end_at=timestamp("End"),
        elapsed_seconds=field("Elapsed", parse_elapsed),
        n_nodes=field("NNodes", int),
        node_list=row["NodeList"],
        nodes=nodes,
        gpus=field("AllocTRES", gpus_from_tres),
        req_gpus=field("ReqTRES", gpus_from_tres) if req_tres else None,
        reason=row.get("Reason", ""),
        source_line=line_no,
    )


def _parse_exit(text: str) -> tuple[int | None, int | None]:
    if text == "":
        return None, None
    match = _EXIT_RE.match(text)
    if not match:
        raise ValueError("expected <code>:<signal>")
    return int(match.group(1)), int(match.group(2))
