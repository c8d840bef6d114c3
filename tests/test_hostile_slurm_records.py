"""The hostile-input corpus of the job records read as written (issue 50): one carriage return or
CRLF line never stops a month, ids and counts take only Slurm's forms, a time with an offset is that
instant, and a job's JSON that nests too deep or holds a number beyond any field's is quarantined
alone. Readers only, in-process, on the real 22.05 dump (tests/data/slurm-22.05)."""

from __future__ import annotations

import gzip
import json
from datetime import UTC as UTC_TZ
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from hostile import Outcome, hostile
from job_records import (
    T_OK,
    XDMOD_FILLER,
    assert_quarantined,
    changed,
    json_attempts,
    sacct_attempts,
    without_line,
    xdmod_attempts,
)
from job_records import dump_clock as clock

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sacct import XDMOD_FIELDS, SacctReadStats

UTC = ZoneInfo("UTC")
JOB_3 = 4  # jobs[4] of sacct.json is job 3: reported as line 5


def lines_of(columns: list[str], rows: list[dict[str, str]]) -> list[str]:
    return ["|".join(columns)] + ["|".join(row[c] for c in columns) for row in rows]


# ---- 3. a carriage return never stops the month ----------------------------------------------------------------------


def crlf_cases(lines: list[str]) -> dict[str, bytes]:
    """The dump as a Windows editor or a pasted line leaves it: one CRLF line, a whole CRLF file,
    a lone CR inside a job name (LF file and CRLF file), a lone CR at a line's start."""
    lf = "".join(line + "\n" for line in lines)
    one_crlf = "".join(line + ("\r\n" if no == T_OK + 2 else "\n") for no, line in enumerate(lines, 1))
    crlf = lf.replace("\n", "\r\n")
    return {
        "one-crlf-line": one_crlf.encode(),
        "crlf-file": crlf.encode(),
        "lone-cr": lf.replace("|t_ok|", "|t\rok|").encode(),
        "lone-cr-in-crlf-file": crlf.replace("|t_ok|", "|t\rok|").encode(),
        "cr-at-line-start": lf.replace("\n3|3|t_ok", "\n\r3|3|t_ok").encode(),
    }


@pytest.mark.parametrize("case", ["one-crlf-line", "crlf-file", "lone-cr", "lone-cr-in-crlf-file", "cr-at-line-start"])
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@hostile(Outcome.FIGURE)
def test_a_carriage_return_never_loses_the_month(real, baseline, tmp_path, case, gz):
    """A lone CR (or one CRLF line in an LF file) failed the whole file, blamed on line 1, with
    1.5 KB of DuckDB's CSV internals. CRLF is a line end; a line holding another CR is read alone:
    a CR in a job name is kept, one that breaks a field quarantines that record only."""
    columns, rows = real
    data = crlf_cases(lines_of(columns, rows))[case]
    dump = tmp_path / ("sacct.psv.gz" if gz else "sacct.psv")
    dump.write_bytes(gzip.compress(data) if gz else data)
    quarantine, stats = Quarantine(strict=False), SacctReadStats()
    attempts = sacct_attempts(dump, clock(), stats, quarantine)
    if case == "cr-at-line-start":  # the JobID is `\r3`: that record alone is quarantined
        assert_quarantined(quarantine.errors, dump, T_OK + 2, "JobID")
        assert attempts == without_line(baseline, T_OK + 2)
        return
    assert quarantine.errors == []
    names = {"lone-cr": "t\rok", "lone-cr-in-crlf-file": "t\rok"}
    assert [a.job_name for a in attempts if a.source_line == T_OK + 2] == [names.get(case, "t_ok")]
    assert [vars(a) | {"job_name": ""} for a in attempts] == [vars(a) | {"job_name": ""} for a in baseline]
    assert stats.carriage_return_lines == (1 if case in names else 0)


