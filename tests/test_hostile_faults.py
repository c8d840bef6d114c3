"""The hostile-input corpus, faults part (issue 21): a damaged sent-log, warehouse or landed month, a
full disk, inputs that are not what the config says, leftovers of killed runs and runs sharing a
warehouse. Each case is refused with one clear error, set aside and counted, or handled with the
right result, and leaves everything else as it was. The functions are called directly on tiny
inputs (no dbt build, no Prefect): tests/test_faults.py runs the pipeline end to end."""

import errno
import json
import logging
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from hostile import Outcome, hostile
from saved_month import saved_metrics

import flows.ingest.land
import flows.warehouse.build
from flows.cli import main
from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.atomic import replace_dir_atomically
from flows.core.errors import EXIT_FAILED, EXIT_INPUT, DiskFullError, MissingInputError, exit_code
from flows.core.months import Month
from flows.core.runlock import ClusterBusyError, run_lock
from flows.delivery.deliver import deliver_report, delivery_status
from flows.delivery.sent_log import DAMAGED, SENDING, SENT, SentLog, SentLogError, SentRecord
from flows.delivery.subject import MonthSubject
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.ingest.manifest import LandedMonthError, read_manifest
from flows.pipeline import clear_killed_runs
from flows.warehouse.build import WarehouseBusyError, build_months, check_landed, landed_tables, warehouse_problem
from simulator import SimParams, simulate

MONTH = Month.parse("2026-10")


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every file's bytes (None for a directory) under `directory`."""
    return {
        str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None for p in sorted(directory.rglob("*"))
    }


@pytest.fixture(autouse=True)
def _warnings_reach_caplog(monkeypatch) -> None:
    """The CLI prints these loggers itself (flows.cli.show_progress) and stops their propagation."""
    for name in ("flows.warehouse.build", "flows.delivery.sent_log", "flows.core.runlock"):
        monkeypatch.setattr(logging.getLogger(name), "propagate", True)


@pytest.fixture(scope="module")
def landed_once(tmp_path_factory) -> Path:
    """A 4-node cluster's month, simulated and landed (about a second, once)."""
    work = tmp_path_factory.mktemp("landed")
    config = load_config(write_demo_config(work, "c", work / "reports"))
    simulate(SimParams("c", MONTH, nodes=4, seed=3), work / "sim" / "c" / str(MONTH))
    land_month(config, MONTH)
    return work


@pytest.fixture
def cluster(landed_once: Path, tmp_path: Path) -> ClusterConfig:
    """A copy of `landed_once` of the test's own: its config, inputs and landing (relative paths)."""
    shutil.copytree(landed_once, tmp_path / "c", symlinks=True)
    return load_config(tmp_path / "c" / "c.toml")


# ---- the sent-log ------------------------------------------------------------------------------------------


def sent_twice(path: Path) -> list[bytes]:
    """A log of two months sent by email (a `sending` and a `sent` record each); returns its lines."""
    log = SentLog(path)
    for month, message_id in (("2026-09", "<a@example.org>"), (str(MONTH), "<b@example.org>")):
        sending = SentRecord("c", month, SENDING, "f" * 64, message_id, ("ops@example.org",), "s", "report")
        log.append(sending)
        log.append(replace(sending, status=SENT))
    return path.read_bytes().splitlines(keepends=True)


def report_dir(tmp_path: Path) -> Path:
    """A report directory with the figures delivery reads first (no email can be built from it)."""
    directory = tmp_path / "report"
    directory.mkdir()
    (directory / "metrics.json").write_text(json.dumps(saved_metrics()))
    return directory


