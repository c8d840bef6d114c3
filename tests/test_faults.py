"""Crash safety: the cluster lock, and runs that die at each stage (an exception, or a SIGKILL of the
whole process group) leave the previous outputs intact; the next run clears their leftovers,
rebuilds a corrupt warehouse and completes with nothing lost."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from conftest import BIN, email_section
from lemon_history import NO_TESTS
from prefect.exceptions import ParameterTypeError

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core import runlock
from flows.core.months import Month
from flows.delivery.sent_log import SENDING, SentLog
from flows.demo import write_demo_config
from flows.deployments import monthly_report
from flows.figures.month_metrics import month_figures
from flows.ingest.land import land_month
from flows.ingest.manifest import read_manifest
from flows.warehouse.build import dbt_command
from flows.warehouse.engines import open_marts
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

HOLD = "from flows.core.runlock import cluster_lock; import sys, time\nwith cluster_lock(__import__('pathlib').Path(sys.argv[1]), 'c'):\n    print('held', flush=True); time.sleep(120)\n"


def hold_lock(data_dir: Path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(data_dir)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    return holder


def test_a_live_holder_keeps_the_lock_and_is_named(tmp_path):
    holder = hold_lock(tmp_path)
    try:
        with pytest.raises(runlock.ClusterBusyError, match=rf"pid {holder.pid} on {socket.gethostname()}"):
            with runlock.cluster_lock(tmp_path, "c", timeout=1.5):
                pass
    finally:
        holder.kill()
        holder.wait()


def test_a_dead_holders_lock_is_cleared(tmp_path, caplog):
    holder = hold_lock(tmp_path)
    holder.kill()
    holder.wait()
    lock = tmp_path / "locks" / "c.lock"
    assert lock.exists()  # a SIGKILL leaves it behind
    with runlock.cluster_lock(tmp_path, "c", timeout=0):
        assert lock.read_text().split("\n")[0] == str(os.getpid())
    assert f"cleared the stale lock of cluster c left by pid {holder.pid}" in caplog.text
    assert not lock.exists()


def test_a_lock_from_another_host_is_not_taken(tmp_path):
    lock = tmp_path / "locks" / "c.lock"
    lock.parent.mkdir()
    lock.write_text("4242\nother-host\n")  # its pid cannot be checked from here
    with pytest.raises(runlock.ClusterBusyError, match="pid 4242 on other-host .* remove the lock file"):
        with runlock.cluster_lock(tmp_path, "c", timeout=0.5):
            pass
    assert lock.read_text() == "4242\nother-host\n"


def test_the_lock_is_released_when_the_run_raises(tmp_path):
    with pytest.raises(KeyError):
        with runlock.cluster_lock(tmp_path, "c", timeout=0):
            raise KeyError("boom")
    with runlock.cluster_lock(tmp_path, "c", timeout=0):
        pass


MONTH = "2026-10"


@pytest.fixture(scope="module")
def cluster(smtp_server, tmp_path_factory):
    work = tmp_path_factory.mktemp("faults")
    config = write_demo_config(work, "kill", work / "reports")
    config.write_text(config.read_text() + email_section(smtp_server.port))
    simulate(SimParams("kill", Month.parse(MONTH), nodes=24, seed=5), work / "sim" / "kill" / MONTH)
    return {"work": work, "config": config, "sim": work / "sim" / "kill" / MONTH}


def test_the_command_exits_with_the_runs_code_and_says_why(tmp_path):
    missing = tmp_path / "missing.toml"
    done = subprocess.run(
        [str(BIN / "reliability-report"), "run", "--month", MONTH, "--config", str(missing)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert f"error: {missing}" in done.stderr, done.stderr[-2000:]


def start_run(config: Path, api: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "reliability-report"), "run", "--month", MONTH, "--config", str(config)],
        env={**os.environ, "PREFECT_API_URL": api, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: the kill takes everything it started
    )


def kill_at(run: subprocess.Popen, marker: str) -> str:
    """SIGKILL the run's whole process group as soon as it prints `marker`; returns its output."""
    output = []
    for line in run.stdout:
        output.append(line)
        if marker in line:
            os.killpg(run.pid, signal.SIGKILL)
            break
    run.wait()
    assert run.returncode == -signal.SIGKILL, "".join(output)[-3000:]
    return "".join(output)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def uninterrupted_figures(config: ClusterConfig, month: Month) -> dict:
    """The month's figures as metrics.json holds them (JSON types), from its landing, one dbt build
    (its data tests are the killed runs' concern, not this reference's) and the figures' queries."""
    landed = land_month(config, month)
    done = dbt_command(config, {month: landed}, "build", *NO_TESTS)
    assert done.success, [r.message for r in done.result.results if str(r.status) != "success"]
    with open_marts(config) as marts:
        figures = month_figures(marts, month, config.analysis, read_manifest(landed).sources).metrics
    return json.loads(json.dumps(figures, default=str))


