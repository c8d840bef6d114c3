"""Every script under bench/ runs at a toy size (issue 52, item 5): each in a fresh process, as
bench/README.md runs it, into a temporary work and results directory (never into the repository),
and its real outputs are checked: the results JSON or the printed table, with sane values. A bench
that no longer matches the product (a stage's signature, a command's options) fails here rather
than on the day it is run. A new script under bench/ needs its toy run here
(test_every_bench_script_has_a_toy_run)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"

# script -> the test that runs it at toy size (in this file unless a path is given)
TOY_RUNS = {
    "month_bench.py": "test_month_bench",
    "backfill_bench.py": "test_backfill_bench",
    "periods_bench.py": "test_periods_bench",
    "spark_bench.py": "test_spark_bench",
    "ingest_bench.py": "test_ingest_bench",
    "simulate_bench.py": "test_simulate_bench",
    "simulate_same_outputs.py": "test_simulate_same_outputs",
    "study_coverage.py": "test_study_coverage",
    "lemon_bench.py": "test_lemon_bench",
    "prometheus_recall.py": "test_prometheus_recall_and_truth_check",
    "truth_check.py": "test_prometheus_recall_and_truth_check",
    "prometheus_recall_real.py": "test_prometheus_recall_real",
    "cpu_sample.py": "test_cpu_sample",
    "fuzz_readers.py": "tests/test_fuzz_readers.py::test_the_on_demand_bench_at_toy_size",
}


def bench(script: str, *args: str | Path, api: str | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run bench/<script> with this interpreter from the repository's root (as bench/README.md
    does); it must succeed. With `api`, the `reliability-report` commands it runs report to that
    Prefect server instead of each booting its own (seconds of CPU a command, not what is tested)."""
    command = [sys.executable, str(BENCH / script), *map(str, args)]
    env = {**os.environ, "PREFECT_API_URL": api} if api else None
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def read_json(path: Path) -> dict | list:
    assert path.exists(), f"{path.name} was not written"
    return json.loads(path.read_text())


def test_every_bench_script_has_a_toy_run():
    """The benches covered here are exactly the scripts in bench/, each test named exists."""
    assert set(TOY_RUNS) == {p.name for p in BENCH.glob("*.py")}
    for test in TOY_RUNS.values():
        file, _, name = test.rpartition("::")
        source = (REPO / file).read_text() if file else Path(__file__).read_text()
        assert f"def {name}(" in source, test


@pytest.mark.slow
def test_month_bench(tmp_path: Path, prefect_server: str):
    """month_bench's stages through the monthly flow's tasks, `reliability-report run` end to end on the
    month and the small month, and a backfill of two months: seconds, ratios and peak RSS."""
    results = tmp_path / "results"
    done = bench(
        "month_bench.py", "--toy", "--repeat", "1", "--small", "--backfill", "2",
        "--workdir", tmp_path / "work", "--results", results, api=prefect_server,
    )  # fmt: skip
    month = read_json(results / "month.json")
    stages = month["month"]["stages"]
    assert list(stages) == ["land", "dbt", "quality", "analysis", "render"]
    assert all(s["seconds"] > 0 and s["ratio_to_floor"] > 0 and s["peak_rss_mib"] > 0 for s in stages.values())
    assert month["floor_seconds"] > 0 and month["month"]["attempts"] > 1000
    for figures in (month["month"], month["small_month"]):
        assert figures["end_to_end_seconds"] > 0 and figures["end_to_end_peak_rss_mib"] > 100
        assert figures["total_seconds"] > 0 and figures["attempts"] > 0
    assert month["month"]["end_to_end_to_floor"] > 1
    backfill = read_json(results / "backfill.json")
    assert backfill["months"] == "2026-09..2026-10" and backfill["count"] == 2
    assert backfill["seconds"] > 0 and backfill["peak_rss_mib"] > 100 and backfill["to_one_month"] > 0
    assert backfill["runs"] == [{"seconds": backfill["seconds"], "peak_rss_mib": backfill["peak_rss_mib"]}]
    assert "end to end" in done.stdout and "backfill of 2 months" in done.stdout
    assert (tmp_path / "work" / "rendered" / "bench" / "report.html").exists()