@hostile(Outcome.QUARANTINE)
@pytest.mark.parametrize("cut", [12, 40, 120], ids=["before its month", "before its message id", "mid-line"])
def test_a_sent_log_cut_mid_line_is_repaired_and_never_sends_the_month_again(
    tmp_path, smtp_server, caplog, cut: int
) -> None:
    data = tmp_path / "data"
    log_path = data / "delivery" / "c.jsonl"
    lines = sent_twice(log_path)
    log_path.write_bytes(b"".join(lines[:-1]) + lines[-1][:cut])  # the last line, a `sent` record, cut short
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    config = replace(config, email=load_config_email(tmp_path, smtp_server.port))

    report = report_dir(tmp_path)
    outcome = deliver_report(config, MonthSubject(MONTH), report)

    assert smtp_server.messages == []  # it may have gone out: not a second time unasked
    assert outcome.done == [
        "not emailed again: line 4 of c.jsonl could not be read (set aside in c.jsonl.damaged), so it may have "
        "gone out (--resend to send)"
    ]
    assert f"sent-log {log_path} line 4 could not be read" in caplog.text and f"a record of {MONTH}" in caplog.text
    repaired = log_path.read_bytes().splitlines(keepends=True)
    assert repaired[:3] == lines[:3]  # the rest as it was
    damaged = SentLog(log_path).records()[-1]
    assert (damaged.month, damaged.status, damaged.message_id) == (str(MONTH), DAMAGED, "<b@example.org>")
    assert lines[-1][:cut] in (log_path.parent / "c.jsonl.damaged").read_bytes()  # set aside, not dropped
    assert delivery_status(config, MonthSubject(MONTH), report) == (  # a backfill skips it too
        True,
        "report built; line 4 of c.jsonl could not be read (set aside in c.jsonl.damaged), so it may have gone out "
        "(--resend to send)",
    )


def load_config_email(tmp_path: Path, port: int):
    path = tmp_path / "email.toml"
    path.write_text(
        'cluster = "c"\n[[sources]]\nkind = "sacct_psv"\npath = "x"\n[email]\nfrom = "r@example.org"\n'
        f'to = ["ops@example.org"]\nsmtp_host = "127.0.0.1"\nsmtp_port = {port}\nsmtp_security = "plain"\n'
    )
    return load_config(path).email


@hostile(Outcome.QUARANTINE)
def test_a_line_of_garbage_in_the_sent_log_is_set_aside_and_the_other_months_read(tmp_path, caplog) -> None:
    log_path = tmp_path / "c.jsonl"
    lines = sent_twice(log_path)
    log_path.write_bytes(b"".join(lines[:2]) + b"\x00\xff not json\n" + b"".join(lines[2:]))
    log = SentLog(log_path)
    assert log.last_sent("2026-09").status == SENT and log.last_sent(str(MONTH)).status == SENT
    assert (
        "line 3 could not be read" in caplog.text and "it names no month and follows no unfinished send" in caplog.text
    )
    assert [r.status for r in log.records()] == [SENDING, SENT, DAMAGED, SENDING, SENT]
    assert b"\x00\xff not json" in (tmp_path / "c.jsonl.damaged").read_bytes()


@hostile(Outcome.ERROR)
def test_a_sent_log_that_is_a_directory_is_one_clear_error_and_nothing_is_sent(tmp_path) -> None:
    log_path = tmp_path / "c.jsonl"
    log_path.mkdir()
    with pytest.raises(SentLogError, match=r"c.jsonl: the sent-log, which records the reports sent, cannot be read"):
        SentLog(log_path).last_sent(str(MONTH))
    assert exit_code(SentLogError("x")) == EXIT_FAILED
    assert [p.name for p in tmp_path.iterdir()] == ["c.jsonl"] and log_path.is_dir()  # nothing else changed


