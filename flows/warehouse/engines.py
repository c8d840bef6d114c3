"""The warehouse engines: DuckDB (one file per cluster, the default) or Spark ([warehouse] engine).

Everything engine-specific outside dbt lives here: where dbt's run inputs (run.parameters,
run.months, run.trailing_windows, the landed.* views over the months' Parquet) are written, the dbt profile,
and `MartReader`, the one interface through which the analysis and the quality checks read marts.
The SQL they send is the common subset of both engines, with `?` parameters.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from flows import RUNTIME_ROOT
from flows.config.cluster import ClusterConfig
from flows.core.months import Month
from flows.ingest.sources.sql import sql_quote
from flows.ingest.sources.tables import SQL_TYPES, TABLES

# the frames are made by DuckDB's and Arrow's conversions, which import pandas when a frame is asked for
if TYPE_CHECKING:
    import pandas as pd

# run.parameters' column types on each engine (the DuckDB names are the ones flows/warehouse/build.py uses).
SPARK_TYPES = {"VARCHAR": "string", "TIMESTAMP": "timestamp_ntz", "INTEGER": "int", "DOUBLE": "double"}
# The first column of each landed.<table> view: the month whose landing the row came from.
LANDED_MONTH = "landed_month"


def duckdb_landed_view(table: str, landed: Mapping[Month, Path]) -> str:
    """The DuckDB view landed.<table> over every landed month's <table>.parquet, by column name (a
    month landed by an older version may lack a newer column: null there)."""
    selects = [
        landed_select(month, f"read_parquet({sql_quote(str(path))})", table, path)
        for month, path in (
            (month, landed_dir.absolute() / f"{table}.parquet") for month, landed_dir in sorted(landed.items())
        )
    ]
    return f"CREATE OR REPLACE VIEW landed.{table} AS " + " UNION ALL BY NAME ".join(selects)


def landed_select(month: Month, source: str, table: str, path: Path) -> str:
    """One month's rows of a landed.<table> view: `landed_month`, the columns of `source` (the
    engine's SQL reading the month's Parquet file `path`) and, last as in the registry, null for each
    optional column the file lacks (flows/ingest/sources/tables.py: Field.optional)."""
    names = set(pq.read_schema(path).names) if table in TABLES and path.exists() else set()
    absent = [f for f in TABLES.get(table, ()) if f.optional and f.name not in names]
    nulls = "".join(f", CAST(NULL AS {SQL_TYPES[f.type]}) AS {f.name}" for f in absent)
    return f"SELECT '{month}' AS {LANDED_MONTH}, *{nulls} FROM {source}"


class Result(Protocol):
    """A query's rows, DB-API style (what a DuckDB connection's `execute` returns)."""

    description: Sequence[tuple]

    def fetchone(self) -> tuple | None: ...

    def fetchall(self) -> list[tuple]: ...


class MartReader(Protocol):
    """Read-only queries on the marts: `execute` (rows), `arrow` (an Arrow table), `frame` (a pandas
    frame) and `quote` (an identifier); `?` marks a parameter. DuckDB and Spark implement it."""

    def execute(self, query: str, params: Sequence[Any] = ()) -> Result: ...

    def arrow(self, query: str, params: Sequence[Any] = ()) -> pa.Table: ...

    def quote(self, name: str) -> str: ...

    def frame(self, query: str, params: Sequence[Any] = ()) -> pd.DataFrame: ...


def mart_rows(con: MartReader, query: str, params: list) -> list[dict]:
    """The query's rows as dicts of column name to value."""
    cursor = con.execute(query, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class DuckDBMarts:
    """MartReader over a DuckDB warehouse file (read-only)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def execute(self, query: str, params: Sequence[Any] = ()) -> Result:
        return self.con.execute(query, list(params))

    def arrow(self, query: str, params: Sequence[Any] = ()) -> pa.Table:
        return self.con.sql(query, params=list(params)).to_arrow_table()

    def quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def frame(self, query: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        return self.con.execute(query, list(params)).df()


class _Rows:
    """A Spark query's collected rows as a Result."""

    def __init__(self, columns: list[str], rows: list[tuple]) -> None:
        self.description = [(name,) for name in columns]
        self._rows = rows

    def fetchone(self) -> tuple | None:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[tuple]:
        return self._rows


class SparkMarts:
    """MartReader over the cluster's schema in a Spark session (local or Spark Connect)."""

    def __init__(self, spark, schema: str) -> None:
        self.spark = spark
        spark.catalog.setCurrentDatabase(schema)

    def execute(self, query: str, params: Sequence[Any] = ()) -> Result:
        frame = self._sql(query, params)
        return _Rows(frame.columns, [tuple(row) for row in frame.collect()])

    def arrow(self, query: str, params: Sequence[Any] = ()) -> pa.Table:
        return self._sql(query, params).toArrow()

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def frame(self, query: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        return self.arrow(query, params).to_pandas()

    def _sql(self, query: str, params: Sequence[Any]):
        # naive datetimes as text: Spark casts them to the column's TIMESTAMP_NTZ, where a Python
        # datetime literal would be read in the Python process's local time zone
        args = [value.isoformat(sep=" ") if isinstance(value, datetime) else value for value in params]
        return self.spark.sql(query, args=args) if args else self.spark.sql(query)


def spark_schema(config: ClusterConfig) -> str:
    """The Spark schema of the cluster's marts: [warehouse] spark_schema, or reliability_<cluster>."""
    return config.warehouse.spark_schema or "reliability_" + re.sub(r"\W", "_", config.cluster).lower()


def spark_settings(config: ClusterConfig) -> dict[str, str]:
    """The Spark session's settings: [warehouse.spark] over the defaults. Without `spark.remote`
    (Spark Connect) the session is local: its metastore (Derby) and tables live in the directory
    [paths] warehouse. UTC and ANSI off are always set: landed timestamps are naive UTC, and dbt-spark
    turns ANSI mode off for its own statements, so the analysis reads under the same rules."""
    given = {
        key: str(value).lower() if isinstance(value, bool) else str(value)
        for key, value in config.warehouse.spark.items()
    }
    settings: dict[str, str] = {}
    if "spark.remote" not in given:
        home = config.warehouse_path.absolute()
        settings = {
            "spark.master": "local[*]",
            "spark.sql.warehouse.dir": str(home / "spark-warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
            # Derby's log beside its metastore (the given JVM options are added)
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={home} {given.pop('spark.driver.extraJavaOptions', '')}".strip(),
            "spark.sql.shuffle.partitions": "8",
            "spark.ui.enabled": "false",
            # Spark's Python workers (rows made in Python) run this interpreter, not python3 on PATH
            "spark.pyspark.python": sys.executable,
        }
    settings |= given
    settings |= {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.timestampType": "TIMESTAMP_NTZ",
        "spark.sql.ansi.enabled": "false",
        # a backslash in a string literal is the character itself, as in DuckDB (the regular expressions' \s)
        "spark.sql.parser.escapedStringLiterals": "true",
    }
    return settings


def spark_session(config: ClusterConfig):
    """The process's Spark session with the cluster's settings (created on first use: a JVM, or a
    Spark Connect client). dbt-spark's `session` method gets this same session."""
    from pyspark.sql import SparkSession

    # pyspark warns, as its Spark Connect modules are imported, that it does not fully support
    # pandas 3; its pandas API is not used (the marts reach pandas through Arrow: SparkMarts.frame)
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)

    settings = spark_settings(config)
    if "spark.remote" not in settings:
        config.warehouse_path.mkdir(parents=True, exist_ok=True)
        settings = quiet_local_spark(settings, config.warehouse_path.absolute())
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def quiet_local_spark(settings: dict[str, str], home: Path) -> dict[str, str]:
    """A local session's JVM logs WARN and above to `home`/spark.log and only errors to the console
    (spark_conf/log4j2.properties), and draws no stage progress bars there: the console keeps the
    tool's stage lines. A site's own log4j2 configuration file or progress setting is kept."""
    settings = dict(settings)
    options = settings.get("spark.driver.extraJavaOptions", "")
    if "-Dlog4j2.configurationFile=" not in options and "-Dlog4j.configurationFile=" not in options:
        settings["spark.driver.extraJavaOptions"] = (
            f"-Dlog4j2.configurationFile={RUNTIME_ROOT / 'spark_conf' / 'log4j2.properties'} "
            f"-Dcluster_reliability.spark_log={home / 'spark.log'} {options}"
        ).strip()
    settings.setdefault("spark.ui.showConsoleProgress", "false")
    return settings


@contextmanager
def open_marts(config: ClusterConfig) -> Iterator[MartReader]:
    """A MartReader on the cluster's warehouse, whichever engine builds it."""
    if config.warehouse.engine == "spark":
        yield SparkMarts(spark_session(config), spark_schema(config))
        return
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        yield DuckDBMarts(con)


def input_schemas(config: ClusterConfig) -> dict[str, str]:
    """The schemas of dbt's sources `run` and `landed`: fixed in a DuckDB file (one per cluster),
    the cluster's own in a Spark metastore that many clusters share."""
    if config.warehouse.engine != "spark":
        return {"run": "run", "landed": "landed"}
    schema = spark_schema(config)
    return {"run": f"{schema}_run", "landed": f"{schema}_landed"}


def write_spark_run_inputs(
    config: ClusterConfig,
    columns: dict[str, str],
    parameters: dict,
    months: list[dict],
    trailing_months: tuple[int, ...],
    landed: Mapping[Month, Path],
    tables: list[str],
) -> None:
    """Spark's form of flows/warehouse/build.py write_run_inputs: run.parameters, run.months and
    run.trailing_windows as tables, landed.<table> as views over the months' Parquet files (which
    the Spark session must be able to read: a local path in local mode, shared storage for a
    cluster; the months' files must have the same columns)."""
    spark = spark_session(config)
    schemas = input_schemas(config)
    for schema in (*schemas.values(), spark_schema(config)):
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    for table, rows in (("parameters", [parameters]), ("months", months)):
        schema_ddl = ", ".join(f"{name} {SPARK_TYPES[columns[name]]}" for name in rows[0])
        values = [
            [value.replace(tzinfo=None) if isinstance(value, datetime) else value for value in row.values()]
            for row in rows
        ]
        spark.createDataFrame(values, schema_ddl).write.mode("overwrite").format("parquet").saveAsTable(
            f"{schemas['run']}.{table}"
        )
    windows = [[m] for m in sorted(set(trailing_months))]
    spark.createDataFrame(windows, "window_months int").write.mode("overwrite").format("parquet").saveAsTable(
        f"{schemas['run']}.trailing_windows"
    )
    for table in tables:
        paths = [(month, landed_dir.absolute() / f"{table}.parquet") for month, landed_dir in sorted(landed.items())]
        selects = [
            landed_select(month, "parquet.`{}`".format(str(path).replace("`", "``")), table, path)
            for month, path in paths
        ]
        spark.sql(f"CREATE OR REPLACE VIEW {schemas['landed']}.{table} AS " + " UNION ALL ".join(selects))


def spark_missing(config: ClusterConfig) -> bool:
    """Whether the cluster's marts are missing from the Spark catalog (the warehouse is then rebuilt
    from the landed months, as a missing DuckDB file is)."""
    return not spark_session(config).catalog.databaseExists(spark_schema(config))


def write_spark_profile(config: ClusterConfig, profiles_dir: Path) -> None:
    """profiles.yml for dbt-spark's `session` method: the cluster's schema and session settings."""
    output = {
        "type": "spark",
        "method": "session",
        "host": "NA",  # unused by the session method
        "schema": spark_schema(config),
        "threads": 4,  # dbt waits on the session between statements: the cores are kept busy
        "server_side_parameters": spark_settings(config),
    }
    profile = {"cluster_reliability": {"target": "spark", "outputs": {"spark": output}}}
    profiles_dir.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(profile, sort_keys=False)
    path = profiles_dir / "profiles.yml"
    if not path.exists() or path.read_text() != text:  # an unchanged profile keeps dbt's partial parse
        path.write_text(text)