@pytest.mark.slow
def test_backfill_bench(tmp_path: Path, prefect_server: str):
    """Two clusters' backfills one after the other and side by side."""
    results = tmp_path / "results"
    bench(
        "backfill_bench.py", "--clusters", "2", "--months", "1", "--nodes", "2",
        "--workdir", tmp_path / "work", "--results", results, api=prefect_server,
    )  # fmt: skip
    figures = read_json(results / "backfill-clusters.json")
    assert figures["sequential_seconds"] > 0 and figures["parallel_seconds"] > 0 and figures["speedup"] > 0
    assert set(figures["attempts"]) == {"par1", "par2"} and all(n > 0 for n in figures["attempts"].values())


@pytest.mark.slow
def test_periods_bench(tmp_path: Path, prefect_server: str):
    """run, backfill, rerun and study of this checkout, each a fresh `reliability-report` process."""
    results = tmp_path / "results"
    work = tmp_path / "work"
    bench(
        "periods_bench.py", "--nodes", "2", "--months", "2", "--workdir", work, "--results", results, api=prefect_server
    )
    figures = read_json(results / "periods.json")
    assert figures["months"] == "2026-09..2026-10" and "before" not in figures
    after = figures["after"]
    assert set(after["median"]) == {"first_run", "run", "backfill", "rerun", "study"}
    assert all(s > 0 for s in after["median"].values()) and all(r > 0 for r in after["ratios"].values())


@pytest.mark.slow
@pytest.mark.spark
def test_spark_bench(tmp_path: Path):
    """month_bench's stages on both engines, Spark a local one of one core with tests/test_spark.py's
    settings for small data (the build's per-statement cost, not the rows, is a toy month's time)."""
    results = tmp_path / "results"
    small_data = [
        f"--conf={key}={value}"
        for key, value in (
            ("spark.sql.codegen.wholeStage", "false"),
            ("spark.sql.codegen.factoryMode", '"NO_CODEGEN"'),
            ("spark.sql.adaptive.enabled", "false"),
            ("spark.driver.extraJavaOptions", '"-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"'),
        )
    ]
    bench(
        "spark_bench.py", "--attempts", "1000", "--repeat", "1", "--cores", "1", "--memory", "1g", *small_data,
        "--workdir", tmp_path / "work", "--results", results,
    )  # fmt: skip
    figures = read_json(results / "spark.json")
    for engine in ("duckdb", "spark"):
        stages = figures[engine]["stages"]
        assert list(stages) == ["land", "dbt", "quality", "analysis", "render"], engine
        assert all(s["seconds"] > 0 for s in stages.values()) and figures[engine]["attempts"] > 0
    assert figures["spark"]["attempts"] == figures["duckdb"]["attempts"]


@pytest.mark.slow
def test_ingest_bench(tmp_path: Path):
    """The sacct reader and the landing against DuckDB's read of the same files."""
    results = tmp_path / "results"
    bench("ingest_bench.py", "--nodes", "4", "--repeat", "1", "--workdir", tmp_path / "work", "--results", results)
    figures = read_json(results / "ingest.json")
    assert figures["sacct_rows"] > 0
    expected = {"floor", "floor_buffered", "read_sacct", "land_sacct", "floor_month", "land_month"}
    assert set(figures["seconds_median"]) == expected
    assert all(r > 0 for r in figures["ratio_to_floor"].values()) and figures["land_month_to_floor_month"] > 0


def test_simulate_bench(tmp_path: Path):
    results = tmp_path / "results"
    bench("simulate_bench.py", "--nodes", "4", "--months", "2", "--out", tmp_path / "sim", "--results", results)
    figures = read_json(results / "simulate.json")
    assert figures["months"] == 2 and len(figures["attempts_per_month"]) == 2
    assert all(n > 0 for n in figures["attempts_per_month"]) and figures["seconds"] >= 0
    assert figures["peak_rss_mib"] > 0


