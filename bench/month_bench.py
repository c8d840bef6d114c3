"""Benchmark: the monthly pipeline on a simulated month, stage by stage, against DuckDB's floor.

    .venv/bin/python bench/month_bench.py [--sim DIR] [--repeat 3] [--small] [--backfill N [--backfill-sim DIR]
        [--backfill-runs R]]
        [--scaling] [--workdir DIR] [--results DIR] [--toy]

DIR holds a simulated month (default: simulate a 7,500-node, ~1.5M-attempt month into
<workdir>/sim/bench/2026-10/ first, kept for the next run). In one process and on the same files:
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
stage), the ratio of each stage to the floor, and the stages' total; then `reliability-report run`
of the month end to end in a fresh process (median seconds, its ratio to the floor, its peak RSS).
Email is not sent.
--small adds the fixed overhead: the same on a one-node month (5,187 attempts), warm.
--backfill N times `reliability-report backfill --force` over N continuous months of the 1.5M-attempt
cluster in a fresh process, R times (--backfill-runs, default 1): each run's seconds and peak RSS, their
median and largest, and the median's ratio to one month's end-to-end run above.
The newest N months of <workdir>/sim/backfill/ (a continuous history as `simulate` writes it,
<YYYY-MM>/ each; one is simulated there, months ending 2026-10, when it holds fewer; kept), or of
--backfill-sim DIR (linked there instead).
--scaling adds months of 1/15, 1/3 and 10/3 of the month's attempts (100k, 500k, 5M; simulated once,
kept) and prints the time per attempt of the stages at each size (medians of --repeat runs).
--toy: one-node months (~5,000 attempts) in place of the 1.5M ones, for the month and the backfill
(tests/test_benches.py). Results go to <results>/month.json (backfill.json,
month-scaling.json); <results> is bench/results/ by default.
"""

from __future__ import annotations

import argparse
import json
import os
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

from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import months_before, write_demo_config
from flows.ingest.sources.sacct import READ_BUFFER_BYTES
from flows.pipeline import analyse, build_warehouse, check_quality, pull_and_land, render
from flows.warehouse.build import dbt_command
from simulator import SimParams, simulate

RESULTS = Path(__file__).resolve().parent / "results"
MONTH = Month.parse("2026-10")
BIG, SMALL = 1_500_000, 1_000  # about this many attempts a month: the bench's month; one node, the fixed overhead's
HEALTH_LINES_PER_ATTEMPT = 0.175
FLOORS = ("floor", "floor_buffered")  # measured beside the stages, not part of the total
BUFFERED_READ = f", buffer_size = {READ_BUFFER_BYTES}"  # read_csv option: the landing's CSV buffer
# The scaling run keeps the 1.5M month's shape (job lengths: duration scale 0.25, so ~210 attempts a
# node) and scales the node count: per attempt, every size then has the same node-days and health lines.
SCALE = 0.25
ATTEMPTS_PER_NODE = 200  # at SCALE
SCALING = (1 / 15, 1 / 3, 1.0, 10 / 3)  # of the month's attempts: 100k, 500k, 1.5M, 5M


def _peak_mib() -> float:
    return int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # Linux: VmHWM := current RSS


def _measure(run: Callable, *args) -> tuple[float, float, object]:
    _reset_peak()
    started = time.perf_counter()
    result = run(*args)
    return time.perf_counter() - started, _peak_mib(), result


