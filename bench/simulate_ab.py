"""A/B of the simulator between two checkouts: each configuration simulated in a fresh process per
checkout, the checkouts alternating (A B A B ...), so that both see the same machine.

    .venv/bin/python bench/simulate_ab.py --a /path/to/old/checkout --b . [--repeat 2] [--configs month-1.5M n300-4m]

Per run: the `simulate()` call's CPU time (user + sys of the process, `time.process_time`) and wall
time, the whole process's CPU time with its imports (the parent's rusage of the child) and its peak
resident memory. On a
machine shared with other work the CPU times are the figures to compare. Results also go to
bench/results/simulate_ab.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

# name -> SimParams keyword arguments (month, last_month as text)
CONFIGS = {
    # bench/month_bench.py's simulated(1_500_000, ...): 7,500 nodes, duration scale 0.25, 35 warning Xids a node
    "month-1.5M": {
        "cluster": "bench",
        "month": "2026-10",
        "nodes": 7500,
        "seed": 1,
        "duration_scale": 0.25,
        "watch_xids_per_node": 0.175 * 1_500_000 / 7500,
    },
    "n300-4m": {"cluster": "hist", "month": "2026-05", "last_month": "2026-08", "nodes": 300, "seed": 41, "r_f": 15.0},
    "n64-12m": {"cluster": "rsc1", "month": "2025-11", "last_month": "2026-10", "nodes": 64, "seed": 61, "r_f": 6.5},
    "n64-3m": {"cluster": "bd", "month": "2026-05", "last_month": "2026-07", "nodes": 64, "seed": 23, "r_f": 25.0},
    "n16-1m": {"cluster": "dep", "month": "2026-10", "nodes": 16, "seed": 1},
}
RESULTS = Path(__file__).resolve().parent / "results"


def child(name: str) -> None:
    """Simulate one configuration with whatever `simulator` is first on the path; print the figures."""
    import resource
    import shutil
    import tempfile
    import time

    from flows.core.months import Month
    from simulator import SimParams, simulate

    kwargs = dict(CONFIGS[name])
    kwargs["month"] = Month.parse(kwargs["month"])
    if "last_month" in kwargs:
        kwargs["last_month"] = Month.parse(kwargs["last_month"])
    out = Path(tempfile.mkdtemp(prefix="simab-"))
    cpu, wall = time.process_time(), time.perf_counter()
    truth = simulate(SimParams(**kwargs), out)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    months = truth.get("months", {str(kwargs["month"]): truth})
    dirs = [out / m for m in months] if len(months) > 1 else [out]
    attempts = sum(sum(1 for _ in open(d / "sacct.psv")) - 1 for d in dirs)
    shutil.rmtree(out)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cpu": cpu, "wall": wall, "attempts": attempts, "peak_mib": peak_mib}))


def run(checkout: Path, name: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", name], env=env, check=True, capture_output=True, text=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", type=Path, help="the checkout before (first on PYTHONPATH)")
    parser.add_argument("--b", type=Path, help="the checkout after")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    checkouts = {"a": args.a.resolve(), "b": args.b.resolve()}
    runs: dict[str, dict[str, list[dict]]] = {}
    for name in args.configs:
        for round_ in range(args.repeat):
            for side, checkout in checkouts.items():
                r = run(checkout, name)
                runs.setdefault(name, {}).setdefault(side, []).append(r)
                print(
                    f"{name:11s} round {round_ + 1} {side}: simulate cpu {r['cpu']:7.2f} s wall {r['wall']:7.2f} s, "
                    f"process cpu {r['process_cpu']:7.2f} s, peak {r['peak_mib']:6.0f} MiB, {r['attempts']} attempts",
                    flush=True,
                )
    summary = {
        name: {
            side: {key: statistics.median(r[key] for r in rs) for key in ("cpu", "wall", "process_cpu", "peak_mib")}
            for side, rs in sides.items()
        }
        for name, sides in runs.items()
    }
    for name, sides in summary.items():
        a, b = sides["a"], sides["b"]
        print(
            f"{name:11s} medians: simulate cpu {a['cpu']:.2f} -> {b['cpu']:.2f} s ({a['cpu'] / b['cpu']:.2f}x), "
            f"wall {a['wall']:.2f} -> {b['wall']:.2f} s, process cpu {a['process_cpu']:.2f} -> {b['process_cpu']:.2f} s, "
            f"peak {a['peak_mib']:.0f} -> {b['peak_mib']:.0f} MiB"
        )
    RESULTS.mkdir(exist_ok=True)
    document = {
        "benchmark": "simulate_ab",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "checkouts": {k: str(v) for k, v in checkouts.items()},
        "runs": runs,
        "medians": summary,
    }
    (RESULTS / "simulate_ab.json").write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