@hostile(Outcome.FIGURE)
def test_a_killed_writers_temporary_sent_log_is_removed_by_the_next_write(tmp_path) -> None:
    log_path = tmp_path / "c.jsonl"
    sent_twice(log_path)
    (tmp_path / ".c.jsonl.x1y2z3").write_text("half a log")  # a run killed while writing
    SentLog(log_path).append(SentRecord("c", "2026-11", SENDING, "h", "<c@x>", (), "s", "report"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]
    assert len(SentLog(log_path).records()) == 5


# ---- the warehouse ----------------------------------------------------------------------------------------


def land_fake(config: ClusterConfig, month: str, *, without: str | None = None) -> Path:
    """A landed month on disk as the landing leaves it (manifest and one Parquet file per table, empty)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    landed = config.data_dir / "landed" / config.cluster / month
    landed.mkdir(parents=True)
    manifest = {"sources": {}, "as_of": {"time": f"{month}-28T00:00:00"}, "quarantine_sample": []}
    (landed / "manifest.json").write_text(json.dumps(manifest))
    for table in landed_tables(flows.warehouse.build.DBT_PROJECT_DIR):
        if table != without:
            pq.write_table(pa.table({"x": pa.array([], pa.int64())}), landed / f"{table}.parquet")
    return landed


@pytest.fixture
def builds(monkeypatch) -> list[str]:
    """The months dbt is asked to build, in order, each build's months joined by "+" (dbt itself
    replaced: tests/test_faults.py builds for real)."""
    built: list[str] = []

    def build(config: ClusterConfig, months: dict[Month, Path], load_seeds: bool = True) -> dict[str, int]:
        config.warehouse_path.parent.mkdir(parents=True, exist_ok=True)
        for month, landed_dir in months.items():
            assert landed_dir == config.data_dir / "landed" / config.cluster / str(month)
        duckdb.connect(str(config.warehouse_path)).close()
        built.append("+".join(str(month) for month in sorted(months)))
        return {"success": 1}

    monkeypatch.setattr(flows.warehouse.build, "_build", build)
    return built


@hostile(Outcome.FIGURE)
def test_a_corrupt_warehouse_is_kept_aside_and_rebuilt_from_every_landed_month(tmp_path, builds, caplog) -> None:
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    for month in ("2026-08", "2026-11", "2026-09"):
        land_fake(config, month)
    landed = land_fake(config, str(MONTH))
    (config.data_dir / "landed" / "c" / ".2026-07.tmp-99").mkdir()  # a killed run's: no month
    config.warehouse_path.parent.mkdir(parents=True)
    config.warehouse_path.write_bytes(b"not a database" * 100)

    assert build_months(config, {MONTH: landed}) == {"success": 1}

    assert builds == ["2026-08+2026-09+2026-10+2026-11"]  # one build of every landed month
    (aside,) = config.warehouse_path.parent.glob("c.duckdb.corrupt-*")
    assert aside.read_bytes() == b"not a database" * 100  # kept as it was, for a post-mortem
    assert f"warehouse {config.warehouse_path} cannot be opened (IO Error: " in caplog.text
    assert f"kept aside as {aside.name}; rebuilding it from the 4 landed months" in caplog.text
    assert warehouse_problem(config.warehouse_path) is None


@hostile(Outcome.FIGURE)
def test_a_missing_warehouse_is_rebuilt_leaving_out_a_landed_month_that_lost_a_table(tmp_path, builds, caplog) -> None:
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    land_fake(config, "2026-08")
    land_fake(config, "2026-09", without="attempts")
    landed = land_fake(config, str(MONTH))

    build_months(config, {MONTH: landed})

    assert builds == ["2026-08+2026-10"]
    missing = config.data_dir / "landed" / "c" / "2026-09" / "attempts.parquet"
    assert f"c 2026-09 left out of the rebuilt warehouse: {missing} does not exist; run the month again" in caplog.text
    build_months(config, {MONTH: landed})
    assert builds == ["2026-08+2026-10", "2026-10"]  # once there, no rebuild


@hostile(Outcome.ERROR)
@pytest.mark.parametrize(
    "damage, expected",
    [
        pytest.param({"manifest.json": b'{"sources": {}, "as_of": '}, r"manifest.json:1: not JSON", id="manifest cut"),
        pytest.param({"manifest.json": b"[]"}, r"manifest.json: not a JSON object", id="manifest a list"),
        pytest.param(
            {"manifest.json": b'{"sources": {}}'}, r"manifest.json: field as_of.time is missing", id="no as_of"
        ),
        pytest.param({"manifest.json": None}, r"manifest.json does not exist", id="manifest deleted"),
        pytest.param({"host_lists.parquet": None}, r"host_lists.parquet does not exist", id="parquet deleted"),
        pytest.param({"attempts.parquet": b"PAR1 cut"}, r"attempts.parquet: not a Parquet file", id="parquet garbage"),
    ],
)
def test_a_damaged_landed_month_is_named_with_its_file(cluster, damage: dict, expected: str) -> None:
    landed = cluster.data_dir / "landed" / "c" / str(MONTH)
    for name, content in damage.items():
        (landed / name).unlink() if content is None else (landed / name).write_bytes(content)
    before = snapshot(cluster.data_dir)
    with pytest.raises(LandedMonthError, match=f"^{landed}/{expected}.*run the month again"):
        check_landed(landed, landed_tables(flows.warehouse.build.DBT_PROJECT_DIR))
    assert snapshot(cluster.data_dir) == before


HOLD_DUCKDB = (
    "import duckdb, sys, time\ncon = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == 'ro')\n"
    "print('held', flush=True)\ntime.sleep(60)\n"
)


@hostile(Outcome.ERROR)
@pytest.mark.parametrize("mode", ["ro", "rw"], ids=["open to read", "open to write"])
def test_a_warehouse_another_program_has_open_is_a_clear_error_not_duckdbs(tmp_path, mode: str) -> None:
    warehouse = tmp_path / "c.duckdb"
    duckdb.connect(str(warehouse)).close()
    before = warehouse.read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_DUCKDB, str(warehouse), mode], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(WarehouseBusyError, match=f"^warehouse {warehouse} is open in another process; close it"):
            warehouse_problem(warehouse)
    finally:
        holder.kill()
        holder.wait()
    assert warehouse.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["c.duckdb"]


@hostile(Outcome.ERROR)
def test_two_configs_sharing_a_warehouse_but_not_their_data_take_turns(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    first = load_config(write_demo_config(tmp_path / "a", "c", tmp_path / "reports"))
    second = replace(first, data_dir=tmp_path / "b" / "data", warehouse_path=first.warehouse_path)
    with run_lock(first):
        with pytest.raises(ClusterBusyError, match=f"^warehouse {first.warehouse_path} is being processed by pid "):
            with run_lock(second, timeout=0.2):
                pass
        assert not (second.data_dir / "locks" / "c.lock").exists()  # its cluster lock given back
    with run_lock(second, timeout=0):
        pass


def test_a_run_inside_a_run_of_the_same_config_has_its_locks_and_gives_them_back_once(tmp_path) -> None:
    """A later month refreshed by the run that built an earlier one (flows/pipeline.py) runs inside it."""
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    lock = config.data_dir / "locks" / "c.lock"
    with run_lock(config, timeout=0):
        with run_lock(config, timeout=0):
            assert lock.exists()
        assert lock.read_text().split("\n")[0] == str(os.getpid())  # still held by the outer run
    with run_lock(config, timeout=0):  # given back
        pass


@hostile(Outcome.FIGURE)
def test_a_lock_file_naming_no_holder_left_by_a_killed_run_is_cleared(tmp_path, caplog) -> None:
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    lock = config.data_dir / "locks" / "c.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")  # killed between creating the file and writing its pid
    os.utime(lock, (0, 0))
    with run_lock(config, timeout=0):
        assert lock.read_text().split("\n")[0] == str(os.getpid())
    assert "cleared the lock of cluster c that names no holder" in caplog.text


# ---- landing: the inputs, the raw copies, a full disk ---------------------------------------------------------


@hostile(Outcome.FIGURE)
def test_the_manifests_sha256_is_what_sha256sum_prints_and_a_relanding_gives_the_same(cluster) -> None:
    landed = cluster.data_dir / "landed" / "c" / str(MONTH)
    sources = read_manifest(landed).inputs()
    events = cluster.config_path.parent / "sim" / "c" / str(MONTH) / "events.psv"
    assert (
        sources["sacctmgr_events_psv"]["sha256"] == subprocess.check_output(["sha256sum", events]).split()[0].decode()
    )
    dcgm = cluster.config_path.parent / "sim" / "c" / str(MONTH) / "dcgm"
    listing = "find . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum"
    assert (
        sources["dcgm_health_dir"]["sha256"]
        == subprocess.check_output(listing, shell=True, cwd=dcgm).split()[0].decode()
    )
    land_month(cluster, MONTH)
    assert {k: v.sha256 for k, v in read_manifest(landed).sources.items()} == {
        k: v["sha256"] for k, v in sources.items()
    }


@hostile(Outcome.ERROR)
def test_a_full_disk_during_the_raw_copy_is_one_error_and_changes_nothing(cluster, monkeypatch) -> None:
    before = snapshot(cluster.data_dir)
    real_open = open

    class FullDisk:
        """A file being written on a device that is full (the raw copies before it were written)."""

        def __init__(self, path, mode):
            self.file = real_open(path, mode)

        def write(self, chunk: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

    def opening(path, mode="r", *args, **kwargs):
        if "w" in mode and "/raw/" in str(path) and Path(path).name == "xid.log":
            return FullDisk(path, mode)
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(flows.ingest.land, "open", opening, raising=False)
    with pytest.raises(DiskFullError) as raised:
        land_month(cluster, MONTH)
    message = str(raised.value)
    raw = cluster.data_dir / "raw" / "c" / f".{MONTH}.tmp-{os.getpid()}" / "xid.log"
    assert message == (
        f"no space left on the device writing the raw copy {raw} of {cluster.config_path.parent}/sim/c/{MONTH}/"
        "xid.log: No space left on device; free some space and run again (earlier results are unchanged)"
    )
    assert exit_code(raised.value) == EXIT_FAILED
    assert snapshot(cluster.data_dir) == before  # the last landing and raw copies, no temporary directory


@hostile(Outcome.ERROR)
def test_a_full_disk_while_filling_any_output_directory_names_it_and_keeps_the_last_one(tmp_path) -> None:
    target = tmp_path / "2026-10"
    replace_dir_atomically(target, lambda tmp: (tmp / "report.html").write_text("good"))

    def fill(tmp: Path) -> None:
        (tmp / "report.html").write_text("ha")
        raise OSError(errno.EDQUOT, "Disk quota exceeded")

    with pytest.raises(DiskFullError, match=f"^no space left on the device writing {target}: Disk quota exceeded"):
        replace_dir_atomically(target, fill)
    assert snapshot(tmp_path) == {"2026-10": None, "2026-10/report.html": b"good"}

    def copy(tmp: Path) -> None:  # DuckDB's error carries the reason in its text only
        raise duckdb.IOException(f'Could not write file "{tmp}/attempts.parquet": No space left on device')

    with pytest.raises(DiskFullError, match=f"^no space left on the device writing {target}: No space left on device;"):
        replace_dir_atomically(target, copy)
    assert snapshot(tmp_path) == {"2026-10": None, "2026-10/report.html": b"good"}


def not_readable(monkeypatch, path: Path) -> None:
    """`path` unreadable: by its mode, and as root (who reads anything) by refusing its open."""
    path.chmod(0)
    if os.geteuid() == 0:
        real = os.open

        def refusing(file, flags, *args, **kwargs):
            if Path(file) == path:
                raise PermissionError(errno.EACCES, "Permission denied", str(file))
            return real(file, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", refusing)


@hostile(Outcome.ERROR)
@pytest.mark.parametrize(
    "make, expected",
    [
        pytest.param("unreadable", "source xid_syslog: {sim}/xid.log cannot be read: permission denied", id="no read"),
        pytest.param("dir is a file", "source dcgm_health_dir: {sim}/dcgm is a file, not a directory", id="dir a file"),
        pytest.param(
            "file is a dir", "no job records for 2026-10: {sim}/sacct.psv is a directory, not a file", id="file a dir"
        ),
        pytest.param(
            "symlink loop", "source nhc_syslog: {sim}/nhc.log: Too many levels of symbolic links", id="symlink loop"
        ),
        pytest.param("broken symlink", "source nhc_syslog: {sim}/gone.log does not exist", id="broken symlink"),
    ],
)
def test_an_input_that_is_not_what_the_config_says_is_refused_before_any_work(
    cluster, monkeypatch, make: str, expected: str
) -> None:
    sim = cluster.config_path.parent / "sim" / "c" / str(MONTH)
    if make == "unreadable":
        not_readable(monkeypatch, sim / "xid.log")
    elif make == "dir is a file":
        shutil.rmtree(sim / "dcgm")
        (sim / "dcgm").write_text("a file")
    elif make == "file is a dir":
        (sim / "sacct.psv").unlink()
        (sim / "sacct.psv").mkdir()
    elif make == "symlink loop":
        (sim / "nhc.log").unlink()
        (sim / "nhc.log").symlink_to("nhc.log")
    else:
        (sim / "nhc.log").unlink()
        (sim / "nhc.log").symlink_to("gone.log")
    before = snapshot(cluster.data_dir)
    with pytest.raises(MissingInputError) as raised:
        land_month(cluster, MONTH)
    assert expected.format(sim=sim) in str(raised.value)
    assert exit_code(raised.value) == EXIT_INPUT
    assert snapshot(cluster.data_dir) == before


@hostile(Outcome.ERROR)
def test_a_broken_symlink_inside_an_input_directory_stops_the_landing_naming_it(cluster) -> None:
    dcgm = cluster.config_path.parent / "sim" / "c" / str(MONTH) / "dcgm"
    node = next(p for p in sorted(dcgm.iterdir()) if p.is_dir())
    (node / "20261003T000000Z.json").symlink_to("nowhere.json")
    before = snapshot(cluster.data_dir)
    with pytest.raises(
        MissingInputError, match=f"^source dcgm_health_dir: {node}/20261003T000000Z.json is a broken symlink$"
    ):
        land_month(cluster, MONTH)
    assert snapshot(cluster.data_dir) == before


@hostile(Outcome.ERROR)
def test_the_command_reports_an_input_problem_in_one_line_without_a_traceback(cluster, capsys) -> None:
    sim = cluster.config_path.parent / "sim" / "c" / str(MONTH)
    (sim / "xid.log").unlink()
    (sim / "xid.log").symlink_to("xid.log")
    code = main(["check", "--config", str(cluster.config_path), "--month", str(MONTH)])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT
    assert (
        err
        == f"error: {cluster.config_path}: {MONTH}: source xid_syslog: {sim}/xid.log: Too many levels of symbolic links\n"
    )


# ---- leftovers of killed runs -----------------------------------------------------------------------------------


@hostile(Outcome.FIGURE)
def test_leftovers_of_killed_runs_of_any_month_are_cleared_by_the_next_run(tmp_path, caplog) -> None:
    config = load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))
    raw, landed, reports = (config.data_dir / "raw" / "c", config.data_dir / "landed" / "c", config.reports_dir / "c")
    for parent in (raw, landed, reports):
        (parent / "2026-08").mkdir(parents=True)
        (parent / "2026-08" / "kept").write_text("the last good result")
    (raw / ".2026-08.old-4242-0").mkdir()  # killed during dbt: the superseded raw copy not yet removed
    (landed / ".2026-09.tmp-4242").mkdir()  # killed while landing another month
    (reports / ".2026-07.old-4243-1").mkdir()  # killed between the two renames: the last good report
    (reports / ".2026-07.old-4243-1" / "report.html").write_text("july")
    (raw / ".2026-08.notes").write_text("not ours")

    clear_killed_runs(config)

    assert snapshot(raw) == {"2026-08": None, "2026-08/kept": b"the last good result", ".2026-08.notes": b"not ours"}
    assert snapshot(landed) == {"2026-08": None, "2026-08/kept": b"the last good result"}
    assert snapshot(reports) == {
        "2026-07": None,
        "2026-07/report.html": b"july",
        "2026-08": None,
        "2026-08/kept": b"the last good result",
    }