def test_a_run_killed_at_any_stage_leaves_the_last_report_and_the_next_run_completes(
    cluster, smtp_server, prefect_server, tmp_path, fresh_warehouse
):
    work, config = cluster["work"], cluster["config"]
    report_dir = work / "reports" / "kill" / MONTH
    sent_log = work / "data" / "delivery" / "kill.jsonl"
    first = start_run(config, prefect_server)
    out, _ = first.communicate(timeout=300)
    assert first.returncode == 0, out[-3000:]
    assert "Starting temporary server" not in out  # the runs go to the Prefect server
    runs = httpx.post(
        f"{prefect_server}/flow_runs/filter",
        json={"flow_runs": {"state": {"type": {"any_": ["COMPLETED"]}}}, "sort": "START_TIME_DESC", "limit": 20},
        timeout=10,
    ).json()
    assert any(run["parameters"]["plan"]["config"]["config_path"] == str(config) for run in runs)
    report, log_before = snapshot(report_dir), sent_log.read_bytes()
    assert len(smtp_server.messages) == 1

    shutil.rmtree(cluster["sim"])  # late records: the month's logs change, so will its figures
    simulate(SimParams("kill", Month.parse(MONTH), nodes=24, seed=6), cluster["sim"])
    for stage in ("land", "dbt", "quality", "render"):
        out = kill_at(start_run(config, prefect_server), f"kill {MONTH}: {stage} ...")
        assert snapshot(report_dir) == report, f"killed in {stage}: the report changed"
        assert sent_log.read_bytes() == log_before and len(smtp_server.messages) == 1
        assert (work / "data" / "locks" / "kill.lock").exists()  # left by the killed run
        if stage != "land":
            assert "cleared the stale lock of cluster kill" in out

    # Killed while the server has the message but has not answered: was it delivered or not?
    smtp_server.hold = threading.Event()
    run = start_run(config, prefect_server)
    assert smtp_server.receiving.wait(timeout=300)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    smtp_server.hold.set()  # the server kept it: the client never heard so
    assert SentLog(sent_log).records()[-1].status == SENDING

    # The warehouse is a cache: a corrupt one is kept aside and rebuilt from the landed months.
    warehouse = work / "warehouse" / "kill.duckdb"
    warehouse.write_bytes(b"\0" * 4096)
    final = start_run(config, prefect_server)
    out, _ = final.communicate(timeout=300)
    assert final.returncode == 0, out[-3000:]
    assert "an earlier send of kill 2026-10 was interrupted" in out
    (aside,) = warehouse.parent.glob("kill.duckdb.corrupt-*")
    assert f"warehouse {warehouse} cannot be opened" in out and f"kept aside as {aside.name}" in out
    for parent in ("raw", "landed"):  # no copy superseded or half-written by a killed run is left
        assert [p.name for p in (work / "data" / parent / "kill").iterdir()] == [MONTH], parent
    corrections = [m for m in smtp_server.parsed() if m["Subject"].startswith("Correction:")]
    assert len(corrections) == 2 and corrections[0]["Message-ID"] == corrections[1]["Message-ID"]  # one, deduplicable
    last = SentLog(sent_log).last_sent(MONTH)
    assert last.kind == "correction" and last.message_id == corrections[0]["Message-ID"]

    # Nothing lost: the same figures as a build of the month that was never interrupted (landed,
    # built and its figures computed as the pipeline's stages do; its report is not needed).
    clean = write_demo_config(tmp_path, "kill", tmp_path / "reports")
    clean.write_text(clean.read_text().replace('path = "sim/', f'path = "{work}/sim/'))
    fresh_warehouse(clean)
    expected = uninterrupted_figures(load_config(clean), Month.parse(MONTH))
    got = json.loads((report_dir / "metrics.json").read_text())
    for key in ("totals", "node_failure_rate", "mttf_by_size", "failures_by_cause", "job_mix"):
        assert got[key] == expected[key], key
    assert not [p for p in (work / "reports" / "kill").iterdir() if p.name != MONTH]  # no temporary directory


