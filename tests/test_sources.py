import csv
import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from job_records import json_attempts, sacct_attempts, sacct_with_bad_elapsed

from flows.core.months import Month
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sacct import SacctReadStats
from flows.ingest.sources.sacctmgr_events import read_sacctmgr_events
from flows.ingest.sources.syslog import SyslogReadStats
from flows.ingest.sources.xid_syslog import read_xid_syslog
from simulator import SimParams, simulate

UTC = ZoneInfo("UTC")


def by_name(attempts):
    return {(a.job_name, a.state): a for a in attempts}


def test_real_sacct_allocations(slurm_fixtures: Path):
    stats = SacctReadStats()
    attempts = sacct_attempts(slurm_fixtures / "sacct_fields_allocations.psv", UTC, stats)
    assert stats.attempts == 18 and stats.steps_skipped == 0
    jobs = by_name(attempts)
    assert jobs[("t_exit3", "FAILED")].gpus == 2  # typed + untyped GPU TRES counted once
    assert jobs[("t_exit3", "FAILED")].exit_code == 3
    assert jobs[("t_sigkill", "FAILED")].exit_signal == 9
    assert jobs[("t_multinode", "COMPLETED")].nodes == ["node1", "node2"]
    assert jobs[("t_cancel_running", "CANCELLED")].cancelled_by_uid == 0
    assert jobs[("t_still_running", "RUNNING")].end_at is None
    assert jobs[("t_timeout", "TIMEOUT")].elapsed_seconds == 87
    # requeue duplicates: same JobIDRaw, later Submit on the second record
    requeued = [a for a in attempts if a.job_name == "t_requeue"]
    assert [a.state for a in requeued] == ["REQUEUED", "COMPLETED"]
    assert requeued[1].submit_at > requeued[0].submit_at
    assert {a.job_id: a.job_id_raw for a in attempts if a.job_name == "t_array"} == {
        "12_0": "17",
        "12_1": "18",
        "12_2": "12",
    }
    node_fails = [a for a in attempts if a.state == "NODE_FAIL"]
    assert len(node_fails) == 3 and {a.nodes[0] for a in node_fails} == {"node3", "node4"}


def test_real_sacct_with_steps_and_pending(slurm_fixtures: Path):
    stats = SacctReadStats()
    attempts = sacct_attempts(slurm_fixtures / "sacct_fields_by_jobid.psv", UTC, stats)
    assert stats.steps_skipped == 20 and stats.attempts == 20
    pending = by_name(attempts)[("t_held", "PENDING")]
    assert pending.start_at is None and pending.nodes == [] and pending.gpus == 0
    cancelled_pending = by_name(attempts)[("t_cancel_pending", "CANCELLED")]
    assert cancelled_pending.nodes == [] and cancelled_pending.req_gpus == 0


def test_simulated_sacct_reads_with_the_same_reader(tmp_path: Path):
    truth = simulate(SimParams("sim", Month.parse("2026-10"), nodes=32, seed=3), tmp_path)
    stats = SacctReadStats()
    attempts = sacct_attempts(tmp_path / "sacct.psv", UTC, stats)
    lines = (tmp_path / "sacct.psv").read_text().splitlines()
    assert lines[0] == (slurm_shared_header := lines[0])
    assert len(attempts) == len(lines) - 1 == stats.attempts
    states = {a.state for a in attempts}
    assert {"COMPLETED", "FAILED", "PREEMPTED", "CANCELLED"} <= states
    # the dump is taken 30 h after the month's end: attempts run past the end (RUNNING or ended then)
    month_end = Month.parse("2026-10").end.replace(tzinfo=None)
    assert any(a.state == "RUNNING" or (a.end_at is not None and a.end_at >= month_end) for a in attempts)
    assert any(a.cancelled_by_uid is not None for a in attempts)
    assert any(len(a.nodes) > 1 for a in attempts)  # compressed host lists expanded
    for a in attempts:
        if a.nodes:
            assert len(a.nodes) == a.n_nodes
    # every injected failure's attempt is in the dump with an infra-like state
    keys = {(a.job_id_raw, a.submit_at.strftime("%Y-%m-%dT%H:%M:%S")): a.state for a in attempts}
    for failure in truth["infra_failures"]:
        assert keys[(str(failure["job_id"]), failure["submit"])] == failure["state"]
    assert slurm_shared_header.split("|")[:3] == ["JobID", "JobIDRaw", "JobName"]


