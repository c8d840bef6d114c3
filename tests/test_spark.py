"""The same dbt project on Spark ([warehouse] engine = "spark") through a Spark Connect server, the
path a site's cluster is used by (docs/engines.md): a continuous
two-month history, landed once and built by both engines, gives every mart the same rows (sorted,
and EXCEPT ALL both ways), every month the same figures in metrics.json, and passes the Great
Expectations suites on Spark's marts too.

The server is started from pyspark's own files on 127.0.0.1, with a Hive-compatible (Derby)
metastore, while DuckDB runs the whole pipeline (`reliability-report backfill`); Spark then builds
the same landed months through it (dbt-spark's session method on a Spark Connect session; dbt's
data tests left to the DuckDB build: on Spark each is a query of about a second of CPU) and the
analysis reads its marts through the same interface (flows/warehouse/engines.py). A local session inside the
tool's process is tested for its console only (test_a_local_session_prints_only_errors)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from crafted_inputs import SENTINEL_VARIABLE, add_crafted_records
from spark_connect import ConnectServer

from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.figures.month_metrics import month_figures
from flows.ingest.manifest import read_manifest
from flows.quality.suites import validate_month
from flows.warehouse.build import dbt_command
from flows.warehouse.engines import open_marts
from simulator import SimParams, simulate

FIRST, LAST = Month.parse("2026-05"), Month.parse("2026-06")  # two months: one ends inside the other's trailing windows
MONTHS = [FIRST, LAST]
CLUSTER = "sparky"
pytestmark = [pytest.mark.spark, pytest.mark.slow]
# Spark for small months: two cores, one shuffle partition, no generated Java (compiling it costs
# more than it saves on a few thousand rows: neither whole stages nor single expressions, which
# factoryMode NO_CODEGEN evaluates interpreted), no adaptive re-planning of each query's stages
# (the server's JVM: 159 CPU-s for the file with both on, 114 s with both off). The JIT's first
# tier only (C2's compiles cost more than they save in minutes of small queries), with room for
# its code: the first tier's default code cache (48 MB) fills in the first month and the JVM then
# stops compiling, running the rest ~1.5x slower.
MASTER = "local[2]"
JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m -XX:+UseSerialGC"
SERVER_SETTINGS = {
    "spark.driver.memory": "1g",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
}
# The local session of test_a_local_session_prints_only_errors, with the same settings
SPARK_CONFIG = f"""
[warehouse]
engine = "spark"

[warehouse.spark]
"spark.master" = "{MASTER}"
"spark.sql.shuffle.partitions" = 1
"spark.driver.memory" = "1g"
"spark.sql.codegen.wholeStage" = false
"spark.sql.codegen.factoryMode" = "NO_CODEGEN"
"spark.sql.adaptive.enabled" = false
"spark.driver.extraJavaOptions" = "{JAVA_OPTIONS}"
"""
# What pyspark puts in the process's environment while a Spark Connect client runs: a process
# started then (the local session's below) would be a Connect client too
CONNECT_MODE = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
# The tool as a site configures it against a cluster: only the server's address (and a session
# setting); the marts' tables live in the server's metastore and warehouse.
CONNECT_CONFIG = """
[warehouse]
engine = "spark"

