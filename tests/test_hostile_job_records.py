"""The hostile-input corpus of the job-record side (issue 21): sacct text (`|`, 0x1f and GCM's `|#`
delimiters), Open XDMoD's headerless dump, sacct JSON, sacctmgr events and scontrol snapshots.

Every case starts from a real file (tests/data/slurm-22.05, tests/data/gcm), breaks one record (or
the file) and asserts its class (tests/hostile.py) and that nothing else changed: the other records
land exactly as from the unbroken file. Readers only, no landing: each case costs a DuckDB read.
"""

from __future__ import annotations

import gzip
import json
import time
from datetime import date, datetime
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from hostile import Outcome, hostile
from job_records import (
    AS_OF,
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
from flows.ingest.sources.sacct_json import SacctJsonReadStats
from flows.ingest.sources.sacctmgr_events import read_sacctmgr_events
from flows.ingest.sources.scontrol_nodes import read_scontrol_nodes

UTC = ZoneInfo("UTC")


def write(path: Path, lines: list[str]) -> Path:
    text = "".join(line + "\n" for line in lines)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def psv(path: Path, columns: list[str], rows: list[dict[str, str]], delimiter: str = "|") -> Path:
    return write(path, [delimiter.join(columns)] + [delimiter.join(row[c] for c in columns) for row in rows])


def xdmod(path: Path, rows: list[dict[str, str]]) -> Path:
    return write(path, ["|".join({**XDMOD_FILLER, **row}[f] for f in XDMOD_FIELDS) for row in rows])


def truncate(path: Path) -> Path:
    """The gzip file cut off before its end, as a copy stopped early leaves it."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    return path


# ---- sacct --parsable2: one field of the t_ok record broken --------------------------------------------------------

QUARANTINED_FIELDS = [
    # A COMPLETED row without Start dropped its GPU-hours; without End it was taken as still running.
    ({"Start": "Unknown"}, "Start", "COMPLETED attempt ran: it needs a Start"),
    ({"End": "None"}, "End", "COMPLETED attempt ended: it needs an End"),
    ({"End": "Unknown"}, "End", "it needs an End"),
    ({"State": "NODE_FAIL", "End": "Unknown"}, "End", "NODE_FAIL attempt ended"),
    ({"State": "CANCELLED by 0", "End": "None"}, "End", "CANCELLED attempt ended"),
    ({"State": "RUNNING", "End": "2026-11-22T03:22:00"}, "End", "a RUNNING attempt has no End yet"),
    ({"State": "RUNNING", "Start": "Unknown", "End": "Unknown"}, "Start", "a RUNNING attempt needs a Start"),
    # Times out of order: End before Start stopped the run at data quality, naming no file or line.
    ({"End": "2026-11-22T03:21:50"}, "End", "before the Start 2026-11-22 03:21:58"),
    ({"Start": "2026-11-22T03:21:50", "End": "2026-11-22T03:21:52"}, "Start", "before the Submit"),
    # Times outside the window: 1970 was accepted; a time after the dump is not possible.
    ({"Submit": "1970-01-01T00:00:00"}, "Submit", "before 2000-01-01, the earliest valid date"),
    ({"Start": "1970-01-01T00:00:01"}, "Start", "before 2000-01-01"),
    ({"Eligible": "1970-01-01T00:00:01"}, "Eligible", "before 2000-01-01"),
    ({"Submit": "0001-01-01T00:00:00", "Eligible": "0001-01-01T00:00:00"}, "Submit", "before 2000-01-01"),
    ({"End": "2026-11-24T03:22:00"}, "End", "after the dump time"),
    ({"Submit": "2030-01-01T00:00:00"}, "Submit", "after the dump time"),
    # Host lists: against NNodes, the fleet (node1-4), a bound checked before expansion, host names.
    ({"NNodes": "100000", "NodeList": "gpu[1-100000]"}, "NodeList", "names 100,000 nodes that no other record names"),
    ({"NNodes": "2"}, "NNodes", "the NodeList names 1 nodes"),
    ({"NNodes": "1", "NodeList": "node[1-3]"}, "NNodes", "the NodeList names 3 nodes"),
    ({"NNodes": "20000000", "NodeList": "gpu[1-20000000]"}, "NodeList", "more than any cluster has"),
    ({"NNodes": "25000000", "NodeList": "rack[1-5000]n[1-5000]"}, "NodeList", "more than any cluster has"),
    ({"NodeList": "node[1-99999999999999999999999]"}, "NodeList", "more than any cluster has"),
    # ... and beside another range: the list was taken for a simple one and stopped the file in DuckDB's cast
    ({"NodeList": "node[1-2],gpu[1-99999999999999999999]"}, "NodeList", "more than any cluster has"),
    ({"NodeList": "node$1"}, "NodeList", "holds '$' at character 5"),
    ({"NNodes": "2", "NodeList": "node1,node1"}, "NodeList", "names node node1 twice"),
    ({"NNodes": "3", "NodeList": "node[1-2],node1"}, "NodeList", "names node node1 twice"),
    ({"NNodes": "2", "NodeList": "node1,no de2"}, "NodeList", "holds ' ' at character 9"),
    ({"NodeList": "node[1-"}, "NodeList", ""),
    # GPU fields that cannot be read were 0 GPUs.
    ({"AllocTRES": "%%garbage%%"}, "AllocTRES", "expected a TRES list"),
    ({"AllocTRES": "cpu=1,gres/gpu=99999999999999999999"}, "AllocTRES", "expected gres/gpu"),
    ({"AllocTRES": "cpu=1,gres/gpu=-3"}, "AllocTRES", "expected gres/gpu"),
    ({"AllocTRES": "cpu=1,gres/gpu:h100=2.5"}, "AllocTRES", "expected gres/gpu"),
    ({"ReqTRES": "gpus please"}, "ReqTRES", "expected a TRES list"),
]


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        pytest.param(*case, marks=hostile(Outcome.QUARANTINE), id="-".join(case[0].values()))
        for case in QUARANTINED_FIELDS
    ],
)
def test_a_broken_sacct_field_is_quarantined(real, baseline, tmp_path: Path, fields: dict, field: str, reason: str):
    columns, rows = real
    dump = psv(tmp_path / "sacct.psv", columns, changed(rows, T_OK, **fields))
    quarantine, stats = Quarantine(strict=False), SacctReadStats()
    started = time.monotonic()
    attempts = sacct_attempts(dump, clock(), stats, quarantine)
    assert time.monotonic() - started < 10  # a 25,000,000-node list is refused, not expanded
    assert_quarantined(quarantine.errors, dump, T_OK + 2, field, reason)
    assert attempts == without_line(baseline, T_OK + 2)
    assert stats.attempts == len(baseline) - 1


@hostile(Outcome.FIGURE)
def test_a_hero_run_on_thousands_of_nodes_no_other_record_names_lands(real, baseline, tmp_path: Path):
    """A small dump may hold one very large job: 3,000 nodes named by no other record land."""
    columns, rows = real
    fields = {"NNodes": "3000", "NodeList": "hero[0001-3000]"}
    dump = psv(tmp_path / "sacct.psv", columns, changed(rows, T_OK, **fields))
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    assert quarantine.errors == []
    (hero,) = [a for a in attempts if a.n_nodes == 3000]
    assert hero.node_list == "hero[0001-3000]"
    assert len(attempts) == len(baseline)


@hostile(Outcome.QUARANTINE)
def test_a_record_before_the_configured_earliest_date_is_quarantined(real, baseline, tmp_path: Path):
    columns, rows = real
    fields = {"Submit": "2026-11-21T23:59:59", "Eligible": "2026-11-21T23:59:59"}
    dump = psv(tmp_path / "sacct.psv", columns, changed(rows, T_OK, **fields))
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, clock(earliest=date(2026, 11, 22)), quarantine=quarantine)
    assert_quarantined(quarantine.errors, dump, T_OK + 2, "Submit", "before 2026-11-22, the earliest valid date")
    assert attempts == without_line(baseline, T_OK + 2)


@hostile(Outcome.QUARANTINE)
def test_a_failed_node_that_is_not_a_host_name_is_quarantined(real, baseline, tmp_path: Path):
    """FailedNode (Slurm 23.02+) names the node blamed for a failure: a lemon-node signal."""
    columns, rows = real
    rows = [{**row, "FailedNode": ""} for row in rows]
    rows[T_OK]["FailedNode"] = "node1;reboot"
    dump = psv(tmp_path / "sacct.psv", [*columns, "FailedNode"], rows)
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    assert_quarantined(quarantine.errors, dump, T_OK + 2, "FailedNode", "not a host name")
    assert attempts == without_line(baseline, T_OK + 2)


@hostile(Outcome.QUARANTINE)
def test_a_row_of_the_wrong_width_is_quarantined(real, baseline, tmp_path: Path):
    columns, rows = real
    dump = psv(tmp_path / "sacct.psv", columns, rows)
    lines = dump.read_text().splitlines()
    lines[T_OK + 1] += "|extra"
    write(dump, lines)
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    assert_quarantined(quarantine.errors, dump, T_OK + 2, "row", "the header has 20")
    assert attempts == without_line(baseline, T_OK + 2)


# ---- sacct --parsable2: records that are right, and must land as they are ------------------------------------------


@hostile(Outcome.FIGURE)
def test_array_records_sharing_a_job_id_raw_are_kept_apart_by_their_index(real, baseline, tmp_path: Path):
    """Some dumps give an array's tasks the array's JobIDRaw: 12_0, 12_1 and 12_2 are three attempts, not duplicates."""
    columns, rows = real
    shared = [{**row, "JobIDRaw": "12"} if row["JobID"].startswith("12_") else row for row in rows]
    stats = SacctReadStats()
    attempts = sacct_attempts(psv(tmp_path / "sacct.psv", columns, shared), clock(), stats)
    assert stats.duplicate_records == 0
    assert [a.job_id for a in attempts if a.job_id_raw == "12"] == ["12_0", "12_1", "12_2"]
    assert [vars(a) | {"job_id_raw": ""} for a in attempts] == [vars(a) | {"job_id_raw": ""} for a in baseline]


@hostile(Outcome.FIGURE)
def test_the_same_record_twice_lands_once(real, baseline, tmp_path: Path):
    columns, rows = real
    stats = SacctReadStats()
    attempts = sacct_attempts(psv(tmp_path / "sacct.psv", columns, [*rows, rows[T_OK]]), clock(), stats)
    assert stats.duplicate_records == 1
    kept = next(a for a in attempts if a.job_id == "3")
    assert kept.source_line == len(rows) + 2  # the later copy

    assert sorted(
        (vars(a) | {"source_line": 0} for a in attempts), key=lambda a: (a["job_id_raw"], a["submit_at"])
    ) == sorted((vars(a) | {"source_line": 0} for a in baseline), key=lambda a: (a["job_id_raw"], a["submit_at"]))


@hostile(Outcome.FIGURE)
def test_a_record_repeated_with_another_outcome_is_a_counted_conflict(real, baseline, tmp_path: Path):
    """Dumps concatenated from two pulls: t_ok's line again at the end as NODE_FAIL, every other field
    equal. Counted with the file and both lines; the same End, so the later line is kept (the rule
    of docs/methodology.md "Units")."""
    columns, rows = real
    dump = psv(tmp_path / "sacct.psv", columns, [*rows, {**rows[T_OK], "State": "NODE_FAIL"}])
    stats = SacctReadStats()
    attempts = sacct_attempts(dump, clock(), stats)
    last = len(rows) + 2
    assert (stats.duplicate_records, stats.conflicting_attempts) == (1, 1)
    (conflict,) = stats.conflicts
    assert conflict.startswith(f"{dump}: lines {T_OK + 2} and {last} record one attempt of job 3 differently")
    assert f"State COMPLETED / NODE_FAIL; line {last} kept (the later line)" in conflict
    kept = next(a for a in attempts if a.job_id == "3")
    assert (kept.state, kept.source_line) == ("NODE_FAIL", last)
    assert [a for a in attempts if a.job_id != "3"] == [a for a in baseline if a.job_id != "3"]


@hostile(Outcome.QUARANTINE)
def test_a_job_id_with_terminal_escapes_is_quarantined_and_shown_escaped(real, baseline, tmp_path: Path):
    """A JobID is digits (`123`, `123_4`, `123_[1-5]`, `123+1`): one with escapes never lands (it
    was landed, and named in a conflict's description), and its quarantine shows it escaped."""
    columns, rows = real
    rows = changed(rows, T_OK, JobID="3\x1b[2J\u202e")
    quarantine = Quarantine(strict=False)
    dump = psv(tmp_path / "sacct.psv", columns, rows)
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    assert_quarantined(quarantine.errors, dump, T_OK + 2, "JobID", "expected a job id as sacct prints one")
    assert "\x1b" not in str(quarantine.errors[0]) and "3\\x1b[2J\\u202e" in str(quarantine.errors[0])
    assert attempts == without_line(baseline, T_OK + 2)


@hostile(Outcome.FIGURE)
def test_of_conflicting_records_the_one_with_the_later_end_is_kept(real, baseline, tmp_path: Path):
    """The later End wins wherever it is in the file: here the earlier line."""
    columns, rows = real
    earlier_end = {**rows[T_OK], "State": "FAILED", "ExitCode": "1:0", "End": "2026-11-22T03:21:59"}
    dump = psv(tmp_path / "sacct.psv", columns, [*rows, earlier_end | {"Elapsed": "00:00:01"}])
    stats = SacctReadStats()
    attempts = sacct_attempts(dump, clock(), stats)
    (conflict,) = stats.conflicts
    assert "State COMPLETED / FAILED, ExitCode 0:0 / 1:0, End 2026-11-22T03:22:00 / 2026-11-22T03:21:59" in conflict
    assert f"line {T_OK + 2} kept (the later End)" in conflict
    assert attempts == baseline


@hostile(Outcome.FIGURE)
def test_a_record_that_ended_since_the_earlier_dump_is_no_conflict(real, baseline, tmp_path: Path):
    """Overlapping dumps: RUNNING in the first, ended in the second. An update, not a conflict."""
    columns, rows = real
    running = next(i for i, row in enumerate(rows) if row["State"] == "RUNNING")
    ended = {**rows[running], "State": "COMPLETED", "End": "2026-11-22T03:23:40", "Elapsed": "00:01:40"}
    stats = SacctReadStats()
    attempts = sacct_attempts(psv(tmp_path / "sacct.psv", columns, [*rows, ended]), clock(), stats)
    assert (stats.duplicate_records, stats.conflicting_attempts, stats.conflicts) == (1, 0, [])
    assert next(a for a in attempts if a.job_id == rows[running]["JobID"]).state == "COMPLETED"


@pytest.mark.parametrize("delimiter", ["\x1f", "|#"])
@hostile(Outcome.FIGURE)
def test_any_delimiter_a_site_uses_is_found_from_the_header(real, baseline, tmp_path: Path, delimiter: str):
    """`|#` is GCM's (its fields may hold `||`), 0x1f the one no job name can break."""
    columns, rows = real
    rows = changed(rows, T_OK, JobName="a||b|c")
    attempts = sacct_attempts(psv(tmp_path / "sacct.psv", columns, rows, delimiter), clock())
    assert next(a for a in attempts if a.job_id == "3").job_name == "a||b|c"
    assert [vars(a) | {"job_name": ""} for a in attempts] == [vars(a) | {"job_name": ""} for a in baseline]


@hostile(Outcome.FIGURE)
def test_gcm_sacct_output_with_its_delimiter_reads(tmp_path: Path):
    """GCM's own test sample (`-o all --delimiter '|#'`): two steps skipped, a FAILED 128-node job and
    a REQUEUED 32-node one whose SubmitLine holds `||` and a newline (tests/data/README.md)."""
    sample = Path(__file__).parent / "data" / "gcm" / "sample-sacct-one-multiline.txt"
    stats, quarantine = SacctReadStats(), Quarantine(strict=False)
    attempts = sacct_attempts(sample, LocalClock(UTC), stats, quarantine)
    assert quarantine.errors == [] and stats.steps_skipped == 2
    assert [(a.job_id, a.state, a.n_nodes, len(a.nodes), a.gpus, a.source_line) for a in attempts] == [
        ("201729", "FAILED", 128, 128, 1024, 3),
        ("201844", "REQUEUED", 32, 32, 256, 4),
    ]
    assert attempts[1].end_at == datetime(2023, 1, 16, 7, 31, 52)


@pytest.mark.parametrize(
    "fields",
    [
        # cancelled while pending: never started, no nodes
        {"State": "CANCELLED by 0", "Start": "None", "NodeList": "None assigned", "AllocTRES": ""},
        # pending: sacct prints the scheduler's expected Start
        {"State": "PENDING", "Start": "2026-11-22T05:00:00", "End": "Unknown", "NodeList": "None assigned"},
        {"AllocTRES": "billing=1,cpu=1,mem=100M,node=1"},  # no GPUs at all: 0, rightly
    ],
    ids=["cancelled-pending", "pending", "no-gpus"],
)
@hostile(Outcome.FIGURE)
def test_legitimate_records_without_times_or_gpus_land(real, baseline, tmp_path: Path, fields: dict):
    columns, rows = real
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(
        psv(tmp_path / "sacct.psv", columns, changed(rows, T_OK, **fields)), clock(), quarantine=quarantine
    )
    assert quarantine.errors == []
    (landed,) = [a for a in attempts if a.source_line == T_OK + 2]
    assert landed.gpus == (3 if "AllocTRES" not in fields else 0)
    assert landed.start_at == (None if fields.get("Start") == "None" else landed.start_at)
    assert without_line(attempts, T_OK + 2) == without_line(baseline, T_OK + 2)


@hostile(Outcome.FIGURE)
def test_times_on_either_side_of_a_dst_fall_back_are_not_out_of_order(real, baseline, tmp_path: Path):
    """01:50 EDT then 01:10 EST: printed in local time, the End reads before the Start, by less
    than the hour the clocks went back. It lands (both counted as ambiguous), not quarantined."""
    columns, rows = real
    fields = {"Submit": "2026-11-01T00:30:00", "Eligible": "2026-11-01T00:30:00", "Start": "2026-11-01T01:50:00"}
    rows = changed(rows, T_OK, End="2026-11-01T01:10:00", **fields)
    new_york = clock(tz=ZoneInfo("America/New_York"))
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(psv(tmp_path / "sacct.psv", columns, rows), new_york, quarantine=quarantine)
    assert quarantine.errors == [] and new_york.ambiguous == 2
    assert next(a for a in attempts if a.job_id == "3").start_at == datetime(2026, 11, 1, 5, 50)
    assert len(attempts) == len(baseline)


# ---- whole files refused -----------------------------------------------------------------------------------------


@hostile(Outcome.ERROR)
def test_a_truncated_gzip_dump_is_refused_naming_the_file(real, tmp_path: Path):
    """DuckDB said `Unexpected end of GZIP stream`, naming no file."""
    columns, rows = real
    dump = truncate(psv(tmp_path / "sacct.psv.gz", columns, rows * 50))
    with pytest.raises(InputFormatError) as refused:
        sacct_attempts(dump, clock())
    assert (refused.value.path, refused.value.field) == (str(dump), "file")
    assert refused.value.line > 2 and "cut off or corrupt" in refused.value.reason


@hostile(Outcome.ERROR)
def test_a_file_named_gz_that_is_not_gzip_is_refused(real, tmp_path: Path):
    columns, rows = real
    dump = psv(tmp_path / "sacct.psv", columns, rows).rename(tmp_path / "sacct.psv.gz")
    with pytest.raises(InputFormatError) as refused:
        sacct_attempts(dump, clock())
    assert (refused.value.path, refused.value.line, refused.value.field) == (str(dump), 1, "file")


@hostile(Outcome.ERROR)
def test_a_header_without_a_required_column_is_refused(real, tmp_path: Path):
    columns, rows = real
    dump = psv(
        tmp_path / "sacct.psv",
        [c if c != "NNodes" else "NNode" for c in columns],
        [{("NNode" if k == "NNodes" else k): v for k, v in row.items()} for row in rows],
    )
    with pytest.raises(InputFormatError) as refused:
        sacct_attempts(dump, clock())
    assert (refused.value.line, refused.value.field, refused.value.reason) == (1, "header", "missing columns NNodes")


# ---- Open XDMoD's headerless dump ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def xdmod_baseline(real, tmp_path_factory: pytest.TempPathFactory) -> list[SimpleNamespace]:
    whole = xdmod(tmp_path_factory.mktemp("xdmod") / "xdmod.log", real[1])
    return sacct_attempts(whole, clock(), header=XDMOD_FIELDS)


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"Start": "Unknown"}, "Start", "it needs a Start"),
        ({"End": "2026-11-22T03:21:50"}, "End", "before the Start"),
        ({"NNodes": "100000", "NodeList": "gpu[1-100000]"}, "NodeList", "no other record names"),
        ({"AllocTRES": "cpu=1,gres/gpu=lots"}, "AllocTRES", "expected gres/gpu"),
    ],
    ids=["start-unknown", "end-before-start", "fleet", "tres"],
)
@hostile(Outcome.QUARANTINE)
def test_a_broken_xdmod_field_is_quarantined(real, xdmod_baseline, tmp_path: Path, fields, field, reason):
    _, rows = real
    dump = xdmod(tmp_path / "xdmod.log", changed(rows, T_OK, **fields))
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine, header=XDMOD_FIELDS)
    assert_quarantined(quarantine.errors, dump, T_OK + 1, field, reason)  # headerless: row i is line i + 1
    assert attempts == without_line(xdmod_baseline, T_OK + 1)