def test_simulated_header_matches_real_sacct(slurm_fixtures: Path, tmp_path: Path):
    simulate(SimParams("sim", Month.parse("2026-10"), nodes=8, seed=1), tmp_path)
    real = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()[0]
    # plus AdminComment (a 22.05 field too), where the simulated site marks user and admin requeues
    assert (tmp_path / "sacct.psv").read_text().splitlines()[0] == real + "|AdminComment"
    real_events = (slurm_fixtures / "sacctmgr_event.final.psv").read_text().splitlines()[0]
    assert (tmp_path / "events.psv").read_text().splitlines()[0] == real_events


def test_corrupt_sacct_field_names_file_line_and_field(slurm_fixtures: Path, tmp_path: Path):
    bad = sacct_with_bad_elapsed(slurm_fixtures / "sacct_fields_allocations.psv", tmp_path)
    with pytest.raises(InputFormatError) as err:
        sacct_attempts(bad, UTC)
    assert err.value.line == 4 and err.value.field == "Elapsed"
    assert f"{bad}:4: field Elapsed='12:xx:00'" in str(err.value)


def test_row_with_extra_fields_is_an_error(slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    lines[2] = lines[2].replace("t_multinode", "a|b")
    bad = tmp_path / "sacct.psv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFormatError, match=r"sacct.psv:3: field row=.*has 21 fields, the header has 20"):
        sacct_attempts(bad, UTC)


def test_missing_column_is_an_error(tmp_path: Path):
    bad = tmp_path / "sacct.psv"
    bad.write_text("JobID|State\n1|COMPLETED\n")
    with pytest.raises(InputFormatError, match="missing columns JobIDRaw"):
        sacct_attempts(bad, UTC)


def one_row_dump(slurm_fixtures: Path, tmp_path: Path, **fields: str) -> Path:
    """The real dump's header and its t_ok row, with some fields replaced."""
    header, *rows = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    columns = header.split("|")
    row = dict(zip(columns, next(r for r in rows if "|t_ok|" in r).split("|"), strict=True))
    dump = tmp_path / "one.psv"
    dump.write_text(header + "\n" + "|".join({**row, **fields}[c] for c in columns) + "\n")
    return dump


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:01:27", 87),
        ("1-12:46:25", 132385),
        ("05:03", 303),
        ("10-00:00:00", 864000),
        ("00:00:01.500", 1),
        ("123:00:00", 442800),  # hours past a day without a day count
        ("00:75:00", 4500),  # not a clock time, but what the numbers say
    ],
)
def test_elapsed(slurm_fixtures: Path, tmp_path: Path, text: str, seconds: int):
    (attempt,) = sacct_attempts(one_row_dump(slurm_fixtures, tmp_path, Elapsed=text), UTC)
    assert attempt.elapsed_seconds == seconds


@pytest.mark.parametrize(
    ("tres", "gpus"),
    [
        ("billing=1,cpu=1,gres/gpu:h100=3,gres/gpu=3,mem=100M,node=1", 3),  # typed + untyped: counted once
        ("cpu=1,gres/gpu:a100=2,gres/gpu:h100=4", 6),  # typed only: summed
        ("billing=1,cpu=1,mem=100M,node=1", 0),
        ("cpu=1,gres/gpu=2,gres/gpumem=80G", 2),  # another TRES that starts with gres/gpu
        ("billing=12,gres/gpu=16", 16),  # the untyped count last
        ("billing=12,cpu=12,mem=1G", 0),  # a number where an untyped count would start
        ("", 0),
    ],
)
def test_gpus_from_tres(slurm_fixtures: Path, tmp_path: Path, tres: str, gpus: int):
    (attempt,) = sacct_attempts(one_row_dump(slurm_fixtures, tmp_path, AllocTRES=tres), UTC)
    assert attempt.gpus == gpus