@hostile(Outcome.FIGURE)
def test_a_carriage_return_in_an_xdmod_dump_never_loses_the_month(real, tmp_path):
    _, rows = real
    lines = ["|".join({**XDMOD_FILLER, **row}[f] for f in XDMOD_FIELDS) for row in rows]
    whole = tmp_path / "whole.log"
    whole.write_text("".join(line + "\n" for line in lines))
    dump = tmp_path / "xdmod.log"
    dump.write_bytes(whole.read_bytes().replace(b"|t_ok\n", b"|t\rok\r\n").replace(b"|t_ok", b"|t\rok"))
    quarantine = Quarantine(strict=False)
    attempts = xdmod_attempts(dump, clock(), quarantine=quarantine)
    assert quarantine.errors == []
    expected = xdmod_attempts(whole, clock())
    assert [vars(a) | {"job_name": ""} for a in attempts] == [vars(a) | {"job_name": ""} for a in expected]
    assert [a.job_name for a in attempts if a.job_id == "3"] == ["t\rok"]


# ---- 4. ids and counts only in Slurm's forms ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"JobIDRaw": "12.5"}, "JobIDRaw"),  # landed as job 13
        ({"JobIDRaw": "0x10"}, "JobIDRaw"),  # as 16
        ({"JobIDRaw": "1e3"}, "JobIDRaw"),
        ({"JobIDRaw": "1_000"}, "JobIDRaw"),
        ({"JobIDRaw": "0b101"}, "JobIDRaw"),
        ({"JobIDRaw": "-3"}, "JobIDRaw"),
        ({"JobIDRaw": "99999999999999999999"}, "JobIDRaw"),
        ({"JobID": "3abc"}, "JobID"),
        ({"JobID": "3;reboot"}, "JobID"),
        ({"NNodes": "5.7"}, "NNodes"),  # as 6
        ({"NNodes": "0x1"}, "NNodes"),
        ({"NNodes": "+1"}, "NNodes"),
    ],
    ids=lambda v: str(v)[:24],
)
@hostile(Outcome.QUARANTINE)
def test_ids_and_counts_in_no_form_slurm_writes_are_quarantined(real, baseline, tmp_path, fields, field):
    columns, rows = real
    dump = tmp_path / "sacct.psv"
    dump.write_text("\n".join(lines_of(columns, changed(rows, T_OK, **fields))) + "\n")
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    assert_quarantined(quarantine.errors, dump, T_OK + 2, field, "expected")
    assert attempts == without_line(baseline, T_OK + 2)


@pytest.mark.parametrize("job_id", ["3_7", "3_[1-5]", "3_[1,3,5-7%2]", "3+1"])
@hostile(Outcome.FIGURE)
def test_job_ids_as_sacct_prints_them_land(real, baseline, tmp_path, job_id):
    columns, rows = real
    dump = tmp_path / "sacct.psv"
    dump.write_text("\n".join(lines_of(columns, changed(rows, T_OK, JobID=job_id))) + "\n")
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    assert quarantine.errors == [] and [a.job_id for a in attempts if a.source_line == T_OK + 2] == [job_id]