@hostile(Outcome.ERROR)
def test_a_truncated_xdmod_gzip_is_refused_naming_the_file(real, tmp_path: Path):
    _, rows = real
    dump = truncate(xdmod(tmp_path / "xdmod.log.gz", rows * 50))
    with pytest.raises(InputFormatError) as refused:
        sacct_attempts(dump, clock(), header=XDMOD_FIELDS)
    assert (refused.value.path, refused.value.field) == (str(dump), "file")


XDMOD_DATA = Path(__file__).parent / "data" / "xdmod"  # Open XDMoD's own shredder test input (tests/data/README.md)
# Open XDMoD's earlier --format lists, as its shredder had them (classes/OpenXdmod/Shredder/Slurm.php at
# 7662c6bbf, eec93fc89 and 171ebe83f; tests/data/README.md), in sacct's spelling
SACCT_SPELLING = {name.lower(): name for name in (*XDMOD_FIELDS, "ReqGRES")}
XDMOD_9_0, XDMOD_9_5, XDMOD_8_5 = (
    tuple(SACCT_SPELLING[name] for name in fields.split(","))
    for fields in (
        "jobid,jobidraw,cluster,partition,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,"
        "state,nnodes,ncpus,reqcpus,reqmem,reqgres,reqtres,alloctres,timelimit,nodelist,jobname",
        "jobid,jobidraw,cluster,partition,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,"
        "state,nnodes,ncpus,reqcpus,reqmem,reqtres,alloctres,timelimit,nodelist,jobname",
        "jobid,jobidraw,cluster,partition,account,group,gid,user,uid,submit,eligible,start,end,elapsed,exitcode,"
        "state,nnodes,ncpus,reqcpus,reqmem,reqgres,reqtres,timelimit,nodelist,jobname",
    )
)