@pytest.mark.parametrize(
    ("fields", "bad_field"),
    [
        ({"AllocTRES": "cpu=1,gres/gpu=two"}, "AllocTRES"),
        ({"ReqTRES": "gres/gpu:h100="}, "ReqTRES"),
        ({"State": "completed"}, "State"),
        ({"ExitCode": "0"}, "ExitCode"),
        ({"Submit": "Unknown"}, "Submit"),
        ({"Start": "2026-13-01T00:00:00"}, "Start"),
        ({"NNodes": "x"}, "NNodes"),
        ({"JobIDRaw": "abc"}, "JobIDRaw"),
        ({"NodeList": "node[1-"}, "NodeList"),
        ({"NodeList": "node[3-1]"}, "NodeList"),
    ],
)
def test_bad_field_is_quarantined_with_its_name(slurm_fixtures: Path, tmp_path: Path, fields: dict, bad_field: str):
    from flows.ingest.sources.quarantine import Quarantine

    quarantine = Quarantine(strict=False)
    assert sacct_attempts(one_row_dump(slurm_fixtures, tmp_path, **fields), UTC, quarantine=quarantine) == []
    (error,) = quarantine.errors
    assert (error.line, error.field, error.value) == (2, bad_field, next(iter(fields.values())))


@pytest.mark.parametrize(
    ("node_list", "nodes"),
    [
        ("gpu[008-010],cpu7", ["cpu7", "gpu008", "gpu009", "gpu010"]),
        ("rack[1-2]n[1-2]", ["rack1n1", "rack1n2", "rack2n1", "rack2n2"]),  # two brackets: ClusterShell
        ("n[1-2]-ib", ["n1-ib", "n2-ib"]),
        ("None assigned", []),
    ],
)
def test_host_lists_are_expanded(slurm_fixtures: Path, tmp_path: Path, node_list: str, nodes: list[str]):
    dump = one_row_dump(slurm_fixtures, tmp_path, NodeList=node_list, NNodes=str(max(len(nodes), 1)))
    (attempt,) = sacct_attempts(dump, UTC)
    assert attempt.nodes == nodes


def test_sql_host_lists_agree_with_the_scanner_and_clustershell(tmp_path: Path):
    """Every host list of a simulated month, expanded in SQL, equals the scanner's expansion (the
    lists SQL does not take itself go to it) and ClusterShell's (with group resolution off)."""
    import duckdb
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet

    from flows.ingest.sources.hostlists import expand_host_lists, host_list_nodes

    simulate(SimParams("sim", Month.parse("2026-10"), nodes=300, seed=5), tmp_path)
    with duckdb.connect() as con:
        con.execute(
            "CREATE TABLE jobs AS SELECT NodeList AS node_list FROM read_csv(?, delim = '|', all_varchar = true)",
            [str(tmp_path / "sacct.psv")],
        )
        assert expand_host_lists(con, "jobs") == {}
        members: dict[str, set[str]] = {}
        for node_list, node in con.execute(
            "SELECT node_list, node FROM host_list_members JOIN host_lists USING (list_id)"
        ).fetchall():
            members.setdefault(node_list, set()).add(node)
        assert len(members) > 100
    assert all(nodes == set(NodeSet(node_list, resolver=RESOLVER_NOGROUP)) for node_list, nodes in members.items())
    assert all(nodes == set(host_list_nodes(node_list)) for node_list, nodes in members.items())


def test_sql_local_times_agree_with_the_python_clock(slurm_fixtures: Path, tmp_path: Path):
    """The DuckDB conversion of local times resolves and counts DST doubts like LocalClock.to_utc."""
    from datetime import datetime

    from flows.ingest.sources.clock import LocalClock

    dump = one_row_dump(
        slurm_fixtures,
        tmp_path,
        Submit="2026-10-25T02:30:00",  # ambiguous in Berlin
        Eligible="2026-03-29T02:30:00",  # nonexistent in Berlin
        Start="2026-10-25T03:00:00",
        End="2026-10-25T12:00:00",
    )
    sql_clock, python_clock = LocalClock(ZoneInfo("Europe/Berlin")), LocalClock(ZoneInfo("Europe/Berlin"))
    (attempt,) = sacct_attempts(dump, sql_clock)
    for column, text in [
        ("submit_at", "2026-10-25T02:30:00"),
        ("eligible_at", "2026-03-29T02:30:00"),
        ("start_at", "2026-10-25T03:00:00"),
        ("end_at", "2026-10-25T12:00:00"),
    ]:
        expected = python_clock.to_utc(datetime.fromisoformat(text)).replace(tzinfo=None)
        assert getattr(attempt, column) == expected, column
    assert (sql_clock.ambiguous, sql_clock.nonexistent) == (python_clock.ambiguous, python_clock.nonexistent) == (1, 1)