def command_measured(command: list[str], log: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS in MiB of a command that must succeed (its output in `log`). The peak
    is wait4's: the largest of the process and of every descendant it waited for (a Prefect server,
    a backfill's workers), so each command is measured alone, unlike RUSAGE_CHILDREN's running max."""
    started = time.perf_counter()
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{log.read_text()[-3000:]}")
    return seconds, usage.ru_maxrss / 1024


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


def sim_params(attempts: int, cluster: str, first: Month, last: Month) -> SimParams:
    """About `attempts` attempts a month from 100k up: the 1.5M month's shape (SCALE, ATTEMPTS_PER_NODE).
    Below, full-length jobs on a node per 1,420 asked (the bench's rule before the simulator's queue
    became closed-loop: one node now gives 5,187). Warning Xids so that health lines are about a
    fifth of attempts (300k at 1.5M, as the performance issue asks)."""
    if attempts >= 100_000:
        nodes, scale = round(attempts / ATTEMPTS_PER_NODE), SCALE
    else:
        nodes, scale = max(round(attempts / 1420), 1), 1.0
    watch = HEALTH_LINES_PER_ATTEMPT * attempts / nodes
    return SimParams(
        cluster, first, last_month=last, nodes=nodes, seed=1, duration_scale=scale, watch_xids_per_node=watch
    )


def simulated(attempts: int, root: Path, cluster: str, month: Month = MONTH) -> Path:
    """A simulated month of about `attempts` attempts under root/sim/<cluster>/<month>, made once."""
    sim_dir = root / "sim" / cluster / str(month)
    if not (sim_dir / "truth.json").exists():
        params = sim_params(attempts, cluster, month, month)
        print(f"simulating {cluster}: {params.nodes} nodes, duration scale {params.duration_scale} ...", flush=True)
        simulate(params, sim_dir)
    return sim_dir


def link_simulated(linked: Path, sim: Path, option: str) -> None:
    """Link the simulated directory `sim` where the demo config reads it (`linked`, under the work
    dir), replacing an earlier link, never a directory simulated there."""
    if linked.is_symlink():
        linked.unlink()
    elif linked.exists():
        raise SystemExit(f"{linked} holds a simulation already: drop {option}, or use another --workdir")
    linked.parent.mkdir(parents=True, exist_ok=True)
    linked.symlink_to(sim.resolve(), target_is_directory=True)


def pipeline_stages(
    root: Path, cluster: str, repeat: int, with_floor: bool = False, write_config: Callable = write_demo_config
) -> dict:
    """Run the month's stages `repeat` times, each through the monthly flow's own task; medians of
    wall time and peak memory per stage. With `with_floor`, each repetition first measures the floor,
    right before the landing, so that the two see the same machine and process state (the floor is
    not part of the total). `write_config` writes the cluster's config (bench/spark_bench.py: the
    same on Spark). The report is rendered into a directory of its own (the flow's staged copy)."""
    config = load_config(write_config(root, cluster, root / "reports"))
    landed_dir, out_dir = config.landed_dir(MONTH), root / "rendered" / cluster
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
        manifest = stage("land", pull_and_land.fn, config, MONTH, None)
        stage("dbt", build_warehouse.fn, config, {MONTH: landed_dir})
        quality = stage("quality", check_quality.fn, config, MONTH, landed_dir, manifest)
        figures = stage("analysis", analyse.fn, config, MONTH, manifest)
        shutil.rmtree(out_dir, ignore_errors=True)
        stage("render", render.fn, config, MONTH, figures, quality, manifest, out_dir)
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
    pull_and_land.fn(config, MONTH, None)
    dbt_command(config, {MONTH: config.landed_dir(MONTH)}, "parse")


def cli(command: str) -> list[str]:
    """`reliability-report <command>` of this interpreter's environment."""
    return [str(Path(sys.executable).with_name("reliability-report")), command]


def end_to_end(root: Path, cluster: str, repeat: int) -> dict:
    """`reliability-report run` of the month in a fresh process, `repeat` times: what an operator waits
    for, Python and Prefect start-up included (ephemeral API server, warm PREFECT_HOME). Median
    seconds, each run's, and the largest peak RSS."""
    config = write_demo_config(root, cluster, root / "reports")
    command = [*cli("run"), "--month", str(MONTH), "--config", str(config)]
    runs = [command_measured(command, root / f"run-{cluster}.log") for _ in range(repeat)]
    return {
        "end_to_end_seconds": round(statistics.median(s for s, _ in runs), 2),
        "end_to_end_runs": [round(s, 2) for s, _ in runs],
        "end_to_end_peak_rss_mib": round(max(p for _, p in runs)),
    }


def history_months(sim: Path) -> list[Month]:
    """The months of a simulated history (sim/<YYYY-MM>/sacct.psv), oldest first; none if no such dir."""
    found = sim.glob("[0-9][0-9][0-9][0-9]-[0-9][0-9]/sacct.psv") if sim.is_dir() else []
    return sorted(Month.parse(path.parent.name) for path in found)


def backfill(root: Path, months: int, attempts: int, sim: Path | None, runs: int = 1) -> dict:
    """`reliability-report backfill --force` of the newest `months` months of a continuous history, `runs`
    times, each in a fresh process (seconds: their median; peak RSS: the largest): `sim`'s (linked into the work dir), else the work dir's own, simulated with months
    ending at MONTH when it has fewer (kept, never deleted: a history simulated beforehand is used)."""
    cluster = "backfill" if attempts == BIG else f"backfill{attempts}"
    cluster_sim = root / "sim" / cluster  # the demo config reads sim/<cluster>/<month>/ under the work dir
    if sim is not None:
        link_simulated(cluster_sim, sim, "--backfill-sim")
    elif len(history_months(cluster_sim)) < months:
        params = sim_params(attempts, cluster, months_before(MONTH, months - 1), MONTH)
        print(f"simulating {cluster}: {params.nodes} nodes, {params.month}..{MONTH} ...", flush=True)
        # one month is written straight into its directory, several each into theirs
        simulate(params, cluster_sim / str(MONTH) if months == 1 else cluster_sim)
    available = history_months(cluster_sim)
    if len(available) < months:
        raise SystemExit(f"{cluster_sim} has {len(available)} months, not {months}")
    span = available[-months:]
    config = write_demo_config(root, cluster, root / "reports")
    command = [*cli("backfill"), "--config", str(config), "--from", str(span[0]), "--to", str(span[-1])]
    measured = []  # (seconds, peak RSS) of each run; a run that fails stops the bench (check=True)
    for run in range(1, runs + 1):
        measured.append(command_measured([*command, "--force", "--email", "none"], root / f"backfill-{run}.log"))
        print(f"backfill run {run} of {runs}: {measured[-1][0]:.1f} s, peak RSS {measured[-1][1]:.0f} MiB", flush=True)
    seconds = statistics.median(s for s, _ in measured)
    return {
        "months": f"{span[0]}..{span[-1]}",
        "count": months,
        "seconds": round(seconds, 1),
        "seconds_per_month": round(seconds / months, 1),
        "peak_rss_mib": round(max(p for _, p in measured)),
        "runs": [{"seconds": round(s, 1), "peak_rss_mib": round(p)} for s, p in measured],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sim", type=Path, default=None, help="a simulated month's directory (default: make one)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="also the fixed overhead on a one-node month")
    parser.add_argument("--scaling", action="store_true", help="also 1/15, 1/3 and 10/3 of the month's attempts")
    parser.add_argument("--backfill", type=int, default=0, metavar="N", help="also a backfill of N months")
    parser.add_argument("--backfill-sim", type=Path, default=None, help="the backfill's history (DIR/<YYYY-MM>/)")
    parser.add_argument(
        "--backfill-runs", type=int, default=1, metavar="R", help="the backfill R times (each run's figures)"
    )
    parser.add_argument("--workdir", type=Path, default=RESULTS / "data", help="simulated months and warehouses")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the results JSON go")
    parser.add_argument("--toy", action="store_true", help="one-node months: seconds (the tests)")
    args = parser.parse_args(argv)
    root = args.workdir.resolve()
    big = SMALL if args.toy else BIG
    sim_dir = args.sim.resolve() if args.sim else simulated(big, root, "bench")
    bench_dir = root / "sim" / "bench" / str(MONTH)
    if sim_dir != bench_dir:  # the demo config reads sim/<cluster>/<month>/ under the work dir
        if bench_dir.is_symlink():
            bench_dir.unlink()
        shutil.rmtree(bench_dir, ignore_errors=True)
        bench_dir.parent.mkdir(parents=True, exist_ok=True)
        bench_dir.symlink_to(sim_dir, target_is_directory=True)

    result: dict = {"when": datetime.now(UTC).isoformat(timespec="seconds")}
    month = result["month"] = pipeline_stages(root, "bench", args.repeat, with_floor=True)
    floors = month["stages"].pop("floor")
    floor_seconds = result["floor_seconds"] = floors["seconds"]
    result["floor_runs"] = floors["runs"]
    result["floor_buffered_seconds"] = month["stages"].pop("floor_buffered")["seconds"]
    # each landing against the floor measured right before it
    lands = month["stages"]["land"]["runs"]
    result["land_to_floor_by_run"] = [round(s / f, 2) for s, f in zip(lands, floors["runs"], strict=True)]
    month |= end_to_end(root, "bench", args.repeat)
    for stage in month["stages"].values():
        stage["ratio_to_floor"] = round(stage["seconds"] / floor_seconds, 2)
    month["total_to_floor"] = round(month["total_seconds"] / floor_seconds, 2)
    month["end_to_end_to_floor"] = round(month["end_to_end_seconds"] / floor_seconds, 2)
    if args.small:
        simulated(SMALL, root, "small")
        pipeline_stages(root, "small", 1)  # warm: the warehouse exists, dbt has parsed the project
        result["small_month"] = pipeline_stages(root, "small", args.repeat) | end_to_end(root, "small", args.repeat)

    print(
        f"{month['attempts']:,} attempts; DuckDB floor (read the raw inputs once): {floor_seconds:.2f} s; "
        f"with the landing's CSV buffer size: {result['floor_buffered_seconds']:.2f} s "
        f"(land is {month['stages']['land']['seconds'] / result['floor_buffered_seconds']:.2f}x that); "
        f"each landing against the floor right before it: {', '.join(f'{r:.2f}x' for r in result['land_to_floor_by_run'])}"
    )
    print(f"{'stage':<10}{'seconds':>9}{'x floor':>9}{'peak MiB':>10}")
    for stage, figures in month["stages"].items():
        print(f"{stage:<10}{figures['seconds']:>9.2f}{figures['ratio_to_floor']:>9.2f}{figures['peak_rss_mib']:>10}")
    print(f"{'total':<10}{month['total_seconds']:>9.2f}{month['total_to_floor']:>9.2f}{month['peak_rss_mib']:>10}")
    print(
        f"`reliability-report run` end to end (a fresh process): {month['end_to_end_seconds']:.2f} s, "
        f"{month['end_to_end_to_floor']:.2f}x the floor, peak RSS {month['end_to_end_peak_rss_mib']} MiB; "
        f"dbt {month['stages']['dbt']['ratio_to_floor']:.2f}x the floor"
    )
    if "small_month" in result:
        small = result["small_month"]
        print(
            f"fixed overhead, {small['attempts']:,}-attempt month warm: stages {small['total_seconds']:.2f} s, "
            f"`reliability-report run` end to end {small['end_to_end_seconds']:.2f} s, "
            f"peak RSS {small['end_to_end_peak_rss_mib']} MiB"
        )
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "month.json").write_text(json.dumps(result, indent=1) + "\n")

    if args.backfill:
        figures = backfill(root, args.backfill, big, args.backfill_sim, args.backfill_runs)
        figures["one_month_end_to_end_seconds"] = month["end_to_end_seconds"]
        figures["to_one_month"] = round(figures["seconds"] / month["end_to_end_seconds"], 2)
        print(
            f"backfill of {figures['count']} months ({figures['months']}): {figures['seconds']:.1f} s, "
            f"{figures['to_one_month']:.2f}x one month's run end to end, peak RSS {figures['peak_rss_mib']} MiB",
            flush=True,
        )
        (args.results / "backfill.json").write_text(json.dumps(figures, indent=1) + "\n")
    if args.scaling:
        # the fixed part (start-up, GX import, dbt's re-used parse...) is paid at every size: the
        # marginal time per attempt, (total - fixed) / attempts, is what must stay flat. Each size is
        # measured warm, like the fixed part: its warehouse has dbt's parse already.
        fixed = result.get("small_month", {}).get("total_seconds", 0.0)
        scaling = []
        for share in SCALING:
            if share == 1.0:  # the month above, measured the same way
                figures = month
            else:
                attempts = round(big * share)
                cluster = f"shape{attempts // 1000}k" if attempts >= 1000 else f"shape{attempts}"
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
        (args.results / "month-scaling.json").write_text(json.dumps(scaling, indent=1) + "\n")


if __name__ == "__main__":
    main()