@hostile(Outcome.FIGURE)
def test_nnodes_0_with_a_host_list_takes_its_count_from_the_list(tmp_path: Path):
    """XDMoD's own sample: job 5692623 has NNodes 0 and NodeList `cpn-k16-35-01,cpn-k16-37-01`.
    XDMoD keeps the record; here it lands with the list's 2 nodes, counted as a repair."""
    stats, quarantine = SacctReadStats(), Quarantine(strict=False)
    attempts = xdmod_attempts(XDMOD_DATA / "accounting-logs.log", clock(), stats, quarantine)
    assert quarantine.errors == [] and stats.node_counts_from_node_list == 1
    assert [(a.job_id, a.n_nodes, len(a.nodes)) for a in attempts] == [
        ("4103947", 32, 32),
        ("4107166", 3, 3),
        ("4107219", 4, 4),
        ("5692623", 2, 2),
    ]
    assert attempts[3].nodes == ["cpn-k16-35-01", "cpn-k16-37-01"] and attempts[3].gpus == 2


@hostile(Outcome.FIGURE)
def test_a_sacct_row_with_nnodes_0_and_a_host_list_is_repaired_and_counted(real, baseline, tmp_path: Path):
    columns, rows = real
    stats = SacctReadStats()
    attempts = sacct_attempts(psv(tmp_path / "sacct.psv", columns, changed(rows, 1, NNodes="0")), clock(), stats)
    assert stats.node_counts_from_node_list == 1
    assert attempts == baseline  # t_multinode: node[1-2], 2 nodes