def test_line_numbers_survive_blank_crlf_and_undecodable_lines(slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b"t_ok", b"t_\xffok")  # DuckDB rejects this line; Python reads it
    lines.insert(5, b"")  # a blank line
    dump = tmp_path / "sacct.psv"
    dump.write_bytes(b"\r\n".join(lines))
    attempts = sacct_attempts(dump, UTC)
    text_lines = dump.read_bytes().decode("utf-8", errors="replace").split("\r\n")
    assert len(attempts) == 18
    for a in attempts:
        assert text_lines[a.source_line - 1].split("|")[0] == a.job_id
        assert not a.reason.endswith("\r")
    assert next(a for a in attempts if a.job_name.startswith("t_\ufffd")).source_line == 4


def test_real_node_events(slurm_fixtures: Path):
    events = list(read_sacctmgr_events(slurm_fixtures / "sacctmgr_event.final.psv", UTC))
    assert [(e.node, e.state) for e in events] == [
        ("node2", "DRAIN"),
        ("node3", "DOWN"),
        ("node4", "DOWN*"),
        ("node4", "DRAIN"),
    ]
    assert events[1].reason == "xid 79 gpu fell off bus"


def test_xid_lines_from_real_reports_in_syslog_form(health_fixtures: Path, tmp_path: Path):
    with open(health_fixtures / "xid_lines.tsv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    kernel = [r for r in rows if r["raw_line"].startswith("kernel: NVRM: Xid")]
    log = tmp_path / "messages"
    # As rsyslog writes them: BSD timestamp and host in front of the journal's `kernel:` line.
    log.write_text(
        "".join(f"Oct  3 12:00:{i:02d} gpu0042 {r['raw_line']}\n" for i, r in enumerate(kernel))
        + "Oct  3 12:01:00 gpu0042 kernel: eth0: link up\n"
    )
    stats = SyslogReadStats()
    events = read_xid_syslog(log, UTC, 2026, stats=stats).to_pylist()
    assert [e["xid"] for e in events] == [int(r["xid"]) for r in kernel]
    assert stats.other_lines == 1 and events[0]["node"] == "gpu0042" and events[0]["ts"].year == 2026
    assert events[0]["pci"] == "PCI:0000:dc:00"


def test_xid_line_without_timestamp_is_an_error(tmp_path: Path):
    log = tmp_path / "xid.log"
    log.write_text(
        "2026-10-03T12:00:00+00:00 gpu1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
        "[ 1843.308145] NVRM: Xid (PCI:0000:b3:00): 79, GPU has fallen off the bus.\n"
    )
    with pytest.raises(InputFormatError, match=r"xid.log:2: field timestamp"):
        read_xid_syslog(log, UTC, 2026)


def test_remote_kernel_log_lines_from_real_reports(health_fixtures: Path, tmp_path: Path):
    with open(health_fixtures / "xid_lines.tsv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["raw_line"].startswith("192.168.")]
    log = tmp_path / "remote.log"
    log.write_text("".join(r["raw_line"] + "\n" for r in rows))
    stats = SyslogReadStats()
    events = read_xid_syslog(log, UTC, 2026, stats=stats).to_pylist()
    assert [e["xid"] for e in events] == [int(r["xid"]) for r in rows if r["raw_line"].count("NVRM: Xid")]
    assert events[0]["node"] == "192.168.11.119"
    assert events[0]["ts"].isoformat() == "2026-04-22T21:29:21.342163"  # UTC; nanoseconds cut to microseconds
    assert stats.other_lines == len(rows) - len(events)


def test_gzip_dump_reads_like_the_plain_one(slurm_fixtures: Path, tmp_path: Path):
    import gzip

    plain = slurm_fixtures / "sacct_fields_allocations.psv"
    packed = tmp_path / "sacct.psv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert [a.job_id for a in sacct_attempts(packed, UTC)] == [a.job_id for a in sacct_attempts(plain, UTC)]


def test_empty_file_fails_naming_it(tmp_path: Path):
    empty = tmp_path / "sacct.psv"
    empty.write_text("")
    with pytest.raises(InputFormatError, match=r"sacct.psv:1: field header='': missing columns JobID"):
        sacct_attempts(empty, UTC)


def test_undecodable_job_name_is_kept(slurm_fixtures: Path, tmp_path: Path):
    data = (slurm_fixtures / "sacct_fields_allocations.psv").read_bytes().replace(b"t_ok", b"t_\xff\xfeok")
    bad = tmp_path / "sacct.psv"
    bad.write_bytes(data)
    names = [a.job_name for a in sacct_attempts(bad, UTC)]
    assert "t_\ufffd\ufffdok" in names and len(names) == 18


def test_pipe_in_job_name_with_the_0x1f_delimiter(slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    usv = tmp_path / "sacct.usv"
    usv.write_text("\n".join(line.replace("|", "\x1f") for line in lines).replace("t_pipe", "a|b") + "\n")
    attempts = sacct_attempts(usv, UTC)
    assert len(attempts) == 18 and "a|b" in {a.job_name for a in attempts}


def test_multi_line_job_name_is_rejoined(slurm_fixtures: Path, tmp_path: Path):
    text = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().replace("t_exit3", "first line\nsecond line")
    dump = tmp_path / "sacct.psv"
    dump.write_text(text)
    attempts = sacct_attempts(dump, UTC)
    assert len(attempts) == 18
    rejoined = next(a for a in attempts if a.job_name.startswith("first"))
    assert rejoined.job_name == "first line\nsecond line" and rejoined.exit_code == 3 and rejoined.source_line == 5


def test_truncated_last_row_is_quarantined(slurm_fixtures: Path, tmp_path: Path):
    from flows.ingest.sources.quarantine import Quarantine

    text = (slurm_fixtures / "sacct_fields_allocations.psv").read_text()
    dump = tmp_path / "sacct.psv"
    dump.write_text(text[: text.rindex("|COMPLETED|")])  # the file ends in the middle of a row
    quarantine = Quarantine(strict=False)
    attempts = sacct_attempts(dump, UTC, quarantine=quarantine)
    assert len(attempts) == 17
    (error,) = quarantine.errors
    assert error.line == 19 and error.field == "row" and "the header has 20" in error.reason


def test_het_jobs_pending_arrays_and_unknown_states(slurm_fixtures: Path, tmp_path: Path):
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    ok = lines[3].split("|")  # t_ok
    het0 = [*ok]
    het0[0:3] = ["40+0", "40", "het"]
    het1 = [*ok]
    het1[0:3] = ["40+1", "41", "het"]
    pending = [*ok]
    pending[0:3], pending[7] = ["50_[1-3]", "50", "sweep"], "PENDING"
    pending[11:14] = ["Unknown", "Unknown", "00:00:00"]
    special = [*ok]
    special[0:3], special[7] = ["60", "60", "odd"], "SPECIAL_EXIT"
    dump = tmp_path / "sacct.psv"
    dump.write_text("\n".join([*lines, *("|".join(r) for r in (het0, het1, pending, special))]) + "\n")
    by_id = {a.job_id: a for a in sacct_attempts(dump, UTC)}
    assert (by_id["40+0"].job_id_raw, by_id["40+1"].job_id_raw) == ("40", "41")  # two attempts
    assert by_id["50_[1-3]"].state == "PENDING" and by_id["50_[1-3]"].start_at is None
    assert by_id["60"].state == "SPECIAL_EXIT"  # kept: the warehouse counts it as outcome `unknown`


def test_dst_ambiguous_and_nonexistent_local_times_are_resolved_and_counted(tmp_path: Path):
    from zoneinfo import ZoneInfo

    from flows.ingest.sources.clock import LocalClock

    berlin = LocalClock(ZoneInfo("Europe/Berlin"))
    log = tmp_path / "xid.log"
    log.write_text(
        # 2026-10-25 02:30 happens twice in Berlin; 2026-03-29 02:30 never happens
        "2026-10-25T02:30:00 gpu1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
        "2026-03-29T02:30:00 gpu1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
        "2026-10-25T12:00:00 gpu1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
    )
    events = [ts.isoformat() for ts in read_xid_syslog(log, berlin, 2026)["ts"].to_pylist()]  # naive UTC
    assert events[0] == "2026-10-25T00:30:00"  # the first 02:30 (still CEST)
    assert events[1] == "2026-03-29T01:30:00"  # read with the offset before the change (+01:00)
    assert events[2] == "2026-10-25T11:00:00"
    assert (berlin.ambiguous, berlin.nonexistent) == (1, 1)


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "Europe/Berlin"])
def test_the_doubtful_time_counts_are_one_row_with_or_without_an_offset_change(zone: str):
    import duckdb

    from flows.ingest.sources.clock import LocalClock

    clock = LocalClock(ZoneInfo(zone))
    changes = clock.offset_changes(datetime(2026, 10, 1), datetime(2026, 10, 31, 23))
    counts = LocalClock.sql_doubtful_counts("ts", changes)
    with duckdb.connect() as con:
        con.execute(
            "CREATE TABLE t AS SELECT TIMESTAMP '2026-10-25 02:30:00' + INTERVAL (i) SECOND AS ts FROM range(5) r(i)"
        )
        # a bare constant here would give a row per row: millions of Python tuples for a month of job records
        rows = con.execute(f"SELECT {', '.join(counts)} FROM t").fetchall()
    assert rows == [(5 if zone == "Europe/Berlin" else 0, 0)]


def test_open_xdmod_headerless_dump(slurm_fixtures: Path, tmp_path: Path):
    from flows.ingest.sources.sacct import XDMOD_FIELDS

    with open(slurm_fixtures / "sacct_fields_allocations.psv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="|"))
    rows[1]["JobName"] = "a|b"  # the last column: a `|` in it survives
    filler = {
        "Cluster": "ci",
        "Group": "root",
        "GID": "0",
        "UID": "0",
        "NCPUS": "1",
        "ReqCPUS": "1",
        "ReqMem": "100M",
        "Timelimit": "UNLIMITED",
    }
    dump = tmp_path / "xdmod.log"
    dump.write_text("".join("|".join({**filler, **row}[f] for f in XDMOD_FIELDS) + "\n" for row in rows))
    attempts = sacct_attempts(dump, UTC, header=XDMOD_FIELDS)
    plain = sacct_attempts(slurm_fixtures / "sacct_fields_allocations.psv", UTC)
    assert [(a.job_id, a.state, a.gpus, a.nodes, a.end_at) for a in attempts] == [
        (a.job_id, a.state, a.gpus, a.nodes, a.end_at) for a in plain
    ]
    assert attempts[1].job_name == "a|b" and attempts[0].source_line == 1


def test_sacct_json_reads_like_the_text_dump(slurm_fixtures: Path):
    from flows.ingest.sources.sacct_json import SacctJsonReadStats

    stats = SacctJsonReadStats()
    from_json = {(a.job_id, a.submit_at): a for a in json_attempts(slurm_fixtures / "sacct.json", stats)}
    from_text = {
        (a.job_id, a.submit_at): a for a in sacct_attempts(slurm_fixtures / "sacct_fields_allocations.psv", UTC)
    }
    assert set(from_json) == set(from_text) and len(from_json) == 18
    fields = (
        "job_id_raw",
        "state",
        "gpus",
        "req_gpus",
        "nodes",
        "n_nodes",
        "start_at",
        "end_at",
        "eligible_at",
        "exit_signal",
        "cancelled_by_uid",
    )
    for key, text in from_text.items():
        assert [getattr(from_json[key], f) for f in fields] == [getattr(text, f) for f in fields], key
    assert stats.exit_codes_unreliable  # 22.05: `exit 3` shows as 0 in JSON (every job of the scenario)
    exit3 = next(key for key in from_text if key[0] == "4")  # t_exit3
    assert (from_text[exit3].exit_code, from_json[exit3].exit_code) == (3, 0)


def test_newer_json_shapes(tmp_path: Path):
    """data_parser v0.0.39+: state lists and {set, infinite, number} times and counts."""

    job = {
        "job_id": 41,
        "name": "het",
        "user": "u",
        "account": "a",
        "partition": "p",
        "qos": "q",
        "array": {"job_id": 0, "task_id": {"set": False, "infinite": False, "number": 0}},
        "het": {"job_id": 40, "job_offset": {"set": True, "infinite": False, "number": 1}},
        "state": {"current": ["NODE_FAIL"], "reason": "None"},
        "exit_code": {"status": ["SUCCESS"], "return_code": {"set": True, "infinite": False, "number": 0}},
        "time": {
            "submission": 1795317715,
            "eligible": 1795317715,
            "start": 1795317718,
            "end": {"set": True, "infinite": False, "number": 1795317724},
            "elapsed": 6,
        },
        "allocation_nodes": 2,
        "nodes": "gpu[01-02]",
        "tres": {"allocated": [{"type": "gres", "name": "gpu:h100", "count": 16}], "requested": []},
    }
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"jobs": [job]}))
    (attempt,) = json_attempts(path)
    assert (attempt.job_id, attempt.job_id_raw, attempt.state, attempt.gpus) == ("40+1", "41", "NODE_FAIL", 16)
    assert attempt.nodes == ["gpu01", "gpu02"] and attempt.end_at.isoformat() == "2026-11-22T03:22:04"


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_latin1_dump_keeps_every_row_and_its_line(slurm_fixtures: Path, tmp_path: Path, suffix: str):
    """Many lines DuckDB rejects as not UTF-8 (a Latin-1 file): each is read again, numbered right."""
    import gzip

    header, *rows = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    columns = header.split("|")
    ok = dict(zip(columns, next(r for r in rows if "|t_ok|" in r).split("|"), strict=True))
    lines = [header]
    for i in range(1, 1501):
        name = f"café_{i}" if i % 3 else f"plain_{i}"
        lines.append("|".join({**ok, "JobID": str(i), "JobIDRaw": str(i), "JobName": name}[c] for c in columns))
    data = ("\n".join(lines) + "\n").encode("latin-1")
    dump = tmp_path / f"sacct.psv{suffix}"
    dump.write_bytes(gzip.compress(data) if suffix else data)
    stats = SacctReadStats()
    attempts = sacct_attempts(dump, UTC, stats)
    assert len(attempts) == 1500 and stats.undecodable_lines == 1000
    for a in attempts:
        assert a.source_line == int(a.job_id) + 1
        assert a.job_name == (f"caf\ufffd_{a.job_id}" if int(a.job_id) % 3 else f"plain_{a.job_id}")