# ---- 4. a time with an offset is that instant ------------------------------------------------------------------------


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kolkata", "America/New_York"])
@hostile(Outcome.FIGURE)
def test_a_time_with_an_offset_is_that_instant_in_any_site_zone(real, tmp_path, zone):
    """`2026-11-22T03:21:55+05:00` in Submit was read as wall time in the site's zone, 5 h off."""
    columns, rows = real
    times = {
        "Submit": "2026-11-22T08:21:55+05:00",
        "Eligible": "2026-11-22T08:21:55+0500",
        "Start": "2026-11-22T03:21:58Z",
        "End": "2026-11-21T22:22:00-05",
    }
    dump = tmp_path / "sacct.psv"
    dump.write_text("\n".join(lines_of(columns, changed(rows, T_OK, **times))) + "\n")
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, LocalClock(ZoneInfo(zone), as_of=datetime(2026, 11, 23, tzinfo=UTC_TZ)))
    (job,) = [a for a in attempts if a.source_line == T_OK + 2]
    assert quarantine.errors == []
    assert (job.submit_at, job.eligible_at, job.start_at, job.end_at) == (
        datetime(2026, 11, 22, 3, 21, 55),
        datetime(2026, 11, 22, 3, 21, 55),
        datetime(2026, 11, 22, 3, 21, 58),
        datetime(2026, 11, 22, 3, 22, 0),
    )


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"Submit": "2026-11-22T03:21:55 EST"}, "Submit"),  # a zone's name: accepted, read as wall time
        ({"Start": "2026-11-22T03:21:58 Europe/Berlin"}, "Start"),
        ({"End": "2026-11-22T03:22:00+99:99"}, "End"),  # no zone is 99 h off
        ({"End": "2026-11-22T03:22:00.5"}, "End"),
        ({"Eligible": "22/11/2026 03:21:55"}, "Eligible"),
        ({"Submit": "0001-01-01T00:00:00+05:00", "Eligible": "0001-01-01T00:00:00"}, "Submit"),
        ({"End": "9999-12-31T23:59:59-05:00"}, "End"),
    ],
    ids=lambda v: str(v)[:30],
)
@hostile(Outcome.QUARANTINE)
def test_a_time_in_no_form_slurm_writes_is_quarantined(real, baseline, tmp_path, fields, field):
    columns, rows = real
    dump = tmp_path / "sacct.psv"
    dump.write_text("\n".join(lines_of(columns, changed(rows, T_OK, **fields))) + "\n")
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    assert_quarantined(quarantine.errors, dump, T_OK + 2, field)
    assert attempts == without_line(baseline, T_OK + 2)


# ---- 3. sacct JSON: one job's value never stops the month ------------------------------------------------------------


@pytest.fixture(scope="module")
def document(slurm_fixtures: Path) -> dict:
    return json.loads((slurm_fixtures / "sacct.json").read_text())


@pytest.fixture(scope="module")
def json_baseline(slurm_fixtures: Path) -> list[SimpleNamespace]:
    return json_attempts(slurm_fixtures / "sacct.json", clock=clock())


MARK = "@@VALUE@@"


@pytest.mark.parametrize(
    ("key", "raw", "field", "reason"),
    [
        ("allocation_nodes", "9" * 5000, f"jobs[{JOB_3}].allocation_nodes", "an integer of 5,000 digits"),
        ("allocation_nodes", "Infinity", f"jobs[{JOB_3}].allocation_nodes", "Infinity is not a JSON number"),
        ("allocation_nodes", "NaN", f"jobs[{JOB_3}].allocation_nodes", "NaN is not a JSON number"),
        ("allocation_nodes", "1e400", f"jobs[{JOB_3}].allocation_nodes", "beyond a float's range"),
        ("name", "[" * 100_000 + "]" * 100_000, f"jobs[{JOB_3}]", "nested 100,001 deep"),
        ("name", '{"a":' * 100_000 + "1" + "}" * 100_000, f"jobs[{JOB_3}]", "nested 100,001 deep"),
    ],
    ids=["5000-digits", "infinity", "nan", "1e400", "deep-array", "deep-object"],
)
@hostile(Outcome.QUARANTINE)
def test_a_json_job_beyond_any_value_is_quarantined_alone(document, json_baseline, tmp_path, key, raw, field, reason):
    """RecursionError for 100,000-deep JSON and ValueError (4,300 digits) stopped the file, `(a bug?)`, exit 1."""
    broken = json.loads(json.dumps(document))
    broken["jobs"][JOB_3][key] = MARK
    dump = tmp_path / "jobs.json"
    dump.write_text(json.dumps(broken, indent=2).replace(f'"{MARK}"', raw))
    quarantine = Quarantine(strict=False)
    attempts = json_attempts(dump, quarantine=quarantine, clock=clock())
    assert_quarantined(quarantine.errors, dump, JOB_3 + 1, field, reason)
    assert attempts == without_line(json_baseline, JOB_3 + 1)


