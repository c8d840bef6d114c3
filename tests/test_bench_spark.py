"""bench/spark_bench.py at a toy size (tests/test_benches.py lists every bench's toy run; one heavy bench a file,
so that the test command's workers run them side by side)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_runs import bench, read_json


@pytest.mark.slow
@pytest.mark.bench
@pytest.mark.spark
def test_spark_bench(tmp_path: Path):
    """month_bench's stages on both engines, Spark a local one of one core with tests/test_spark.py's
    settings for small data (the build's per-statement cost, not the rows, is a toy month's time)."""
    results = tmp_path / "results"
    small_data = [
        f"--conf={key}={value}"
        for key, value in (
            ("spark.sql.codegen.wholeStage", "false"),
            ("spark.sql.codegen.factoryMode", '"NO_CODEGEN"'),
            ("spark.sql.adaptive.enabled", "false"),
            ("spark.driver.extraJavaOptions", '"-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"'),
        )
    ]
    bench(
        "spark_bench.py", "--attempts", "1000", "--repeat", "1", "--cores", "1", "--memory", "1g", *small_data,
        "--workdir", tmp_path / "work", "--results", results,
    )  # fmt: skip
    figures = read_json(results / "spark.json")
    for engine in ("duckdb", "spark"):
        stages = figures[engine]["stages"]
        assert list(stages) == ["land", "dbt", "quality", "analysis", "render"], engine
        assert all(s["seconds"] > 0 for s in stages.values()) and figures[engine]["attempts"] > 0
    assert figures["spark"]["attempts"] == figures["duckdb"]["attempts"]