[warehouse.spark]
"spark.remote" = "{url}"
"spark.sql.shuffle.partitions" = 1
"""


@pytest.fixture(scope="module")
def engines(tmp_path_factory, request) -> Iterator[dict]:
    """The history built by DuckDB (the whole pipeline) and by Spark through a Spark Connect server
    (dbt, then the analysis). The server's JVM starts while DuckDB builds; it is stopped at the end,
    its logs kept in test-artifacts/spark-connect/ when the build or a test failed."""
    work = tmp_path_factory.mktemp("spark")
    server = ConnectServer(work / "connect-server", MASTER, SERVER_SETTINGS, JAVA_OPTIONS).start()
    failed_before, built = request.session.testsfailed, False
    try:
        history = build_both(work, server)
        built = True
        yield history
    finally:
        from pyspark.sql.connect.session import SparkSession

        if (session := SparkSession.getActiveSession()) is not None:
            session.stop()
        for name in CONNECT_MODE:  # what pyspark set for its client (the worker's later files are classic)
            os.environ.pop(name, None)
        server.stop(keep_logs=not built or request.session.testsfailed > failed_before)


def build_both(work: Path, server: ConnectServer) -> dict:
    simulate(SimParams(CLUSTER, FIRST, last_month=LAST, nodes=24, seed=7, r_f=20.0), work / "sim" / CLUSTER)
    # node names that would run `touch $CRAFTED_SENTINEL` in a shell, through both engines' months
    os.environ[SENTINEL_VARIABLE] = str(work / "crafted-name-ran")
    crafted = {month: add_crafted_records(work / "sim" / CLUSTER / str(month)) for month in MONTHS}
    duck = write_demo_config(work, CLUSTER, work / "reports")
    assert main(["backfill", "--config", str(duck), "--from", str(FIRST), "--to", str(LAST)]) == 0
    spark_path = work / f"{CLUSTER}-spark.toml"
    text = duck.read_text().replace(f'warehouse = "warehouse/{CLUSTER}.duckdb"', 'warehouse = "spark-warehouse"')
    spark_path.write_text(text + CONNECT_CONFIG.format(url=server.wait_ready()))
    spark = load_config(spark_path)
    figures = {}
    for month in MONTHS:
        landed = spark.data_dir / "landed" / CLUSTER / str(month)
        result = dbt_command(
            spark,
            {month: landed},
            "build",
            "--exclude-resource-type",
            "test",
            "--exclude-resource-type",
            "unit_test",
        )
        assert result.success, [str(r.message) for r in result.result.results if str(r.status) != "success"]
        with open_marts(spark) as marts:
            figures[month] = month_figures(marts, month, spark.analysis, read_manifest(landed).sources).metrics
    with open_marts(spark) as marts:
        quality = validate_month(spark.warehouse_path, LAST, landed_dir=landed, marts=marts)
    return {
        "duckdb": load_config(duck),
        "spark": spark,
        "figures": figures,
        "quality": quality,
        "server": server,
        "crafted": crafted,
        "sentinel": Path(os.environ.pop(SENTINEL_VARIABLE)),
    }


def test_spark_is_reached_through_the_connect_server_on_loopback(engines) -> None:
    """The path a cluster is used by: a Spark Connect client here (no JVM in this process), the
    marts in the server's Hive metastore and warehouse, the server listening on 127.0.0.1 only."""
    from pyspark import SparkContext
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    server, spark = engines["server"], engines["spark"]
    with open_marts(spark) as marts:
        assert isinstance(marts.spark, ConnectSession)
        assert marts.execute("select current_database()").fetchone() == (f"reliability_{CLUSTER}",)
        assert marts.spark.conf.get("spark.sql.catalogImplementation") == "hive"
    assert SparkContext._active_spark_context is None and SparkContext._jvm is None
    assert (server.home / "spark-warehouse" / f"reliability_{CLUSTER}.db" / "fct_months_built").is_dir()
    assert (server.home / "metastore_db").is_dir() and not (spark.warehouse_path / "metastore_db").exists()
    listening = server.listening()
    assert (server.port, "127.0.0.1") in listening and {address for _, address in listening} == {"127.0.0.1"}


def test_crafted_node_names_ran_nothing_and_were_quarantined(engines) -> None:
    """Records whose node is a crafted name (tests/crafted_inputs.py) ran no command through the
    landing, DuckDB's build and Spark's; each month's quarantine holds them, none reached a mart."""
    assert not engines["sentinel"].exists()
    for month, added in engines["crafted"].items():
        landed = engines["duckdb"].data_dir / "landed" / CLUSTER / str(month)
        quarantined = [json.loads(line) for line in (landed / "quarantine.jsonl").read_text().splitlines()]
        assert len([q for q in quarantined if "touch" in q["value"] or "@all" in q["value"]]) == added, month
    with open_marts(engines["spark"]) as marts:
        nodes = {node for (node,) in marts.execute("select distinct node from fct_node_days").fetchall()}
    assert nodes and not any(set(node) & set("@'$;*`") for node in nodes)


def mart_names(config) -> list[str]:
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        names = con.execute(
            "select table_name from information_schema.tables where table_schema = 'main' order by 1"
        ).fetchall()
    return [name for (name,) in names if name.startswith(("fct_", "dim_"))]


def sorted_rows(table: pa.Table) -> list[tuple]:
    rows = [tuple(row.values()) for row in table.to_pylist()]
    return sorted(rows, key=lambda row: tuple((value is None, str(value)) for value in row))