@pytest.mark.parametrize(
    ("key", "seconds", "field", "reason"),
    [
        ("end", 253402300800 + 86400, f"jobs[{JOB_3}].time.end", "not a time"),  # past year 9999
        ("start", -62135596800 - 86400, f"jobs[{JOB_3}].time.start", "not a time"),  # before year 1
        ("start", -62135596800, "Start", "before 2000-01-01"),  # year 1
        ("end", 253402300799, "End", "after the dump time"),  # year 9999
    ],
    ids=["year-10000", "year-0", "year-1", "year-9999"],
)
@hostile(Outcome.QUARANTINE)
def test_a_json_time_beyond_the_calendar_is_quarantined(document, json_baseline, tmp_path, key, seconds, field, reason):
    broken = json.loads(json.dumps(document))
    broken["jobs"][JOB_3]["time"][key] = seconds
    dump = tmp_path / "jobs.json"
    dump.write_text(json.dumps(broken))
    quarantine = Quarantine(strict=False)
    attempts = json_attempts(dump, quarantine=quarantine, clock=clock())
    assert_quarantined(quarantine.errors, dump, JOB_3 + 1, field, reason)
    assert attempts == without_line(json_baseline, JOB_3 + 1)


@hostile(Outcome.ERROR)
def test_a_json_document_too_deep_outside_its_jobs_is_refused_naming_the_file(document, tmp_path):
    broken = json.loads(json.dumps(document))
    broken["meta"] = MARK
    dump = tmp_path / "jobs.json"
    dump.write_text(json.dumps(broken).replace(f'"{MARK}"', "[" * 100_000 + "]" * 100_000))
    with pytest.raises(InputFormatError) as refused:
        json_attempts(dump, clock=clock())
    assert (refused.value.path, refused.value.line, refused.value.field) == (str(dump), 1, "document")
    assert "nested 100,001 deep" in refused.value.reason


# ---- node events: a time with an offset, a time beyond the calendar ------------------------------------------------

EVENTS = "sacctmgr_event.final.psv"
SNAPSHOT = "scontrol_show_node.down.txt"
TOKYO = ZoneInfo("Asia/Tokyo")


@hostile(Outcome.FIGURE)
def test_node_event_times_with_an_offset_are_their_instants(slurm_fixtures, tmp_path):
    """An sacctmgr TimeStart and an scontrol reason time with an offset were read as the site's wall time."""
    from flows.ingest.sources.sacctmgr_events import read_sacctmgr_events
    from flows.ingest.sources.scontrol_nodes import read_scontrol_nodes

    events = tmp_path / "events.psv"
    text = (slurm_fixtures / EVENTS).read_text()
    events.write_text(text.replace("|2026-11-22T03:22:04|DOWN|", "|2026-11-22T12:22:04+09:00|DOWN|"))
    (node3,) = [e for e in read_sacctmgr_events(events, clock()) if e.node == "node3"]
    assert node3.started_at == datetime(2026, 11, 22, 3, 22, 4, tzinfo=UTC_TZ)
    snapshot = tmp_path / "scontrol.txt"
    snapshot.write_text(
        (slurm_fixtures / SNAPSHOT).read_text().replace("@2026-11-22T03:22:04]", "@2026-11-22T03:22:04Z]")
    )
    (down,) = [e for e in read_scontrol_nodes(snapshot, clock(TOKYO)) if e.node == "node3"]
    assert down.started_at == datetime(2026, 11, 22, 3, 22, 4, tzinfo=UTC_TZ)


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00", "9999-12-31T23:59:59", "9999-12-31T23:59:59-05:00"])
@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "America/New_York"])
@hostile(Outcome.QUARANTINE)
def test_a_node_event_time_beyond_the_calendar_is_quarantined(slurm_fixtures, tmp_path, when, zone):
    """`OverflowError: date value out of range` stopped the sacctmgr and scontrol readers, `(a bug?)`."""
    from flows.ingest.sources.sacctmgr_events import read_sacctmgr_events
    from flows.ingest.sources.scontrol_nodes import read_scontrol_nodes

    events = tmp_path / "events.psv"
    events.write_text((slurm_fixtures / EVENTS).read_text().replace("|2026-11-22T03:22:04|DOWN|", f"|{when}|DOWN|"))
    quarantine = Quarantine(strict=False)
    assert len(list(read_sacctmgr_events(events, clock(ZoneInfo(zone)), quarantine=quarantine))) == 3
    assert_quarantined(quarantine.errors, events, 4, "TimeStart")
    snapshot = tmp_path / "scontrol.txt"
    snapshot.write_text((slurm_fixtures / SNAPSHOT).read_text().replace("@2026-11-22T03:22:04]", f"@{when}]"))
    quarantine = Quarantine(strict=False)
    assert [e.node for e in read_scontrol_nodes(snapshot, clock(ZoneInfo(zone)), quarantine=quarantine)] == ["node4"]
    assert_quarantined(quarantine.errors, snapshot, 3, "Reason")


