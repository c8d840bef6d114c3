"""Benchmark: the monthly pipeline on a simulated month, stage by stage, against DuckDB's floor.

    .venv/bin/python bench/month_bench.py [--sim DIR] [--repeat 3] [--scaling] [--small]

DIR holds a simulated month (default: simulate bench/simulate_bench.py's 4,000-node, ~1.5M-attempt
month into bench/results/data/ first, kept for the next run). In one process and on the same files:
  floor      DuckDB reading the raw inputs once: read_csv of sacct.psv, events.psv, xid.log and
             nhc.log and read_text of the DCGM reports into tables (the physical floor of any
             pipeline that reads them), measured in each repetition right before the landing;
             also with the landing's CSV buffer size, which speeds DuckDB's own read up too
  land       pull and land the month (every source of the demo config), the flow's task body
  dbt        the month's dbt build (one invocation)
  quality    the Great Expectations suites
  analysis   metrics.json figures and the detail tables
  render     the report
each as the median of --repeat runs with its peak resident memory (VmHWM, reset before each
stage), the ratio of each stage to the floor, and the end-to-end total. Email is not sent.
--small adds the fixed overhead: the same stages on a ~1,000-attempt month, warm.
--backfill N simulates N consecutive months of the 1.5M-attempt cluster (kept) and times
`reliability-report backfill` over them in a fresh process (bench/results/backfill.json).
--scaling adds months of ~100k, 500k, 1.5M and 5M attempts (simulated once, kept) and prints the
time per attempt of the whole pipeline at each size (medians of --repeat runs, like the month's).
Results go to bench/results/month.json (and month-scaling.json).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from flows.core.config_file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.sources.sacct import READ_BUFFER_BYTES
from flows.pipeline import analyse, build_warehouse, check_quality, pull_and_land, render
from flows.warehouse.build import dbt_command
from simulator import SimParams, simulate

RESULTS = Path(__file__).resolve().parent / "results"
MONTH = Month.parse("2026-10")
HEALTH_LINES_PER_ATTEMPT = 0.175
FLOORS = ("floor", "floor_buffered")  # measured beside the stages, not part of the total
BUFFERED_READ = f", buffer_size = {READ_BUFFER_BYTES}"  # read_csv option: the landing's CSV buffer
# (nodes, duration scale) giving about this many attempts a month. The scaling run keeps the 1.5M month's shape (job lengths, so ~210 attempts a node) and scales
# the node count: per attempt, every size then has the same node-days and health lines to read.
SIZES = {100_000: (500, 0.25), 500_000: (2500, 0.25), 1_500_000: (7500, 0.25), 5_000_000: (25000, 0.25)}


def _peak_mib() -> float:
    return int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # Linux: VmHWM := current RSS


def _measure(run: Callable, *args) -> tuple[float, float, object]:
    _reset_peak()
    started = time.perf_counter()
    result = run(*args)
    return time.perf_counter() - started, _peak_mib(), result


def floor(sim_dir: Path, options: str = "") -> None:
    """DuckDB reads the raw inputs into tables; `options` are added to every read_csv."""
    with duckdb.connect() as con:
        for name, file in (("jobs", "sacct.psv"), ("events", "events.psv")):
            con.execute(
                f"create table {name} as select * from read_csv(?, all_varchar = true {options})", [str(sim_dir / file)]
            )
        for name in ("xid", "nhc"):
            con.execute(
                f"create table {name} as select * from read_csv(?, columns = {{'line': 'VARCHAR'}}, "
                f"delim = '\\x01', quote = '', escape = '', header = false {options})",
                [str(sim_dir / f"{name}.log")],
            )
        # the DCGM health reports: one JSON document per node and check, read whole
        con.execute("create table dcgm as select * from read_text(?)", [str(sim_dir / "dcgm" / "*" / "*.json")])


def simulated(attempts: int, root: Path, cluster: str, month: Month = MONTH) -> Path:
    """A simulated month of about `attempts` attempts under root/sim/<cluster>/<month>, made once."""
    sim_dir = root / "sim" / cluster / str(month)
    if not (sim_dir / "truth.json").exists():
        nodes, scale = SIZES.get(attempts, (max(round(attempts / 1420), 1), 1.0))  # ~1,420 a node a month
        print(f"simulating {cluster}: {nodes} nodes, duration scale {scale} ...", flush=True)
        # warning Xids so that health lines are about a fifth of attempts (300k at 1.5M, as the issue asks)
        watch = HEALTH_LINES_PER_ATTEMPT * attempts / nodes
        simulate(
            SimParams(cluster, month, nodes=nodes, seed=1, duration_scale=scale, watch_xids_per_node=watch), sim_dir
        )
    return sim_dir


def pipeline_stages(
    root: Path, cluster: str, repeat: int, with_floor: bool = False, write_config: Callable = write_demo_config
) -> dict:
    """Run the month's stages `repeat` times; medians of wall time and peak memory per stage. With
    `with_floor`, each repetition first measures the floor, right before the landing, so that the
    two see the same machine and process state (the floor is not part of the total). `write_config`
    writes the cluster's config (bench/spark_bench.py: the same on Spark)."""
    config = load_config(write_config(root, cluster, root / "reports"))
    runs: dict[str, list[tuple[float, float]]] = {}
    for _ in range(repeat):

        def stage(name: str, run: Callable, *args):
            seconds, peak, result = _measure(run, *args)
            runs.setdefault(name, []).append((seconds, peak))
            return result

        if with_floor:
            sim_dir = root / "sim" / cluster / str(MONTH)
            stage("floor", floor, sim_dir)
            stage("floor_buffered", floor, sim_dir, BUFFERED_READ)
        landed = stage("land", pull_and_land.fn, config, MONTH, None)
        stage("dbt", build_warehouse.fn, config, {MONTH: landed})
        quality = stage("quality", check_quality.fn, config, MONTH, landed)
        figures = stage("analysis", analyse.fn, config, MONTH)
        stage("render", render.fn, config, MONTH, figures, quality, landed, config.report_dir(MONTH))
    stages = {
        stage: {
            "seconds": round(statistics.median(s for s, _ in values), 2),
            "peak_rss_mib": round(statistics.median(p for _, p in values)),
            "runs": [round(s, 2) for s, _ in values],  # each repetition, to see the spread behind the median
        }
        for stage, values in runs.items()
    }
    totals = [sum(values[i][0] for name, values in runs.items() if name not in FLOORS) for i in range(repeat)]
    return {
        "attempts": figures.metrics["totals"]["attempts"],
        "stages": stages,
        "total_seconds": round(statistics.median(totals), 2),
        "peak_rss_mib": max(s["peak_rss_mib"] for name, s in stages.items() if name not in FLOORS),
    }