def test_every_mart_is_the_same_on_spark(engines) -> None:
    duck, spark = engines["duckdb"], engines["spark"]
    names = mart_names(duck)
    assert len(names) > 20
    compare = duckdb.connect()
    with duckdb.connect(str(duck.warehouse_path), read_only=True) as con, open_marts(spark) as marts:
        for name in names:
            columns = [
                c for (c,) in con.execute(f"select name from pragma_table_info('{name}') order by cid").fetchall()
            ]
            select = f"select {', '.join(columns)} from {name}"
            ours, theirs = con.execute(select).to_arrow_table(), marts.arrow(select)
            assert theirs.column_names == columns, name
            assert sorted_rows(ours) == sorted_rows(theirs), name
            compare.register("ours", ours)
            compare.register("theirs", theirs)
            for query in ("from ours except all from theirs", "from theirs except all from ours"):
                assert compare.execute(f"select count(*) from ({query})").fetchall() == [(0,)], (name, query)
        built = con.execute(
            "select last_month, attempts from fct_period_totals where kind = 'month' order by last_month"
        ).fetchall()
    assert [month for month, _ in built] == [str(m) for m in MONTHS]
    assert all(attempts > 1000 for _, attempts in built)


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_metrics_json_is_identical(engines, month: Month) -> None:
    """Every figure of metrics.json (the sections read from the marts) as the report stores them:
    sorted keys, JSON types."""
    reported = json.loads((engines["duckdb"].report_dir(month) / "metrics.json").read_text())
    ours = {key: reported[key] for key in engines["figures"][month]}
    theirs = json.loads(json.dumps(engines["figures"][month], sort_keys=True, default=str))
    assert json.dumps(theirs, sort_keys=True, indent=1) == json.dumps(ours, sort_keys=True, indent=1)
    assert ours["totals"]["attempts"] > 1000 and ours["node_failure_rate"]["all"]["failures"] > 0


def test_quality_suites_give_the_same_results_on_spark(engines) -> None:
    """The Great Expectations suites on Spark's marts: the same rows checked and the same outcome of
    every expectation as on DuckDB's (whose run the pipeline kept)."""
    duck = engines["duckdb"]
    (kept,) = sorted((duck.data_dir / "quality" / CLUSTER / str(LAST)).glob("*.json"))[-1:]
    ours = {r["suite"]: r for r in json.loads(kept.read_text())}
    theirs = {r.suite: asdict(r) for r in engines["quality"]}
    assert {"fct_failures", "fct_node_days", "layer_row_counts", "dim_nodes", "landed_schema"} <= set(theirs)
    assert theirs == ours
    assert all(not r["failures"] for r in theirs.values()) and theirs["fct_node_days"]["rows"] > 0


def test_marts_are_month_partitioned_on_spark(engines) -> None:
    """insert_overwrite replaces one month's partition: two months built, each mart keeps both."""
    with open_marts(engines["spark"]) as marts:
        partitions = marts.execute("show partitions fct_months_built").fetchall()
    assert sorted(p for (p,) in partitions) == [f"month={m}" for m in MONTHS]


# The JVM's console output of a local session, in a process of its own (the fixture's JVM already
# runs in this one): the warnings a month's build gave (232 lines on a 64-node month before) are
# the ones made here (a second getOrCreate with static settings, Hive's metastore, a window without
# PARTITION BY, a TIMESTAMP_NTZ table). An error still reaches the console.
QUIET_SCRIPT = """
import sys
from flows.config.file import load_config
from flows.warehouse.engines import spark_session

config = load_config(sys.argv[1])
spark = spark_session(config)
spark = spark_session(config)  # dbt-spark's session method asks again: "Using an existing Spark session"
spark.sql("CREATE SCHEMA IF NOT EXISTS quiet")
spark.sql("CREATE TABLE quiet.t USING parquet AS SELECT TIMESTAMP_NTZ'2026-05-01 00:00:00' AS at, 1 AS n")
assert spark.sql("SELECT n, row_number() OVER (ORDER BY at) AS k FROM quiet.t").collect()[0].k == 1
spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getLogger("quiet.check").error("a real error")
spark.stop()
"""


def test_a_local_session_prints_only_errors(tmp_path) -> None:
    config = write_demo_config(tmp_path, "quiet", tmp_path / "reports")
    text = config.read_text().replace('warehouse = "warehouse/quiet.duckdb"', 'warehouse = "spark-warehouse"')
    config.write_text(text + SPARK_CONFIG)
    done = subprocess.run(
        [sys.executable, "-c", QUIET_SCRIPT, str(config)],
        cwd=tmp_path,
        env={name: value for name, value in os.environ.items() if name not in CONNECT_MODE},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    console = (done.stdout + done.stderr).splitlines()
    assert [line for line in console if re.search(r"\bWARN\b|log4j", line)] == []
    assert [line for line in console if " ERROR " in line] == [line for line in console if "a real error" in line]
    assert any("a real error" in line for line in console)
    logged = (tmp_path / "spark-warehouse" / "spark.log").read_text()  # the warnings are kept beside the warehouse
    assert "Using an existing Spark session" in logged and "a real error" in logged