@hostile(Outcome.FIGURE)
def test_array_records_with_compressed_ids_are_one_attempt_each(tmp_path: Path):
    """XDMoD's sample of array records `4103947_100`, `_[1-3]`, `_[1,5]`, `_[9-11,20]`, ... sharing a
    JobIDRaw and a Submit: one attempt per record, its JobID kept (docs/methodology.md "Units")."""
    stats, quarantine = SacctReadStats(), Quarantine(strict=False)
    dump = XDMOD_DATA / "accounting-logs-with-job-arrays.log"
    attempts = xdmod_attempts(dump, clock(), stats, quarantine)
    assert quarantine.errors == [] and stats.duplicate_records == 0
    assert [a.job_id for a in attempts] == [
        "4103947_100",
        "4103947_[1-3]",
        "4103947_[1,5]",
        "4103947_[9-11,20]",
        "4103947_[91,100-102]",
        "4103947_[9-11,13,16-20]",
    ]
    assert {(a.job_id_raw, a.state, a.n_nodes, len(a.nodes)) for a in attempts} == {("4103947", "TIMEOUT", 32, 32)}


@pytest.mark.parametrize("layout", [XDMOD_9_5, XDMOD_9_0], ids=["xdmod-9.5", "xdmod-9.0"])
@hostile(Outcome.FIGURE)
def test_earlier_xdmod_layouts_are_read(real, xdmod_baseline, tmp_path: Path, layout: tuple[str, ...]):
    """Open XDMoD 9.0 (26 fields, ReqGRES, no QOS) and 9.5 (25 fields, 2021: no ReqGRES, no QOS) dumps
    are read by their own columns, found from the records; the QOS they lack is left empty."""
    _, rows = real
    filler = {**XDMOD_FILLER, "ReqGRES": "gpu:1"}
    dump = write(tmp_path / "xdmod.log", ["|".join({**filler, **row}[f] for f in layout) for row in rows])
    quarantine = Quarantine(strict=False)
    attempts = xdmod_attempts(dump, clock(), quarantine=quarantine)
    assert quarantine.errors == []
    assert attempts == [SimpleNamespace(**(vars(a) | {"qos": ""})) for a in xdmod_baseline]


