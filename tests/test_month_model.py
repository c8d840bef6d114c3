"""The month model on hand-written dumps of two consecutive months: attempts that run across the
month end, queue time split at it, exposure clipped at the dump time (as_of), the current month
refused without --partial, and a month without GPU exposure reported with a warning. Building
months in any order is tested on a simulated history (test_history.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

HEADER = (
    "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|State|ExitCode|Submit|Eligible|Start|End|Elapsed|"
    "NNodes|NodeList|AllocTRES|ReqTRES|Reason|DerivedExitCode"
)


def record(job: int, state: str, submit: str, start: str, end: str, elapsed: str, nodes: str, gpus: int) -> str:
    n_nodes = max(1, gpus // 8)
    alloc = f"billing={gpus},cpu={gpus},gres/gpu={gpus},node={n_nodes}" if start != "Unknown" else ""
    node_list = nodes if start != "Unknown" else "None assigned"
    return (
        f"{job}|{job}|train_{job}|alice|llm|gpu|normal|{state}|0:0|{submit}|{submit}|{start}|{end}|{elapsed}|"
        f"{n_nodes}|{node_list}|{alloc}|gres/gpu={gpus}|None|0:0"
    )


# Job 100 runs across the September/October boundary; job 101 waits across it and then fails on a
# node in October; job 102 ran and ended in September; job 103 is queued at October's dump and
# job 104 still runs then.
SEPTEMBER = [  # dumped at 2026-10-02T06:00:00
    record(100, "RUNNING", "2026-09-29T10:00:00", "2026-09-29T12:00:00", "Unknown", "2-18:00:00", "gpu[01-02]", 16),
    record(101, "RUNNING", "2026-09-30T20:00:00", "2026-10-01T04:00:00", "Unknown", "1-02:00:00", "gpu03", 8),
    record(
        102, "COMPLETED", "2026-09-10T00:00:00", "2026-09-10T01:00:00", "2026-09-11T01:00:00", "1-00:00:00", "gpu04", 8
    ),
]
OCTOBER = [  # dumped at 2026-11-02T06:00:00
    record(
        100,
        "COMPLETED",
        "2026-09-29T10:00:00",
        "2026-09-29T12:00:00",
        "2026-10-03T12:00:00",
        "4-00:00:00",
        "gpu[01-02]",
        16,
    ),
    record(
        101, "NODE_FAIL", "2026-09-30T20:00:00", "2026-10-01T04:00:00", "2026-10-05T04:00:00", "4-00:00:00", "gpu03", 8
    ),
    record(103, "PENDING", "2026-10-31T18:00:00", "Unknown", "Unknown", "00:00:00", "", 8),
    # running at the dump: its Elapsed runs to the dump, which tells when the records were taken
    record(104, "RUNNING", "2026-10-31T06:00:00", "2026-10-31T06:00:00", "Unknown", "2-00:00:00", "gpu05", 8),
]


def write_month(work: Path, month: str, rows: list[str]) -> None:
    path = work / "logs" / month / "sacct.psv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([HEADER, *rows]) + "\n")


@pytest.fixture
def cluster(tmp_path: Path, fresh_warehouse) -> Path:
    write_month(tmp_path, "2026-09", SEPTEMBER)
    write_month(tmp_path, "2026-10", OCTOBER)
    config = tmp_path / "mm.toml"
    config.write_text(
        'cluster = "mm"\n\n[[sources]]\nkind = "sacct_psv"\npath = "logs/{month}/sacct.psv"\n\n'
        '[paths]\ndata = "data"\nreports = "reports"\nwarehouse = "warehouse/mm.duckdb"\n'
    )
    fresh_warehouse(config)  # each test a new warehouse, one dbt parse for all
    return config


def attempts(config: Path) -> dict[tuple[str, str], dict]:
    with duckdb.connect(str(load_config(config).warehouse_path), read_only=True) as con:
        rows = con.execute(
            "select job_id_raw, month, outcome, runtime_seconds, queue_seconds from fct_attempts"
        ).fetchall()
    return {(job, month): {"outcome": o, "runtime": r, "queue": q} for job, month, o, r, q in rows}


def metrics(config: Path, month: str) -> dict:
    return json.loads((load_config(config).report_dir(Month.parse(month)) / "metrics.json").read_text())


def test_two_consecutive_months_share_a_warehouse(cluster: Path) -> None:
    assert main(["backfill", "--config", str(cluster), "--from", "2026-09", "--to", "2026-10"]) == 0
    built = attempts(cluster)
    hours = 3600
    assert built[("100", "2026-09")] == {"outcome": "open", "runtime": 36 * hours, "queue": 2 * hours}
    assert built[("100", "2026-10")] == {"outcome": "completed", "runtime": 60 * hours, "queue": 0}
    # queued 4 h in each month, never twice
    assert built[("101", "2026-09")] == {"outcome": "open", "runtime": 0, "queue": 4 * hours}
    assert built[("101", "2026-10")] == {"outcome": "infra_failed", "runtime": 96 * hours, "queue": 4 * hours}
    assert ("102", "2026-10") not in built
    # pending at the dump: its queue so far, up to October's end
    assert built[("103", "2026-10")] == {"outcome": "open", "runtime": 0, "queue": 6 * hours}
    assert built[("104", "2026-10")] == {"outcome": "open", "runtime": 18 * hours, "queue": 0}
    september, october = metrics(cluster, "2026-09"), metrics(cluster, "2026-10")
    assert (
        september["period"] | {"start": "2026-09-01T00:00:00", "end": "2026-10-01T00:00:00", "complete": True}
        == (september["period"])
    )
    assert september["period"]["notice"] is None
    assert october["totals"] == {**october["totals"], "attempts": 4, "infra_failures": 1, "open_attempts": 2}
    assert october["node_failure_rate"]["all"]["node_days"] == pytest.approx((60 * 2 + 96 + 18) / 24)


def test_the_current_month_needs_partial_and_ends_at_the_dump(cluster: Path, capsys) -> None:
    now = datetime.now(UTC)
    current = Month(now.year, now.month)
    started = current.start.replace(tzinfo=None)
    running = min(timedelta(hours=6), now - current.start - timedelta(minutes=1))
    elapsed = f"{int(running.total_seconds()) // 3600:02d}:{int(running.total_seconds()) % 3600 // 60:02d}:00"
    write_month(
        cluster.parent,
        str(current),
        [record(200, "RUNNING", started.isoformat(), started.isoformat(), "Unknown", elapsed, "gpu[01-02]", 16)],
    )
    assert main(["run", "--config", str(cluster), "--month", str(current)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: month {current} has not ended (it ends ") and "--partial" in err
    assert not load_config(cluster).report_dir(current).exists()
    assert main(["backfill", "--config", str(cluster), "--from", "2026-10", "--to", str(current)]) == 2
    assert main(["run", "--config", str(cluster), "--month", str(current), "--partial"]) == 0
    built = attempts(cluster)[("200", str(current))]
    dump = started + timedelta(seconds=running.total_seconds() // 60 * 60)
    assert built["runtime"] == (dump - started).total_seconds()  # never up to the month's end
    figures = metrics(cluster, str(current))
    assert (
        figures["period"] | {"start": started.isoformat(), "end": dump.isoformat(), "complete": False}
        == (figures["period"])
    )
    report = (load_config(cluster).report_dir(current) / "report.html").read_text().replace("&nbsp;", " ")
    assert f"Partial month: the figures cover {started:%Y-%m-%d %H:%M} to {dump:%Y-%m-%d %H:%M} UTC" in report
    assert f"its records were taken {dump:%Y-%m-%d %H:%M} UTC." in report


def test_as_of_overrides_the_dump_time(cluster: Path, capsys) -> None:
    assert main(["run", "--config", str(cluster), "--month", "2026-09", "--as-of", "2026-09-30T00:00:00Z"]) == 0
    assert attempts(cluster)[("100", "2026-09")]["runtime"] == 12 * 3600
    assert metrics(cluster, "2026-09")["period"]["end"] == "2026-09-30T00:00:00"
    assert main(["run", "--config", str(cluster), "--month", "2026-09", "--as-of", "yesterday"]) == 2
    assert "--as-of must be an ISO 8601 time" in capsys.readouterr().err
    assert main(["run", "--config", str(cluster), "--month", "2026-09", "--as-of", "2999-01-01T00:00:00"]) == 2
    assert "is in the future" in capsys.readouterr().err
    assert main(["run", "--config", str(cluster), "--month", "2026-09", "--as-of", "2026-08-31T23:00:00"]) == 2
    assert "is not after the start of 2026-09" in capsys.readouterr().err


CPU_ONLY = [
    line.replace("gres/gpu=16", "gres/gpu=0").replace("gres/gpu=8", "gres/gpu=0").replace("|gpu|", "|cpu|")
    for line in SEPTEMBER
]


@pytest.mark.parametrize("records", [CPU_ONLY, []], ids=["cpu-jobs-only", "no-jobs"])
def test_a_month_without_gpu_exposure_is_reported_with_a_warning(cluster: Path, records: list[str]) -> None:
    """CPU-only jobs: a data-quality warning that no GPU job ran. No job at all, declared with
    --no-jobs-ran: the report says so in place of the figures, with no warning of what was declared."""
    write_month(cluster.parent, "2026-09", records)
    no_jobs = [] if records else ["--no-jobs-ran"]  # without it, a month with no job record is refused
    assert main(["run", "--config", str(cluster), "--month", "2026-09", *no_jobs]) == 0
    figures = metrics(cluster, "2026-09")
    assert figures.get("no_jobs_declared", False) is not bool(records)
    assert figures["node_failure_rate"]["all"]["node_days"] == 0
    assert figures["not_measured"]["node_failure_rate.all"] == "no GPU job ran this month"
    quality = figures["summary"]["data_quality"]
    assert quality["status"] == ("warning" if records else "ok")
    assert any("no GPU job ran" in reason for reason in quality["reasons"]) is bool(records)