@hostile(Outcome.FIGURE)
def test_a_carriage_return_in_node_events_and_snapshots_breaks_no_line(slurm_fixtures, tmp_path):
    """A CR inside a Reason split its line in two (Python's universal newlines): the record was
    joined with an LF or quarantined, and every later line's number was one off."""
    from flows.ingest.sources.sacctmgr_events import read_sacctmgr_events
    from flows.ingest.sources.scontrol_nodes import read_scontrol_nodes

    events = tmp_path / "events.psv"
    text = (slurm_fixtures / EVENTS).read_text().replace("|xid 79 gpu", "|xid\r79 gpu").replace("\n", "\r\n", 2)
    events.write_bytes(text.encode())
    quarantine = Quarantine(strict=False)
    whole = list(read_sacctmgr_events(slurm_fixtures / EVENTS, clock()))
    read = list(read_sacctmgr_events(events, clock(), quarantine=quarantine))
    assert quarantine.errors == []
    assert [(e.node, e.source_line, e.reason) for e in read] == [
        (e.node, e.source_line, e.reason.replace("xid 79", "xid\r79")) for e in whole
    ]
    snapshot = tmp_path / "scontrol.txt"
    snapshot.write_bytes((slurm_fixtures / SNAPSHOT).read_bytes().replace(b"Reason=xid 79", b"Reason=xid\r79"))
    quarantine = Quarantine(strict=False)
    down = list(read_scontrol_nodes(snapshot, clock(), quarantine=quarantine))
    assert quarantine.errors == []
    assert [(e.node, e.source_line, e.reason) for e in down] == [
        (e.node, e.source_line, e.reason.replace("xid 79", "xid\r79"))
        for e in read_scontrol_nodes(slurm_fixtures / SNAPSHOT, clock())
    ]


@pytest.mark.parametrize("raw", ["[" * 100_000 + "]" * 100_000, "9" * 5000], ids=["deep", "5000-digits"])
@hostile(Outcome.FIGURE)
def test_the_month_count_before_any_work_reads_a_hostile_json_job_as_the_reader_does(document, tmp_path, raw):
    """`check --month` and `run` count a month's records first: a 100,000-deep job stopped them with a
    RecursionError, a 5,000-digit number with a ValueError, `(a bug?)`. The job is left out, as the
    reader quarantines it."""
    from flows.core.months import Month
    from flows.ingest.month_records import count_month_records

    broken = json.loads(json.dumps(document))
    broken["jobs"][JOB_3]["name"] = MARK
    dump = tmp_path / "jobs.json"
    dump.write_text(json.dumps(broken).replace(f'"{MARK}"', raw))
    month = Month.parse("2026-11")
    assert count_month_records("sacct_json", dump, [month]).in_month == {month: 17}