def test_simulate_same_outputs(tmp_path: Path):
    """A record of the simulator's bytes, then the same configuration compared with it."""
    record = tmp_path / "record.json"
    bench("simulate_same_outputs.py", "--only", "n1-s1", "--record", record)
    assert set(read_json(record)) == {"n1-s1"}
    done = bench("simulate_same_outputs.py", "--only", "n1-s1", "--compare", record)
    assert "SAME" in done.stdout and "compared 1 configurations, 0 different" in done.stdout


def test_study_coverage():
    done = bench("study_coverage.py", "--seeds", "1", "--nodes", "4")
    assert re.search(r"1 seeds, 4 nodes a cluster, 12 months: the r_f interval contains", done.stdout), done.stdout


@pytest.mark.slow
def test_lemon_bench(tmp_path: Path):
    """Precision and recall of one setting on one seed, and one repeat-offender history."""
    done = bench(
        "lemon_bench.py", "--seeds", "1", "--settings", "1", "--nodes", "10", "--repeat-offender", "1",
        "--work", tmp_path,
    )  # fmt: skip
    rows = [line for line in done.stdout.splitlines() if line.startswith("| r_f 6.5, lemons 0.005 x25, 10 nodes |")]
    assert len(rows) == 4, done.stdout  # the month's window and three trailing p-values
    assert len([line for line in done.stdout.splitlines() if line.startswith("| 5 | 2026-")]) == 4


@pytest.mark.slow
def test_prometheus_recall_and_truth_check(tmp_path: Path, prefect_server: str):
    """The recall of a month built from the Xid syslog and from dcgm-exporter's series, then
    truth_check of the syslog's month against the simulator's truth."""
    toy = ("--nodes", "4", "--r-f", "1000", "--steps", "900")  # about 20 failures in the month on four nodes
    done = bench("prometheus_recall.py", *toy, "--workdir", tmp_path, api=prefect_server)
    recall = read_json(tmp_path / "recall.json")
    assert set(recall) == {"Xid syslog", "dcgm-exporter series, step 900 s"}
    assert all(found >= right > 0 and expected >= right for found, right, expected in recall.values()), recall
    assert "| health source |" in done.stdout
    checked = bench(
        "truth_check.py", "--config", tmp_path / "syslog" / "demo.toml", "--month", "2026-10", "--sim", tmp_path / "sim"
    )
    rows = [line.split(" | ")[0] for line in checked.stdout.splitlines()[2:]]
    assert rows[:2] == ["| r_f paper (per 1000 node-days)", "| r_f all (per 1000 node-days)"]
    assert "| lemon candidates" in rows and "| lost goodput (estimate)" in rows
    assert re.search(r"\| ([1-9]\d*) attributed; [1-9]\d* with the true cause \|", checked.stdout), checked.stdout


@pytest.mark.slow
def test_prometheus_recall_real(tmp_path: Path, prefect_server: str):
    """The same month through a real Prometheus (Debian's, over promtool's blocks) on 127.0.0.1."""
    toy = ("--nodes", "4", "--r-f", "1000", "--step", "900")
    bench("prometheus_recall_real.py", *toy, "--workdir", tmp_path, api=prefect_server)
    recall = read_json(tmp_path / "recall.json")
    pulled = [counts for name, counts in recall.items() if name.startswith("prometheus_dcgm from a real Prometheus")]
    assert len(recall) == 3 and len(pulled) == 1 and pulled[0][1] > 0, recall


def test_cpu_sample():
    """The CPU of a command and of the process it starts, by program."""
    child = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'sum(range(10**7))'], check=True)"
    done = bench("cpu_sample.py", "--every", "0.05", "--", sys.executable, "-c", child)
    assert re.search(r"cpu_sample: wall [\d.]+ s, CPU [\d.]+ s, exit 0", done.stderr), done.stderr