@hostile(Outcome.ERROR)
def test_the_xdmod_layout_before_9_0_is_refused_with_one_error_naming_it(real, tmp_path: Path):
    """Before Open XDMoD 9.0 the dump had no AllocTRES: no GPU counts, so it is refused as a whole
    (not every line quarantined as an unreadable State)."""
    _, rows = real
    filler = {**XDMOD_FILLER, "ReqGRES": "gpu:1"}
    dump = write(tmp_path / "xdmod.log", ["|".join({**filler, **row}[f] for f in XDMOD_8_5) for row in rows])
    with pytest.raises(InputFormatError) as refused:
        xdmod_attempts(dump, clock(), quarantine=Quarantine(strict=False))
    assert (refused.value.path, refused.value.line, refused.value.field) == (str(dump), 1, "layout")
    assert "Open XDMoD before 9.0" in refused.value.reason and "AllocTRES" in refused.value.reason


# ---- sacct --json ------------------------------------------------------------------------------------------------

JOB_3 = 4  # jobs[4] of the real document is job 3 (t_ok): reported as line 5


@pytest.fixture(scope="module")
def document(slurm_fixtures: Path) -> dict:
    return json.loads((slurm_fixtures / "sacct.json").read_text())


@pytest.fixture(scope="module")
def json_baseline(slurm_fixtures: Path) -> list[SimpleNamespace]:
    return json_attempts(slurm_fixtures / "sacct.json", clock=clock())


