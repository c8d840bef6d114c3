"""Benchmark: simulate one month of a 4,000-node (32,000-GPU) cluster with about 1.5 million attempts.

Usage: .venv/bin/python bench/simulate_bench.py [--nodes 4000] [--duration-scale 0.25] [--out DIR]
Prints wall time, peak resident memory and attempts per second, and writes them to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from flows.months import Month
from simulator import SimParams, simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=4000)
    parser.add_argument("--duration-scale", type=float, default=0.25, help="0.25 gives ~1.5M attempts at 4,000 nodes")
    parser.add_argument("--month", default="2026-10")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--watch-xids-per-node",
        type=float,
        default=66.0,
        help="warning Xid lines per node: 66 gives ~300k health lines",
    )
    parser.add_argument("--out", default=None, help="where to write the logs (default: a temporary directory)")
    args = parser.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="simbench-"))
    params = SimParams(
        "bench",
        Month.parse(args.month),
        nodes=args.nodes,
        seed=args.seed,
        duration_scale=args.duration_scale,
        watch_xids_per_node=args.watch_xids_per_node,
    )
    started = time.perf_counter()
    truth = simulate(params, out)
    seconds = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    attempts = sum(1 for _ in open(out / "sacct.psv")) - 1
    health_lines = sum(sum(1 for _ in open(out / name)) for name in ("xid.log", "events.psv", "nhc.log")) - 1
    result = {
        "benchmark": "simulate",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "nodes": args.nodes,
        "duration_scale": args.duration_scale,
        "attempts": attempts,
        "health_lines": health_lines,
        "infra_failures": len(truth["infra_failures"]),
        "seconds": round(seconds, 2),
        "attempts_per_second": round(attempts / seconds),
        "peak_rss_mib": round(peak_mib),
        "sacct_mib": round((out / "sacct.psv").stat().st_size / 2**20, 1),
        "out": str(out),
    }
    print(json.dumps(result, indent=1))
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / "simulate.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