def test_quotes_and_tabs_in_names_are_kept_verbatim(slurm_fixtures: Path, tmp_path: Path):
    name = "say \"hi\",\tthen 'bye'"
    (attempt,) = sacct_attempts(one_row_dump(slurm_fixtures, tmp_path, JobName=name), UTC)
    assert attempt.job_name == name


def test_syslog_times_that_do_not_exist_are_quarantined_and_offsets_applied(tmp_path: Path):
    log = tmp_path / "xid.log"
    xid = "kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."
    log.write_text(
        f"Feb 30 12:00:00 gpu1 {xid}\n"
        f"2026-10-03T24:00:00+00:00 gpu2 {xid}\n"
        f"2026-10-03T12:00:00.5+0200 gpu3 {xid}\n"
        f"Oct  3 12:00:00.000123 gpu4 {xid}\n"
    )
    quarantine = Quarantine(strict=False)
    stats = SyslogReadStats()
    rows = read_xid_syslog(log, UTC, 2026, stats=stats, quarantine=quarantine).to_pylist()
    assert [(e.line, e.field, e.value, e.reason) for e in quarantine.errors] == [
        (1, "timestamp", "Feb 30 12:00:00", "not a valid date and time"),
        (2, "timestamp", "2026-10-03T24:00:00+00:00", "not a valid date and time"),
    ]
    assert [(r["node"], r["ts"], r["source_line"]) for r in rows] == [
        ("gpu3", datetime(2026, 10, 3, 10, 0, 0, 500000), 3),
        ("gpu4", datetime(2026, 10, 3, 12, 0, 0, 123), 4),
    ]
    assert (stats.lines, stats.matched, stats.other_lines) == (4, 4, 0)


def test_an_xid_message_is_read_from_its_first_full_match(tmp_path: Path):
    log = tmp_path / "xid.log"
    log.write_text(
        "2026-10-03T12:00:00+00:00 gpu1 kernel: NVRM: Xid seen before; "
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
        "2026-10-03T12:00:01+00:00 gpu1 kernel: NVRM: Xid without its fields\n"
    )
    stats, quarantine = SyslogReadStats(), Quarantine(strict=False)
    rows = read_xid_syslog(log, UTC, 2026, stats=stats, quarantine=quarantine).to_pylist()
    assert [(r["xid"], r["pci"], r["message"], r["source_line"]) for r in rows] == [
        (79, "PCI:0000:3b:00", "pid=1, GPU has fallen off the bus.", 1)
    ]
    # the marker without its fields is a lost Xid, quarantined (issue 50), never an ordinary line
    assert [(e.line, e.field) for e in quarantine.errors] == [(2, "xid")]
    assert (stats.lines, stats.matched, stats.other_lines) == (2, 2, 0)