def broken_job(document: dict, path: list, value) -> dict:
    """The document with jobs[JOB_3] changed at `path` (keys into the job) to `value`."""
    changed_document = json.loads(json.dumps(document))
    job = changed_document["jobs"][JOB_3]
    *parents, last = path
    for key in parents:
        job = job[key]
    job[last] = value
    return changed_document


def tres_count(value) -> list:
    return ["tres", "allocated", 5, "count", value]


@pytest.mark.parametrize(
    ("path", "value", "field", "reason"),
    [
        (["time", "start"], 0, "Start", "COMPLETED attempt ran: it needs a Start"),
        (["time", "end"], 0, "End", "COMPLETED attempt ended: it needs an End"),
        (["time", "end"], 1795317700, "End", "before the Start"),
        (["time", "submission"], 1, "Submit", "before 2000-01-01"),
        (["time", "end"], 4102444800, "End", "after the dump time"),  # 2100
        (["time", "end"], 10**13, f"jobs[{JOB_3}].time.end", "not a time"),  # past year 9999
        (["time", "start"], "soon", f"jobs[{JOB_3}].time.start", "expected a whole number"),
        (tres_count(None)[:-1], "abc", f"jobs[{JOB_3}].tres.allocated", "expected a whole number"),
        (tres_count(None)[:-1], 2.5, f"jobs[{JOB_3}].tres.allocated", "expected a whole number"),
        (tres_count(None)[:-1], -3, "AllocTRES", "a GPU count is negative"),
        (["nodes"], "gpu[1-100000]", "NodeList", "names 100,000 nodes that no other record names"),
        (["allocation_nodes"], 3, "NNodes", "the NodeList names 1 nodes"),
        (["allocation_nodes"], 10**30, f"jobs[{JOB_3}].allocation_nodes", "an integer of 31 digits"),
        (["allocation_nodes"], 2**63, f"jobs[{JOB_3}].allocation_nodes", "out of range"),
        (["name"], {"t": "ok"}, f"jobs[{JOB_3}].name", "expected a string"),
        (["nodes"], "node;rm -rf", "NodeList", "holds ';' at character 5"),
        (["time"], None, f"jobs[{JOB_3}]", "TypeError"),
        (["state"], {}, f"jobs[{JOB_3}]", "no 'current' field"),
    ],
    ids=lambda v: str(v)[:20],
)
@hostile(Outcome.QUARANTINE)
def test_a_broken_json_job_is_quarantined(document, json_baseline, tmp_path: Path, path, value, field, reason):
    dump = tmp_path / "jobs.json"
    dump.write_text(json.dumps(broken_job(document, path, value)))
    quarantine = Quarantine(strict=False)
    attempts = json_attempts(dump, quarantine=quarantine, clock=clock())
    assert_quarantined(quarantine.errors, dump, JOB_3 + 1, field, reason)
    assert attempts == without_line(json_baseline, JOB_3 + 1)


