"""Benchmark: ingestion throughput of a sacct dump against DuckDB's own read_csv of the same file.

Usage: .venv/bin/python bench/ingest_bench.py [--sim DIR] [--repeat 3] [--nodes 4000] [--workdir DIR] [--results DIR]
DIR holds a simulated month (default: simulate a month of --nodes nodes at duration scale 0.25,
~1.5M attempts at 4,000 nodes, into the work dir, a temporary directory by default). In one process
and on the same file it times, as medians of --repeat runs:
  floor          DuckDB `read_csv(all_varchar=true)` of sacct.psv into a table (the physical floor)
  floor_buffered the same with read_sacct's CSV buffer size (which also speeds DuckDB's own read up)
  read_sacct     our reader: read, split, type, quarantine, expand host lists, deduplicate
  land_sacct     read_sacct plus writing attempts.parquet and the host lists' Parquet
  floor_month    month_bench's floor: DuckDB reads every raw input of the month (sacct, events, logs, DCGM)
  land_month     the whole landing stage (every source of the demo config, raw copies, manifest)
and prints rows per second and each figure's ratio to the floor, and land_month's to floor_month (the
month bench's ratio, here in a fresh process). Results go to <results>/ingest.json (bench/results/ by
default). Toy size (tests/test_benches.py): --nodes 4 --repeat 1.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
from month_bench import BUFFERED_READ, RESULTS  # bench/ is this script's directory, so on sys.path
from month_bench import floor as month_floor

from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.land import land_month, write_job_tables
from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sacct import read_sacct
from simulator import SimParams, simulate


def _floor(path: Path, buffer: str = "") -> None:
    with duckdb.connect() as con:
        con.execute(f"CREATE TABLE jobs AS SELECT * FROM read_csv(?, all_varchar = true {buffer})", [str(path)])


def _read(path: Path, out: Path | None = None) -> None:
    with duckdb.connect() as con:
        read_sacct(con, path, LocalClock(ZoneInfo("UTC")), quarantine=Quarantine(strict=False))
        if out is not None:
            write_job_tables(con, "bench", path.name, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sim", help="a simulated month (sacct.psv, events.psv, xid.log, nhc.log, dcgm/)")
    parser.add_argument("--month", default="2026-10")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=4000, help="the simulated month's nodes (without --sim)")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary directory")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where ingest.json goes")
    args = parser.parse_args()
    month = Month.parse(args.month)
    work = args.workdir.resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="ingestbench-"))
    if args.sim:
        sim = Path(args.sim).resolve()
    else:
        sim = work / "sim" / "bench" / str(month)
        simulate(SimParams("bench", month, nodes=args.nodes, seed=1, duration_scale=0.25), sim)
    # The demo config reads sim/<cluster>/<month>/ under its work directory.
    (work / "sim" / "bench").mkdir(parents=True, exist_ok=True)
    if not (work / "sim" / "bench" / str(month)).exists():
        (work / "sim" / "bench" / str(month)).symlink_to(sim)
    config = load_config(write_demo_config(work, "bench", work / "reports"))
    sacct = sim / "sacct.psv"
    rows = sum(1 for _ in open(sacct, "rb")) - 1
    out = work / "parquet"
    out.mkdir(exist_ok=True)

    stages = {
        "floor": lambda: _floor(sacct),
        "floor_buffered": lambda: _floor(sacct, BUFFERED_READ),
        "read_sacct": lambda: _read(sacct),
        "land_sacct": lambda: _read(sacct, out),
        "floor_month": lambda: month_floor(sim),
        "land_month": lambda: land_month(config, month),
    }
    seconds: dict[str, list[float]] = {name: [] for name in stages}
    for _ in range(args.repeat):  # interleaved, so a noisy moment hits every stage alike
        for name, run in stages.items():
            started = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    result = {
        "benchmark": "ingest",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "sacct_rows": rows,
        "sacct_mib": round(sacct.stat().st_size / 2**20, 1),
        "repeat": args.repeat,
        "seconds_median": {name: round(value, 2) for name, value in medians.items()},
        "rows_per_second": {name: round(rows / value) for name, value in medians.items()},
        "ratio_to_floor": {name: round(value / medians["floor"], 2) for name, value in medians.items()},
        "land_month_to_floor_month": round(medians["land_month"] / medians["floor_month"], 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "sim": str(sim),
    }
    print(json.dumps(result, indent=1))
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "ingest.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
