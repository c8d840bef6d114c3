"""Benchmark: simulate a 4,000-node (32,000-GPU) cluster for three continuous months (~1.5 million
attempts a month at the default duration scale).

Usage: .venv/bin/python bench/simulate_bench.py [--nodes 4000] [--months 3] [--duration-scale 0.25] [--out DIR]
    [--results DIR]
Prints wall and CPU time (user + sys) and peak resident memory for the whole history and per
simulated month, and writes them to <results>/simulate.json (bench/results/ by default).
bench/month_bench.py's 1.5M-attempt month is `--nodes 7500 --months 1 --month 2026-10
--watch-xids-per-node 35`. Toy size (tests/test_benches.py): --nodes 4 --months 2.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from flows.core.months import Month
from simulator import SimParams, simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=4000)
    parser.add_argument("--months", type=int, default=3)
    parser.add_argument("--duration-scale", type=float, default=0.25, help="0.25 gives ~1.5M attempts a month")
    parser.add_argument("--month", default="2026-08", help="the first month")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--watch-xids-per-node", type=float, default=66.0, help="warning Xid lines per node and month: ~300k lines"
    )
    parser.add_argument("--out", default=None, help="where to write the logs (default: a temporary directory)")
    parser.add_argument("--results", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="simbench-"))
    first = Month.parse(args.month)
    last = first
    for _ in range(args.months - 1):
        last = last.next()
    params = SimParams(
        "bench",
        first,
        nodes=args.nodes,
        seed=args.seed,
        last_month=last,
        duration_scale=args.duration_scale,
        watch_xids_per_node=args.watch_xids_per_node,
    )
    started, cpu = time.perf_counter(), time.process_time()
    truth = simulate(params, out)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    months = truth.get("months", {str(first): truth})
    dirs = [out / m for m in months] if len(months) > 1 else [out]
    attempts = [sum(1 for _ in open(d / "sacct.psv")) - 1 for d in dirs]
    result = {
        "benchmark": "simulate",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "nodes": args.nodes,
        "months": len(months),
        "duration_scale": args.duration_scale,
        "attempts_per_month": attempts,
        "infra_failures": sum(len(m["infra_failures"]) for m in months.values()),
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "seconds_per_month": round(seconds / len(months), 1),
        "peak_rss_mib": round(peak_mib),
        "sacct_mib_per_month": [round((d / "sacct.psv").stat().st_size / 2**20, 1) for d in dirs],
        "out": str(out),
    }
    print(json.dumps(result, indent=1))
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "simulate.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