def test_a_failing_stage_is_alerted_by_email_and_sends_no_report(cluster, smtp_server, monkeypatch):
    report_dir = cluster["work"] / "reports" / "kill" / MONTH
    sent_log = cluster["work"] / "data" / "delivery" / "kill.jsonl"
    report, log_before = snapshot(report_dir), sent_log.read_bytes() if sent_log.exists() else b""

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("flows.pipeline.build_months", full_disk)
    with pytest.raises(OSError, match="No space left on device"):
        monthly_report("kill", str(cluster["config"]), MONTH, resend=True)
    (alert,) = smtp_server.parsed()
    assert alert["Subject"] == f"FAILED: reliability report kill {MONTH}, stage dbt"
    assert "error: OSError: [Errno 28] No space left on device" in alert.get_content()
    assert snapshot(report_dir) == report and (sent_log.read_bytes() if sent_log.exists() else b"") == log_before
    assert not (cluster["work"] / "data" / "locks" / "kill.lock").exists()  # released

    smtp_server.reset()
    with pytest.raises(ParameterTypeError, match="month: Value error, month must be YYYY-MM"):
        monthly_report("kill", str(cluster["config"]), "2026-13")
    (alert,) = smtp_server.parsed()
    assert alert["Subject"] == "FAILED: reliability report kill 2026-13, stage parameters"


def test_the_alert_names_the_stage_whose_task_failed(cluster, smtp_server, monkeypatch):
    """The stage in the alert is the task that failed, as its state hook recorded it: the exception
    itself carries nothing about the stage."""
    import flows.pipeline

    def no_metrics(*args, **kwargs):
        raise ZeroDivisionError("no node-days")

    # the stages before it pass as cheaply as they can: what they build is not read here
    monkeypatch.setattr("flows.pipeline.build_months", lambda *args, **kwargs: {"success": 1})
    monkeypatch.setattr("flows.quality.suites.validate_month", lambda *args, **kwargs: [])
    monkeypatch.setattr("flows.figures.month_metrics.month_figures", no_metrics)
    with pytest.raises(ZeroDivisionError, match="no node-days") as raised:
        monthly_report("kill", str(cluster["config"]), MONTH, resend=True)
    assert not getattr(raised.value, "__notes__", None) and not hasattr(flows.pipeline, "STAGE_NOTE")
    (alert,) = smtp_server.parsed()
    assert alert["Subject"] == f"FAILED: reliability report kill {MONTH}, stage metrics"
    assert "stage: metrics\nerror: ZeroDivisionError: no node-days\n" in alert.get_content().replace("\r\n", "\n")
    assert not (cluster["work"] / "data" / "locks" / "kill.lock").exists()  # released
