"""Benchmark: the month of bench/month_bench.py (~1.5M attempts) on a local Spark, stage by stage,
beside DuckDB's (docs/engines.md).

    .venv/bin/python bench/spark_bench.py [--cores 2] [--memory 8g] [--repeat 2] [--attempts 1500000]
        [--workdir DIR] [--results DIR]

The month is month_bench's (simulated into <workdir>/sim/ if missing, kept; the work dir is
bench/results/data/ by default). Both engines run the same stages, month_bench's, in one process
each (`--engine` runs one of them), DuckDB first; Spark's warehouse (Derby metastore and tables) is
<workdir>/warehouse/<cluster>-spark/, rebuilt each time. The first Spark run of a process also
starts the JVM: the warm figure is the second repetition. Results go to <results>/spark.json
(bench/results/ by default). Toy size (tests/test_benches.py): --attempts 1000 --repeat 1 --cores 1
--memory 1g, with tests/test_spark.py's settings for small data (no code generation, no adaptive
plans: `--conf spark.sql.codegen.wholeStage=false` ...).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from month_bench import BIG, MONTH, RESULTS, pipeline_stages, simulated  # bench/ is the script's path

from flows.demo import write_demo_config

SPARK_SECTION = """
[warehouse]
engine = "spark"

[warehouse.spark]
"spark.master" = "local[{cores}]"
"spark.driver.memory" = "{memory}"
"spark.sql.shuffle.partitions" = {partitions}
"""


def spark_config_writer(cores: int, memory: str, settings: list[str]):
    """write_demo_config's config with the Spark engine: a local Spark of `cores` cores, and more
    session `settings` (KEY=VALUE, the value as TOML)."""

    def write(root: Path, cluster: str, reports: Path) -> Path:
        path = write_demo_config(root, cluster, reports)
        text = path.read_text().replace(
            f'warehouse = "warehouse/{cluster}.duckdb"', f'warehouse = "warehouse/{cluster}-spark"'
        )
        spark = path.with_name(f"{cluster}-spark.toml")
        extra = "".join(f'"{key}" = {value}\n' for key, _, value in (s.partition("=") for s in settings))
        spark.write_text(text + SPARK_SECTION.format(cores=cores, memory=memory, partitions=2 * cores) + extra)
        return spark

    return write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--memory", default="8g", help="the Spark driver's heap (local mode: all of Spark)")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="a session setting (VALUE as TOML)"
    )
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--attempts", type=int, default=BIG)
    parser.add_argument("--engine", choices=("duckdb", "spark"), default=None, help="run one engine, in this process")
    parser.add_argument("--workdir", type=Path, default=RESULTS / "data")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the results JSON go")
    args = parser.parse_args()
    root, results_dir = args.workdir.resolve(), args.results.resolve()
    cluster = "bench" if args.attempts == BIG else f"spark{args.attempts // 1000}k"
    simulated(args.attempts, root, cluster)
    if args.engine is None:  # each engine in a fresh process, DuckDB first
        for engine in ("duckdb", "spark"):
            subprocess.run([sys.executable, __file__, *sys.argv[1:], "--engine", engine], check=True)
        results = {e: json.loads((results_dir / f"spark-{e}.json").read_text()) for e in ("duckdb", "spark")}
        (results_dir / "spark.json").write_text(
            json.dumps({"when": datetime.now(UTC).isoformat(timespec="seconds"), **results}, indent=1) + "\n"
        )
        print(f"{'stage':<10}{'duckdb s':>10}{'spark s':>10}{'ratio':>8}")
        for stage, figures in results["spark"]["stages"].items():
            ours = results["duckdb"]["stages"][stage]["seconds"]
            print(f"{stage:<10}{ours:>10.2f}{figures['seconds']:>10.2f}{figures['seconds'] / ours:>8.1f}")
        return
    if args.engine == "spark":
        shutil.rmtree(root / "warehouse" / f"{cluster}-spark", ignore_errors=True)
        figures = pipeline_stages(
            root, cluster, args.repeat, write_config=spark_config_writer(args.cores, args.memory, args.conf)
        )
    else:
        figures = pipeline_stages(root, cluster, args.repeat)
    figures["month"] = str(MONTH)
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / f"spark-{args.engine}.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(args.engine, json.dumps(figures["stages"]), flush=True)


if __name__ == "__main__":
    main()