@hostile(Outcome.QUARANTINE)
def test_a_json_job_that_is_not_an_object_is_quarantined(document, json_baseline, tmp_path: Path):
    broken = json.loads(json.dumps(document))
    broken["jobs"][JOB_3] = [3, "t_ok"]
    dump = tmp_path / "jobs.json"
    dump.write_text(json.dumps(broken))
    quarantine = Quarantine(strict=False)
    attempts = json_attempts(dump, quarantine=quarantine, clock=clock())
    assert_quarantined(quarantine.errors, dump, JOB_3 + 1, f"jobs[{JOB_3}]", "a job is not a JSON object")
    assert attempts == without_line(json_baseline, JOB_3 + 1)


@hostile(Outcome.FIGURE)
def test_json_array_tasks_sharing_a_job_id_are_kept_apart(document, json_baseline, tmp_path: Path):
    shared = json.loads(json.dumps(document))
    for job in shared["jobs"]:
        if job["array"]["task_id"] is not None:
            job["job_id"] = 12
    dump = tmp_path / "jobs.json"
    dump.write_text(json.dumps(shared))
    stats = SacctJsonReadStats()
    attempts = json_attempts(dump, stats, clock=clock())
    assert stats.duplicate_records == 0
    assert sorted(a.job_id for a in attempts if a.job_id_raw == "12") == ["12_0", "12_1", "12_2"]
    assert len(attempts) == len(json_baseline)


@pytest.mark.parametrize(
    ("name", "content", "field"),
    [
        ("jobs.json", '{"jobs": {"1": {}}}', "jobs"),
        ("jobs.json", '{"jobs": [{"job_id": 1', "document"),
        ("jobs.json.gz", None, "file"),
    ],
    ids=["jobs-not-a-list", "truncated-json", "truncated-gzip"],
)
@hostile(Outcome.ERROR)
def test_a_json_document_that_cannot_be_read_is_refused(slurm_fixtures: Path, tmp_path: Path, name, content, field):
    dump = tmp_path / name
    if content is None:
        dump.write_bytes(gzip.compress((slurm_fixtures / "sacct.json").read_bytes() * 3))
        truncate(dump)
    else:
        dump.write_text(content)
    with pytest.raises(InputFormatError) as refused:
        json_attempts(dump, clock=clock())
    assert (refused.value.path, refused.value.field) == (str(dump), field)


# ---- sacctmgr show event, scontrol show node -----------------------------------------------------------------------

EVENTS = "sacctmgr_event.final.psv"
NODE3_EVENT = 4  # line 4: node3 DOWN "xid 79 gpu fell off bus", 03:22:04 - 03:22:33


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        (6, "node[1-20000000]", "more than any cluster has"),
        (6, "node$3", "holds '$' at character 5"),
        (6, "node[3-", ""),
        (3, "2026-11-22T03:21:00", "before the TimeStart 2026-11-22T03:22:04"),
        (8, "1970-01-01T00:00:00", "before 2000-01-01"),
        (8, "2099-01-01T00:00:00", "after the dump time"),
    ],
    ids=["huge", "host-name", "unreadable", "end-before-start", "1970", "future"],
)
@hostile(Outcome.QUARANTINE)
def test_a_broken_node_event_is_quarantined(slurm_fixtures: Path, tmp_path: Path, column: int, value: str, reason: str):
    lines = (slurm_fixtures / EVENTS).read_text().splitlines()
    whole = list(read_sacctmgr_events(slurm_fixtures / EVENTS, clock()))
    fields = lines[NODE3_EVENT - 1].split("|")
    fields[column] = value
    lines[NODE3_EVENT - 1] = "|".join(fields)
    events_file = write(tmp_path / "events.psv", lines)
    quarantine = Quarantine(strict=False)
    started = time.monotonic()
    events = list(read_sacctmgr_events(events_file, clock(), quarantine=quarantine))
    assert time.monotonic() - started < 5
    field = {3: "TimeEnd", 6: "NodeName", 8: "TimeStart"}[column]
    assert_quarantined(quarantine.errors, events_file, NODE3_EVENT, field, reason)
    assert events == [e for e in whole if e.source_line != NODE3_EVENT]


