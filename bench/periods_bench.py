"""Benchmark: one dbt build for every month it touches (issue 43, item 2), before and after, in one run.

    .venv/bin/python bench/periods_bench.py [--nodes 256] [--months 12] [--repeat 1] [--before COMMIT]
        [--workdir DIR] [--results DIR]

Simulates the demo cluster (256 nodes, seed 2025) and a second one, `demo2` (seed 2026), over
`--months` consecutive months once (<workdir>/sim/, kept; the work dir is bench/results/periods/ by
default), then times, for this checkout (and, with `--before`, for that commit too, checked out into
a git worktree under the work dir and run with this checkout's venv), each command as
`reliability-report` in a fresh process (its Prefect start-up included), emails off:
  first_run  `run --month <last>` into an empty warehouse (dbt parses the project: a new warehouse
             has no saved parse)
  run        the same `run` again: one month's run as a site's monthly run does it, parse saved
  backfill   `backfill --from <first> --to <last> --email none` into another empty warehouse
  rerun      `run --month <first>` on that backfilled warehouse: the oldest of the built months
             again (the months after it are refreshed)
  study      `study --from <first> --to <last>` of the demo cluster (as the rerun left it) and
             demo2, once demo2's months are built too (its backfill, not timed): the study's own
             periods and report
The variants alternate in each repetition (before, after); the medians, the ratios backfill/run,
rerun/run and study/run of each (issue 43's targets: <= 3, <= 2 and <= 1.5; the backfill parses
the project once, as first_run does, the rerun reads its saved parse) and the machine's load go to
stdout and <results>/periods.json (bench/results/ by default). Toy size (tests/test_benches.py):
--nodes 2 --months 2.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from flows.core.months import Month
from flows.demo import months_before, write_demo_config
from simulator import SimParams, simulate

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
CLUSTER = "demo"
OTHER = "demo2"  # the study's second cluster
RATIOS = ("backfill", "rerun", "study")
LAST = Month.parse("2026-10")


def worktree(work: Path, commit: str) -> Path:
    """A checkout of `commit` (a detached git worktree, made once and kept)."""
    path = work / f"checkout-{commit}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit], check=True)
    return path


def cli(code: Path, *args: str) -> float:
    """Seconds `reliability-report <args>` took, run from the checkout `code` with this venv."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=code, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} in {code} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds


def fresh_config(work: Path, sim: Path, name: str, cluster: str = CLUSTER) -> Path:
    """A demo config of its own (data, warehouse, reports) reading the simulated logs in `sim`."""
    workdir = work / name
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    (workdir / "sim").symlink_to(sim)
    return write_demo_config(workdir, cluster, workdir / "reports")


def backfill_args(config: Path, first: Month) -> list[str]:
    """`backfill` of first..LAST, emails off."""
    return ["backfill", "--config", str(config), "--from", str(first), "--to", str(LAST), "--email", "none"]


def measure(work: Path, code: Path, sim: Path, first: Month) -> dict[str, float]:
    """The commands' seconds for one checkout (see the module's docstring), its configs under `work`."""
    one = fresh_config(work, sim, "run")
    run = ["run", "--config", str(one), "--month", str(LAST)]
    seconds = {"first_run": cli(code, *run), "run": cli(code, *run)}
    many = fresh_config(work, sim, "backfill")
    seconds["backfill"] = cli(code, *backfill_args(many, first))
    seconds["rerun"] = cli(code, "run", "--config", str(many), "--month", str(first))
    other = fresh_config(work, sim, "other", OTHER)
    cli(code, *backfill_args(other, first))
    study = ["study", "--config", str(many), "--config", str(other), "--from", str(first), "--to", str(LAST)]
    seconds["study"] = cli(code, *study)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=None, help="also this commit (issue 43's: 3df86e2)")
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--months", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=RESULTS / "periods", help="simulated months, warehouses")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where periods.json goes")
    args = parser.parse_args()
    work = args.workdir.resolve()
    first = months_before(LAST, args.months - 1)
    sim = work / "sim" / f"{args.nodes}-{args.months}"
    for seed, cluster in enumerate((CLUSTER, OTHER), 2025):
        if not (sim / cluster).exists():
            simulate(SimParams(cluster, first, last_month=LAST, nodes=args.nodes, seed=seed), sim / cluster)
    variants = {"before": worktree(work, args.before)} if args.before else {}
    variants["after"] = ROOT
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    load = [os.getloadavg()[0]]
    for _ in range(args.repeat):
        for name, code in variants.items():
            rounds[name].append(measure(work / name, code, sim, first))
            load.append(os.getloadavg()[0])
    result = {"when": datetime.now(UTC).isoformat(timespec="seconds"), "months": f"{first}..{LAST}"}
    result |= {"nodes": args.nodes, "before_commit": args.before, "load_1min": load}
    for name, runs in rounds.items():
        median = {command: statistics.median(r[command] for r in runs) for command in runs[0]}
        ratios = {f"{command}/run": median[command] / median["run"] for command in RATIOS}
        result[name] = {"seconds": runs, "median": median, "ratios": ratios}
        print(
            f"{name:>6}: run {median['run']:.1f} s (first {median['first_run']:.1f} s), {args.months}-month backfill {median['backfill']:.1f} s "
            f"({ratios['backfill/run']:.2f}x), rerun of {first} {median['rerun']:.1f} s ({ratios['rerun/run']:.2f}x), "
            f"study of two clusters {median['study']:.1f} s ({ratios['study/run']:.2f}x)"
        )
    print(f"load (1 min) before, between and after: {', '.join(f'{x:.1f}' for x in load)}")
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "periods.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
