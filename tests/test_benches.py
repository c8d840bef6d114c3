"""Every script under bench/ runs at a toy size (issue 52, item 5): each in a fresh process, as
bench/README.md runs it, into a temporary work and results directory (never into the repository),
and its real outputs are checked: the results JSON or the printed table, with sane values. A bench
that no longer matches the product (a stage's signature, a command's options) fails here rather
than on the day it is run. A new script under bench/ needs its toy run here
(test_every_bench_script_has_a_toy_run). The heaviest (marked `bench`: the month, backfill, periods,
Spark and the two Prometheus recall benches) run in `make test-bench`, not the test command."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from bench_runs import BENCH, REPO, bench, read_json

# script -> the test that runs it at toy size (in this file unless a path is given; the heavy ones each in
# a file of their own, which the test command's workers run side by side)
TOY_RUNS = {
    "month_bench.py": "tests/test_bench_month.py::test_month_bench",
    "backfill_bench.py": "tests/test_bench_backfill.py::test_backfill_bench",
    "periods_bench.py": "tests/test_bench_periods.py::test_periods_bench",
    "spark_bench.py": "tests/test_bench_spark.py::test_spark_bench",
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
    "explain_bench.py": "test_explain_bench",
}


def test_every_bench_script_has_a_toy_run():
    """The benches covered here are exactly the scripts in bench/, each test named exists."""
    assert set(TOY_RUNS) == {p.name for p in BENCH.glob("*.py")}
    for test in TOY_RUNS.values():
        file, _, name = test.rpartition("::")
        source = (REPO / file).read_text() if file else Path(__file__).read_text()
        assert f"def {name}(" in source, test


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


@pytest.mark.slow
@pytest.mark.bench  # a month built and copied, 16 commands: `make test-bench` (30 s of the test command)
def test_explain_bench(tmp_path: Path):
    """explain --job and node NAME in fresh processes on a one-node month built in process and on a
    copy of it made two months: every case answered with its exit code, the copy twice the rows."""
    results = tmp_path / "results"
    done = bench(
        "explain_bench.py", "--toy", "--months", "2", "--repeat", "1", "--workdir", tmp_path / "work",
        "--results", results,
    )  # fmt: skip
    figures = read_json(results / "explain.json")
    one, many = figures["one_month"], figures["many_months"]
    assert many["months_built"] == ["2026-09", "2026-10"] and many["rows"]["fct_months_built"] == 2
    assert many["rows"]["fct_attempts"] == 2 * one["rows"]["fct_attempts"] > 1000
    assert many["rows"]["landed.attempts"] == many["rows"]["fct_attempts"] and many["size_mib"] > 0
    cases = figures["cases"]
    # a one-node month has arrays and failed jobs, no infrastructure failure or fault
    assert set(cases) == {"failure", "array_task", "bare_id", "missing", "node", "failure_json", "node_json"}
    assert cases["missing"]["one_month"]["expected_exit"] == 2 and cases["node"]["one_month"]["expected_exit"] == 0
    for case in cases.values():
        for size in ("one_month", "many_months"):
            assert case[size]["ok"], (case["what"], case[size])
            assert 0 < case[size]["min"] <= case[size]["median"] < 60
    assert "_" in cases["array_task"]["args"][-1] and cases["bare_id"]["args"][-1].isdigit()
    assert 0 < figures["imports"]["median"] < 60 and figures["imports"]["ok"]
    assert "| explain missing job |" in done.stdout
    assert figures["pages"]["pages"] >= 1 and figures["pages"]["seconds"] >= 0  # explained.html at least


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
@pytest.mark.bench  # a Prometheus server and two months built: `make test-bench` (100 s of the test command)
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
@pytest.mark.bench  # a real Prometheus and a month built: `make test-bench` (100 s of the test command)
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
