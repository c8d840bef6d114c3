"""The same dbt project on Spark ([warehouse] engine = "spark", dbt-spark's session method on a local
Spark): a continuous three-month history, built by both engines, gives every mart the
same rows (sorted, and EXCEPT ALL both ways) and every month the same metrics.json, the Great
Expectations suites passing on Spark's marts too."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pytest

from flows.cli import main, write_demo_config
from flows.config import load_config
from flows.engines import open_marts
from flows.months import Month
from simulator import SimParams, simulate

FIRST, LAST = Month.parse("2026-05"), Month.parse("2026-07")
MONTHS = [FIRST, FIRST.next(), LAST]
CLUSTER = "sparky"
pytestmark = pytest.mark.spark
# A local Spark of two cores for the test: few shuffle partitions (the months are small), its own
# Derby metastore and tables under the test's directory ([paths] warehouse).
SPARK_CONFIG = """
[warehouse]
engine = "spark"

[warehouse.spark]
"spark.master" = "local[2]"
"spark.sql.shuffle.partitions" = 1
"spark.driver.memory" = "1g"
# small months: compiling Java for each query costs more than it saves
"spark.sql.codegen.wholeStage" = false
"spark.driver.extraJavaOptions" = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""


@pytest.fixture(scope="module")
def engines(tmp_path_factory) -> dict:
    """Both engines' backfill of the same simulated history, each run with its own data and report
    directories (the landing is DuckDB's in both: the same Parquet)."""
    work = tmp_path_factory.mktemp("spark")
    simulate(SimParams(CLUSTER, FIRST, last_month=LAST, nodes=24, seed=7, r_f=20.0), work / "sim" / CLUSTER)
    duck = write_demo_config(work, CLUSTER, work / "reports-duckdb")
    assert main(["backfill", "--config", str(duck), "--from", str(FIRST), "--to", str(LAST)]) == 0
    spark = work / f"{CLUSTER}-spark.toml"
    text = duck.read_text().replace('data = "data"', 'data = "data-spark"')
    text = text.replace(str((work / "reports-duckdb").resolve()), str((work / "reports-spark").resolve()))
    text = text.replace(f'warehouse = "warehouse/{CLUSTER}.duckdb"', 'warehouse = "spark-warehouse"')
    spark.write_text(text + SPARK_CONFIG)
    try:
        assert main(["backfill", "--config", str(spark), "--from", str(FIRST), "--to", str(LAST)]) == 0
        yield {"duckdb": load_config(duck), "spark": load_config(spark)}
    finally:
        from pyspark.sql import SparkSession

        if (session := SparkSession.getActiveSession()) is not None:
            session.stop()


def mart_names(config) -> list[str]:
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        return [
            name
            for (name,) in con.execute(
                "select table_name from information_schema.tables where table_schema = 'main' "
                "and (table_name like 'fct\\_%' escape '\\' or table_name like 'dim\\_%' escape '\\') order by 1"
            ).fetchall()
        ]


def test_every_mart_is_the_same_on_spark(engines) -> None:
    duck, spark = engines["duckdb"], engines["spark"]
    names = mart_names(duck)
    assert len(names) > 20
    with duckdb.connect(str(duck.warehouse_path), read_only=True) as con, open_marts(spark) as marts:
        compare = duckdb.connect()
        for name in names:
            columns = [
                c for (c,) in con.execute(f"select name from pragma_table_info('{name}') order by cid").fetchall()
            ]
            select = f"select {', '.join(columns)} from {name}"
            ours = con.execute(select).to_arrow_table()
            theirs = marts.arrow(select)
            assert theirs.column_names == columns, name
            assert ours.num_rows == theirs.num_rows, name
            assert sorted_rows(ours) == sorted_rows(theirs), name
            compare.register("ours", ours)
            compare.register("theirs", theirs)
            for query in ("from ours except all from theirs", "from theirs except all from ours"):
                assert compare.execute(f"select count(*) from ({query})").fetchone() == (0,), (name, query)
        assert {m for (m,) in con.execute("select distinct month from fct_month_totals").fetchall()} == {
            str(m) for m in MONTHS
        }


def sorted_rows(table: pa.Table) -> list[tuple]:
    rows = [tuple(row.values()) for row in table.to_pylist()]
    return sorted(rows, key=lambda row: tuple((value is None, str(value)) for value in row))


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_metrics_json_is_identical(engines, month: Month) -> None:
    ours, theirs = (engines[engine].report_dir(month) / "metrics.json" for engine in ("duckdb", "spark"))
    assert json.loads(ours.read_text())["totals"]["attempts"] > 1000
    assert theirs.read_text() == ours.read_text()


def test_quality_suites_ran_on_spark(engines) -> None:
    spark = engines["spark"]
    runs = sorted((spark.data_dir / "quality" / CLUSTER / str(LAST)).glob("*.json"))
    results = json.loads(runs[-1].read_text())
    assert {r["suite"] for r in results} >= {"fct_failures", "fct_node_days", "layer_row_counts", "dim_nodes"}
    assert all(not r["failures"] for r in results)
    assert sum(r["rows"] for r in results if r["suite"] == "fct_node_days") > 0


def test_marts_are_month_partitioned_on_spark(engines) -> None:
    """insert_overwrite replaces one month's partition: three months built, each mart keeps three."""
    with open_marts(engines["spark"]) as marts:
        partitions = marts.execute("show partitions fct_month_totals").fetchall()
    assert sorted(p for (p,) in partitions) == [f"month={m}" for m in MONTHS]
