"""The hostile-input corpus of the lines a reader joins to a record (issue 50, the fuzzer's last gaps).

A parsable2 row shorter than its header takes the short lines after it (a job name or a Reason
holding a newline), and a CSV field that opens a quote takes the lines up to the one that closes
it: each such line is counted (`joined_lines`, the lines read as part of the record before them),
so that every line read is landed, quarantined, skipped or joined. A carriage return inside a
ticket's quoted field is the field's own, never a line break that shifts the lines after it.
Readers only, in-process, on the real 22.05 dumps (tests/data/slurm-22.05).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from hostile import Outcome, hostile
from job_records import sacct_attempts, xdmod_attempts

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sacct import XDMOD_FIELDS, SacctReadStats
from flows.ingest.sources.sacctmgr_events import SacctmgrReadStats, read_sacctmgr_events

UTC = ZoneInfo("UTC")
AS_OF = datetime(2026, 11, 22, 3, 24, tzinfo=UTC)
XDMOD_FILLER = {"Cluster": "ci", "Group": "g", "GID": "0", "UID": "0", "NCPUS": "1", "ReqCPUS": "1"}
XDMOD_FILLER |= {"ReqMem": "100M", "Timelimit": "UNLIMITED"}


def clock() -> LocalClock:
    return LocalClock(UTC, as_of=AS_OF)


def where(errors: list[InputFormatError]) -> list[tuple[int, str]]:
    return [(error.line, error.field) for error in errors]


def record_lines(path: Path, first: int) -> int:
    """The file's non-blank lines from line `first` on: the lines its reader must account for."""
    return sum(1 for line in path.read_bytes().split(b"\n")[first - 1 :] if line.strip())


def cut_row(line: str, fields: int) -> str:
    """The row's first `fields` fields: a row cut short, as a copy stopped mid-line leaves it."""
    return "|".join(line.split("|")[:fields])


# --- parsable2: sacct, Open XDMoD, sacctmgr ----------------------------------------------------------


@hostile(Outcome.QUARANTINE)
def test_the_lines_a_sacct_row_takes_in_are_counted(slurm_fixtures: Path, tmp_path: Path):
    """A job name over three lines lands at its first line; a row cut short takes the short line
    after it and is quarantined at its first line. Each line taken in is counted: none is lost."""
    header, *rows = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    rows[3] = rows[3].replace("t_exit3", "first\nsecond\nthird")  # line 5, over lines 5-7
    rows[5] = cut_row(rows[5], 10) + "\njunk"  # t_cancel_running, cut short: lines 9-10
    dump = tmp_path / "sacct.psv"
    dump.write_text("\n".join([header, *rows]) + "\n")
    quarantine, stats = Quarantine(strict=False), SacctReadStats()
    attempts = sacct_attempts(dump, clock(), stats, quarantine)
    assert [a.source_line for a in attempts if a.job_name == "first\nsecond\nthird"] == [5]
    assert where(quarantine.errors) == [(9, "row")]
    assert stats.joined_lines == 3
    skipped = stats.steps_skipped + stats.duplicate_records
    assert record_lines(dump, 2) == len(attempts) + len(quarantine.errors) + skipped + stats.joined_lines


@hostile(Outcome.QUARANTINE)
def test_the_short_lines_an_xdmod_row_takes_in_are_counted(slurm_fixtures: Path, tmp_path: Path):
    """XDMoD's JobName is the last field, so any two short lines join: a row cut short takes the
    short line after it, two stray short lines are one record, each quarantined at its first line,
    and the lines taken in are counted."""
    header, *rows = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    records = [{**XDMOD_FILLER, **dict(zip(header.split("|"), row.split("|"), strict=True))} for row in rows]
    lines = ["|".join(record[f] for f in XDMOD_FIELDS) for record in records]
    lines[2] = cut_row(lines[2], 10) + "\njunk"  # lines 3-4
    lines[6:6] = ["stray|one", "stray two"]  # lines 8-9
    dump = tmp_path / "xdmod.log"
    dump.write_text("\n".join(lines) + "\n")
    quarantine, stats = Quarantine(strict=False), SacctReadStats()
    attempts = xdmod_attempts(dump, clock(), stats, quarantine)
    assert len(attempts) == len(rows) - 1
    assert where(quarantine.errors) == [(3, "row"), (8, "row")]
    assert stats.joined_lines == 2
    skipped = stats.steps_skipped + stats.duplicate_records
    assert record_lines(dump, 1) == len(attempts) + len(quarantine.errors) + skipped + stats.joined_lines


@hostile(Outcome.QUARANTINE)
def test_the_lines_a_sacctmgr_event_takes_in_are_counted(slurm_fixtures: Path, tmp_path: Path):
    """A Reason over three lines is one event at its first line; an event cut short takes the short
    line after it and is quarantined; the cluster row is skipped: every line is accounted for."""
    header, cluster, down, not_responding = (slurm_fixtures / "sacctmgr_event.down.psv").read_text().splitlines()
    multi_line = down.replace("xid 79 gpu fell off bus", "xid 79\ngpu fell\noff bus")  # lines 3-5
    cut = cut_row(not_responding, 8) + "\njunk"  # lines 6-7
    dump = tmp_path / "events.psv"
    dump.write_text("\n".join([header, cluster, multi_line, cut, not_responding]) + "\n")
    quarantine, stats = Quarantine(strict=False), SacctmgrReadStats()
    events = list(read_sacctmgr_events(dump, clock(), quarantine=quarantine, stats=stats))
    assert [(e.node, e.reason, e.source_line) for e in events] == [
        ("node3", "xid 79\ngpu fell\noff bus", 3),
        ("node4", "Not responding", 8),
    ]
    assert where(quarantine.errors) == [(6, "row")]
    assert stats.joined_lines == 3
    skipped = stats.cluster_records + stats.without_node
    assert record_lines(dump, 2) == stats.rows + len(quarantine.errors) + stats.joined_lines
    assert stats.rows == len(events) + skipped