def parse_once(root: Path, cluster: str) -> None:
    """Land the month and let dbt parse the project for the cluster's warehouse (kept from then on:
    a new month re-uses it), so that a measured run is a warm one."""
    config = load_config(write_demo_config(root, cluster, root / "reports"))
    dbt_command(config, {MONTH: pull_and_land.fn(config, MONTH, None)}, "parse")


def end_to_end(root: Path, cluster: str, repeat: int) -> float:
    """Median wall time of `reliability-report run` for the month in a fresh process: what an operator
    waits for, Python and Prefect start-up included (ephemeral API server, warm PREFECT_HOME)."""
    config = write_demo_config(root, cluster, root / "reports")
    command = [str(Path(sys.executable).with_name("reliability-report")), "run", "--month", str(MONTH)]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([*command, "--config", str(config)], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 2)


def backfill(root: Path, months: int) -> dict:
    """Simulate `months` months ending with MONTH (kept), then time one backfill over all of them."""
    first = MONTH
    for _ in range(months - 1):
        first = first.previous()
    month = first
    while True:
        simulated(1_500_000, root, "backfill", month)
        if month == MONTH:
            break
        month = month.next()
    config = write_demo_config(root, "backfill", root / "reports")
    command = [str(Path(sys.executable).with_name("reliability-report")), "backfill", "--config", str(config)]
    started = time.perf_counter()
    subprocess.run([*command, "--from", str(first), "--to", str(MONTH), "--force"], check=True, capture_output=True)
    seconds = time.perf_counter() - started
    return {"months": months, "seconds": round(seconds, 1), "seconds_per_month": round(seconds / months, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sim", type=Path, default=None, help="a simulated month's directory (default: make one)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="also the fixed overhead on a ~1,000-attempt month")
    parser.add_argument("--scaling", action="store_true", help="also 100k, 500k, 1.5M and 5M attempts")
    parser.add_argument("--backfill", type=int, default=0, metavar="N", help="also a backfill of N months")
    parser.add_argument("--workdir", type=Path, default=RESULTS / "data", help="simulated months and warehouses")
    args = parser.parse_args()
    root = args.workdir.resolve()
    sim_dir = args.sim.resolve() if args.sim else simulated(1_500_000, root, "bench")
    bench_dir = root / "sim" / "bench" / str(MONTH)
    if sim_dir != bench_dir:  # the demo config reads sim/<cluster>/<month>/ under the work dir
        if bench_dir.is_symlink():
            bench_dir.unlink()
        shutil.rmtree(bench_dir, ignore_errors=True)
        bench_dir.parent.mkdir(parents=True, exist_ok=True)
        bench_dir.symlink_to(sim_dir, target_is_directory=True)

    result = {"when": datetime.now(UTC).isoformat(timespec="seconds")}
    result["month"] = pipeline_stages(root, "bench", args.repeat, with_floor=True)
    floors = result["month"]["stages"].pop("floor")
    floor_seconds = result["floor_seconds"] = floors["seconds"]
    result["floor_runs"] = floors["runs"]
    result["floor_buffered_seconds"] = result["month"]["stages"].pop("floor_buffered")["seconds"]
    # each landing against the floor measured right before it
    lands = result["month"]["stages"]["land"]["runs"]
    result["land_to_floor_by_run"] = [round(s / f, 2) for s, f in zip(lands, floors["runs"], strict=True)]
    result["month"]["end_to_end_seconds"] = end_to_end(root, "bench", args.repeat)
    for stage in result["month"]["stages"].values():
        stage["ratio_to_floor"] = round(stage["seconds"] / floor_seconds, 2)
    if args.small:
        simulated(1_000, root, "small")
        pipeline_stages(root, "small", 1)  # warm: the warehouse exists, dbt has parsed the project
        result["small_month"] = pipeline_stages(root, "small", args.repeat)
        result["small_month"]["end_to_end_seconds"] = end_to_end(root, "small", args.repeat)

    month = result["month"]
    print(
        f"{month['attempts']:,} attempts; DuckDB floor (read the raw inputs once): {floor_seconds:.2f} s; "
        f"with the landing's CSV buffer size: {result['floor_buffered_seconds']:.2f} s "
        f"(land is {month['stages']['land']['seconds'] / result['floor_buffered_seconds']:.2f}x that); "
        f"each landing against the floor right before it: {', '.join(f'{r:.2f}x' for r in result['land_to_floor_by_run'])}"
    )
    print(f"{'stage':<10}{'seconds':>9}{'x floor':>9}{'peak MiB':>10}")
    for stage, figures in month["stages"].items():
        print(f"{stage:<10}{figures['seconds']:>9.2f}{figures['ratio_to_floor']:>9.2f}{figures['peak_rss_mib']:>10}")
    print(
        f"{'total':<10}{month['total_seconds']:>9.2f}{month['total_seconds'] / floor_seconds:>9.1f}"
        f"{month['peak_rss_mib']:>10}"
    )
    print(f"end to end (`reliability-report run`, a fresh process): {month['end_to_end_seconds']:.2f} s")
    if "small_month" in result:
        small = result["small_month"]
        print(
            f"fixed overhead, {small['attempts']:,}-attempt month warm: stages {small['total_seconds']:.2f} s, "
            f"end to end {small['end_to_end_seconds']:.2f} s"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "month.json").write_text(json.dumps(result, indent=1) + "\n")

    if args.backfill:
        figures = backfill(root, args.backfill)
        print(f"backfill of {figures['months']} months of ~1.5M attempts: {figures['seconds']:.0f} s", flush=True)
        (RESULTS / "backfill.json").write_text(json.dumps(figures, indent=1) + "\n")
    if args.scaling:
        # the fixed part (start-up, GX import, dbt's re-used parse...) is paid at every size: the
        # marginal time per attempt, (total - fixed) / attempts, is what must stay flat. Each size is
        # measured warm, like the fixed part: its warehouse has dbt's parse already.
        fixed = result.get("small_month", {}).get("total_seconds", 0.0)
        scaling = []
        for attempts in SIZES:
            if attempts == 1_500_000:  # the month above, measured the same way
                figures = result["month"]
            else:
                cluster = f"shape{attempts // 1000}k"
                simulated(attempts, root, cluster)
                parse_once(root, cluster)
                figures = pipeline_stages(root, cluster, args.repeat)
            per_attempt = figures["total_seconds"] / figures["attempts"] * 1e6
            marginal = (figures["total_seconds"] - fixed) / figures["attempts"] * 1e6
            scaling.append(
                {**figures, "us_per_attempt": round(per_attempt, 1), "marginal_us_per_attempt": round(marginal, 1)}
            )
            print(
                f"{figures['attempts']:>10,} attempts: {figures['total_seconds']:7.1f} s, "
                f"{per_attempt:6.1f} us per attempt, {marginal:6.1f} us beyond the fixed {fixed:.1f} s, "
                f"peak {figures['peak_rss_mib']} MiB",
                flush=True,
            )
        (RESULTS / "month-scaling.json").write_text(json.dumps(scaling, indent=1) + "\n")


if __name__ == "__main__":
    main()