@hostile(Outcome.ERROR)
def test_a_truncated_gzip_of_node_events_is_refused(slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / EVENTS).read_text().splitlines()
    events_file = truncate(write(tmp_path / "events.psv.gz", lines[:1] + lines[1:] * 40))
    with pytest.raises(InputFormatError) as refused:
        list(read_sacctmgr_events(events_file, clock(), quarantine=Quarantine(strict=False)))
    assert (refused.value.path, refused.value.field) == (str(events_file), "file") and refused.value.line > 1


SNAPSHOT = "scontrol_show_node.down.txt"


@pytest.mark.parametrize(
    ("old", "new", "field", "reason"),
    [
        ("NodeName=node3 ", "NodeName=node$3 ", "NodeName", "node node$3 is not a host name"),
        ("[root@2026-11-22T03:22:04]", "[root@1970-01-01T00:00:00]", "Reason", "before 2000-01-01"),
        ("[root@2026-11-22T03:22:04]", "[root@2099-01-01T00:00:00]", "Reason", "after the dump time"),
        ("[root@2026-11-22T03:22:04]", "[root@2026-11-22T99:22:04]", "Reason", "hour"),
    ],
    ids=["host-name", "1970", "future", "unreadable"],
)
@hostile(Outcome.QUARANTINE)
def test_a_broken_scontrol_line_is_quarantined(slurm_fixtures: Path, tmp_path: Path, old, new, field, reason):
    text = (slurm_fixtures / SNAPSHOT).read_text()
    whole = list(read_scontrol_nodes(slurm_fixtures / SNAPSHOT, clock()))
    snapshot = tmp_path / "scontrol.txt"
    snapshot.write_text(text.replace(old, new))
    quarantine = Quarantine(strict=False)
    events = list(read_scontrol_nodes(snapshot, clock(), quarantine=quarantine))
    assert_quarantined(quarantine.errors, snapshot, 3, field, reason)  # node3's line
    assert events == [e for e in whole if e.node != "node3"]


@hostile(Outcome.ERROR)
def test_a_truncated_gzip_snapshot_is_refused(slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / SNAPSHOT).read_text().splitlines()
    snapshot = truncate(write(tmp_path / "scontrol.txt.gz", lines * 40))
    with pytest.raises(InputFormatError) as refused:
        list(read_scontrol_nodes(snapshot, clock(), quarantine=Quarantine(strict=False)))
    assert (refused.value.path, refused.value.field) == (str(snapshot), "file")


# ---- the window of valid times comes from the config ----------------------------------------------------------------


@hostile(Outcome.ERROR)
def test_an_earliest_record_that_is_not_a_date_is_refused_naming_the_key(tmp_path: Path):
    from flows.config.file import load_config
    from flows.core.errors import ConfigError

    config = tmp_path / "c.toml"
    config.write_text(
        'cluster = "ci"\n\n[[sources]]\nkind = "sacct_psv"\npath = "s.psv"\n\n[ingest]\nearliest_record = "soon"\n'
    )
    with pytest.raises(ConfigError) as refused:
        load_config(config)
    assert "earliest_record" in str(refused.value) and str(config) in str(refused.value)


@hostile(Outcome.QUARANTINE)
def test_the_landing_quarantines_a_record_before_the_configured_earliest_date(real, baseline, tmp_path: Path):
    """`[ingest] earliest_record` reaches the reader through the landing; the record is counted."""
    from flows.config.file import load_config
    from flows.core.months import Month
    from flows.ingest.land import land_month

    columns, rows = real
    fields = {"Submit": "2026-11-21T23:59:59", "Eligible": "2026-11-21T23:59:59"}
    psv(tmp_path / "sacct.psv", columns, changed(rows, T_OK, **fields))
    config = tmp_path / "c.toml"
    config.write_text(
        'cluster = "ci"\n\n[[sources]]\nkind = "sacct_psv"\npath = "sacct.psv"\n\n'
        '[paths]\ndata = "data"\n\n[ingest]\nearliest_record = 2026-11-22\n'
    )
    landed = land_month(load_config(config), Month.parse("2026-11"), as_of=AS_OF)
    manifest = json.loads((landed / "manifest.json").read_text())["sources"]["sacct_psv"]
    assert (manifest["records"], manifest["quarantined"]) == (len(baseline) - 1, 1)
    (quarantined,) = [json.loads(line) for line in (landed / "quarantine.jsonl").read_text().splitlines()]
    assert (quarantined["line"], quarantined["field"]) == (T_OK + 2, "Submit")
    assert quarantined["reason"].startswith("before 2026-11-22, the earliest valid date")
