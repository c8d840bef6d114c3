"""Benchmark: a backfill of several clusters, one after the other against side by side.

    .venv/bin/python bench/backfill_bench.py [--clusters 2] [--months 3] [--nodes 64] [--parallel N] [--repeat 1]
        [--workdir DIR] [--results DIR]

Simulates M clusters x K continuous months of N nodes once (<workdir>/sim/<cluster>/, kept; the work
dir is bench/results/data/ by default),
builds each cluster's first month once untimed (dbt's first parse of a new warehouse), then times,
each in fresh processes and with --force so that every month is built:
  sequential  one `reliability-report backfill --config <cluster>` per cluster, one after the other
              (each boots its own temporary Prefect API server, as an operator's runs would)
  parallel    one `reliability-report backfill --config a --config b ... --parallel P`: each
              cluster's backfill in its own process, P at a time, reporting to one API server
each as wall seconds and the CPU seconds of the processes (user + sys), alternating when --repeat
is more than 1; with the machine's cores and its load average before each run (a shared machine's
other work slows both). Results go to <results>/backfill-clusters.json (bench/results/ by default;
month_bench.py's --backfill writes backfill.json). Toy size (tests/test_benches.py): --clusters 2
--months 1 --nodes 2.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.months import Month, month_range
from flows.demo import months_before, write_demo_config
from simulator import SimParams, simulate

RESULTS = Path(__file__).resolve().parent / "results"
LAST = Month.parse("2026-10")
COMMAND = [str(Path(sys.executable).with_name("reliability-report")), "backfill"]


def simulate_once(root: Path, cluster: str, first: Month, nodes: int, seed: int) -> None:
    """The cluster's continuous months first..LAST under root/sim/<cluster>/<month>/, kept."""
    sim_dir = root / "sim" / cluster
    if not (sim_dir / str(first) / "truth.json").exists():
        print(f"simulating {cluster}: {nodes} nodes, {first}..{LAST} ...", flush=True)
        # one month is written straight into its directory, several each into theirs
        out = sim_dir / str(first) if first == LAST else sim_dir
        simulate(SimParams(cluster, first, last_month=LAST, nodes=nodes, seed=seed), out)


def attempts_built(config: ClusterConfig, first: Month) -> int:
    """The attempts of the cluster's reports of first..LAST, as their metrics.json count them."""
    months = month_range(first, LAST)
    return sum(json.loads((config.report_dir(m) / "metrics.json").read_text())["totals"]["attempts"] for m in months)


def timed(commands: list[list[str]]) -> dict:
    """Run the commands one after the other (each must succeed): wall and CPU seconds of the whole."""
    load = os.getloadavg()[0]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return {"seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "load_before": round(load, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=2)
    parser.add_argument("--months", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--parallel", type=int, default=None, help="clusters at a time (default: the backfill's)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=RESULTS / "data", help="simulated months and warehouses")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where backfill-clusters.json goes")
    args = parser.parse_args()
    root = args.workdir.resolve()
    first = months_before(LAST, args.months - 1)
    clusters = [f"par{i + 1}" for i in range(args.clusters)]
    for seed, cluster in enumerate(clusters, 1):
        simulate_once(root, cluster, first, args.nodes, seed)
    configs = [str(write_demo_config(root, cluster, root / "reports")) for cluster in clusters]
    span = ["--from", str(first), "--to", str(LAST), "--force", "--email", "none"]
    print("warming up: each cluster's first month (dbt's first parse of its warehouse) ...", flush=True)
    for config in configs:
        subprocess.run([*COMMAND, "--config", config, "--from", str(first), "--to", str(first)], check=True)

    sequential = [[*COMMAND, "--config", config, *span] for config in configs]
    parallel = [[*COMMAND, *(flag for config in configs for flag in ("--config", config)), *span]]
    if args.parallel:
        parallel[0] += ["--parallel", str(args.parallel)]
    runs: dict[str, list[dict]] = {"sequential": [], "parallel": []}
    for _ in range(args.repeat):
        for name, commands in (("sequential", sequential), ("parallel", parallel)):
            runs[name].append(timed(commands))
            print(f"{name}: {runs[name][-1]}", flush=True)
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "cores": os.cpu_count(),
        "clusters": args.clusters,
        "months": args.months,
        "nodes": args.nodes,
        "attempts": {c.cluster: attempts_built(c, first) for c in map(load_config, configs)},
        "parallel_flag": args.parallel,
        **{f"{name}_seconds": statistics.median(run["seconds"] for run in measured) for name, measured in runs.items()},
        "runs": runs,
    }
    result["speedup"] = round(result["sequential_seconds"] / result["parallel_seconds"], 2)
    print(
        f"{args.clusters} clusters x {args.months} months of {args.nodes} nodes on {result['cores']} cores: "
        f"sequential {result['sequential_seconds']:.0f} s, parallel {result['parallel_seconds']:.0f} s "
        f"({result['speedup']:.2f}x)"
    )
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "backfill-clusters.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
