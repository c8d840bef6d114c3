"""The hostile-input corpus of the lines a reader joins to a record (issue 50, the fuzzer's last gaps).

A parsable2 row shorter than its header takes the short lines after it (a job name or a Reason
holding a newline), and a CSV field that opens a quote takes the lines up to the one that closes
it: each such line is counted (`joined_lines`, the lines read as part of the record before them),
so that every line read is landed, quarantined, skipped or joined. A carriage return inside a
ticket's quoted field is the field's own, never a line break that shifts the lines after it.
Readers only, in-process, on the real 22.05 dumps (tests/data/slurm-22.05).
"""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hostile import Outcome, hostile
from job_records import XDMOD_FILLER, sacct_attempts, xdmod_attempts
from job_records import dump_clock as clock

from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.repair_tickets import TicketReadStats, read_repair_tickets
from flows.ingest.sources.sacct import XDMOD_FIELDS, SacctReadStats
from flows.ingest.sources.sacctmgr_events import SacctmgrReadStats, read_sacctmgr_events

UTC = ZoneInfo("UTC")


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


# --- repair tickets (CSV) ----------------------------------------------------------------------------

TICKET_HEADER = "ticket_id,node,opened_at,closed_at,category,summary\n"
T_1 = "T-1,gpu0001,2026-10-01T10:00:00+00:00,,gpu,Xid 79\n"
T_3 = "T-3,gpu0003,2026-10-03T10:00:00+00:00,,gpu,reseated\n"


def tickets_of(path: Path) -> tuple[list[tuple[str, int]], list[tuple[int, str]], TicketReadStats]:
    quarantine, stats = Quarantine(strict=False), TicketReadStats()
    tickets = list(read_repair_tickets(path, UTC, stats=stats, quarantine=quarantine))
    return [(t.message, t.source_line) for t in tickets], where(quarantine.errors), stats


@hostile(Outcome.QUARANTINE)
def test_the_lines_a_ticket_summary_takes_in_are_counted(tmp_path: Path):
    """A summary over two lines is one ticket at its first line; a quote never closed takes every
    line after it into the summary (3 lines, 1 ticket): each line taken in is counted."""
    multi_line = 'T-2,gpu0002,2026-10-02T10:00:00+00:00,,gpu,"GPU 3\nreplaced"\n'  # lines 3-4
    open_quote = 'T-4,gpu0004,2026-10-04T10:00:00+00:00,,gpu,"RMA opened\n'  # line 6, takes 7-8
    after = "T-5,gpu0005,2026-10-05T10:00:00+00:00,,gpu,x\nT-6,gpu0006,2026-10-06T10:00:00+00:00,,gpu,y\n"
    path = tmp_path / "tickets.csv"
    path.write_text(TICKET_HEADER + T_1 + multi_line + T_3 + open_quote + after)
    tickets, errors, stats = tickets_of(path)
    assert [line for _, line in tickets] == [2, 3, 5, 6]
    assert tickets[1][0] == "T-2: GPU 3\nreplaced" and tickets[3][0].startswith("T-4: RMA opened\nT-5,gpu0005")
    assert errors == []
    assert stats.joined_lines == 3
    assert record_lines(path, 2) == stats.tickets + len(errors) + stats.joined_lines


@hostile(Outcome.QUARANTINE)
def test_the_lines_a_quarantined_ticket_takes_in_are_counted(tmp_path: Path):
    """A ticket over two lines that cannot land is quarantined at its first line, the second counted."""
    bad = 'T-2,gpu 2,2026-10-02T10:00:00+00:00,,gpu,"GPU 3\nreplaced"\n'  # a node with a space: lines 3-4
    path = tmp_path / "tickets.csv"
    path.write_text(TICKET_HEADER + T_1 + bad + T_3)
    tickets, errors, stats = tickets_of(path)
    assert [line for _, line in tickets] == [2, 5]
    assert errors == [(3, "node")]
    assert stats.joined_lines == 1
    assert record_lines(path, 2) == stats.tickets + len(errors) + stats.joined_lines


CR_TICKET = 'T-99,gpu0003,2026-10-02T10:00:00+00:00,,gpu,"GPU 3 replaced, ""RM\rA"" opened"'


@pytest.mark.parametrize("line_end", ["\n", "\r\n"], ids=["lf", "crlf"])
@hostile(Outcome.FIGURE)
def test_a_carriage_return_in_a_ticket_keeps_every_line_number(tmp_path: Path, line_end: str):
    """A CR inside a quoted summary split its line in two (the file was read with universal
    newlines): T-99 on line 2 was reported on line 3 and every later ticket one line off. Lines end
    at LF (CRLF in a Windows export), as `sed -n Np` counts them; the CR is the summary's own."""
    lines = [TICKET_HEADER.rstrip("\n"), CR_TICKET, T_3.rstrip("\n"), "T-4,gpu0004,not a time,,gpu,x", T_1.rstrip()]
    path = tmp_path / "tickets.csv"
    path.write_bytes(line_end.join(lines).encode() + line_end.encode())
    tickets, errors, stats = tickets_of(path)
    assert tickets == [
        ('T-99: GPU 3 replaced, "RM\rA" opened', 2),
        ("T-3: reseated", 3),
        ("T-1: Xid 79", 5),
    ]
    assert errors == [(4, "opened_at")]
    assert stats.joined_lines == 0
    for message, line in tickets:  # the line `sed -n Np` prints is the ticket's
        assert path.read_bytes().split(b"\n")[line - 1].startswith(message.split(":")[0].encode() + b",")
