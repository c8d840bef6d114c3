"""Build months in the DuckDB warehouse with dbt (in-process), then release dbt-duckdb's file lock.

One dbt build takes any number of months (build_months): every model computes each month of
run.months from that month's landing, and the incremental marts replace those months' rows. The
warehouse is a cache of the landed months on disk: one that is missing, cannot be opened (corrupt)
or was built by another version of the tool (flows/warehouse/schema_version.py) is rebuilt from
them, every landed month in one build, the old file kept aside.

The run's parameters, its months and their landed Parquet files reach dbt as data in the warehouse
(tables run.parameters and run.months, views landed.*), not as dbt vars: the parsed project is then
the same for every set of months and cluster, and dbt re-uses its parse (partial parsing) instead
of parsing it all again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import yaml

from flows import DBT_PROJECT_DIR
from flows.core.config import ClusterConfig
from flows.core.escape import escaped_logger
from flows.core.months import MONTH_RE, Month
from flows.ingest.manifest import LandedMonthError, read_manifest
from flows.warehouse import schema_version
from flows.warehouse.engines import (
    duckdb_landed_view,
    input_schemas,
    spark_missing,
    write_spark_profile,
    write_spark_run_inputs,
)

# The row of run.parameters (dbt source `run`, models/_run__sources.yml): name -> DuckDB type.
PARAMETER_COLUMNS = {
    "cluster": "VARCHAR",
    "study_from": "VARCHAR",
    "study_to": "VARCHAR",
    "gpus_per_node": "INTEGER",
    "attr_before_minutes": "INTEGER",
    "attr_after_minutes": "INTEGER",
    "run_link_gap_minutes": "INTEGER",
    "paper_min_gpus": "INTEGER",
    "restart_overhead_minutes": "DOUBLE",
    "ckpt_interval_minutes": "DOUBLE",
    "ckpt_write_minutes": "DOUBLE",
    "ettr_min_run_hours": "DOUBLE",
    "ettr_priority_qos": "VARCHAR",
    "ettr_priority_partition": "VARCHAR",
    "lost_work_cap_minutes": "DOUBLE",
    "lemon_window_days": "INTEGER",
    "lemon_trailing_days": "INTEGER",
    "lemon_repeat_days": "INTEGER",
    "lemon_repeat_failures": "INTEGER",
}
# A row of run.months, one per month of the build: name -> DuckDB type (`month` its key).
MONTH_COLUMNS = {
    "month": "VARCHAR",
    "month_start": "TIMESTAMP",
    "month_end": "TIMESTAMP",
    "as_of": "TIMESTAMP",
    "observed_start": "TIMESTAMP",
    "period_end": "TIMESTAMP",
}


log = escaped_logger(__name__)


class WarehouseBuildError(RuntimeError):
    pass


class WarehouseBusyError(RuntimeError):
    """Another process (not a run of this tool, which would hold the run lock) has the warehouse open."""


def landed_as_of(landed_dir: Path) -> datetime:
    """When the landed records were dumped (naive UTC), as the landing recorded it."""
    return read_manifest(landed_dir).as_of.time


def run_parameters(config: ClusterConfig, study: tuple[Month, Month] | None = None) -> dict:
    """What the dbt models read from run.parameters for this cluster: its analysis settings, and
    `study_from`..`study_to`, the range of a study's build (a period of dim_periods; empty in a
    build of months, which adds no study period: the periods never depend on how months were
    grouped into builds)."""
    a = config.analysis
    return {
        "cluster": config.cluster,
        "study_from": str(study[0]) if study else "",
        "study_to": str(study[1]) if study else "",
        "gpus_per_node": a.gpus_per_node,
        "attr_before_minutes": a.attr_before_minutes,
        "attr_after_minutes": a.attr_after_minutes,
        "run_link_gap_minutes": a.run_link_gap_minutes,
        "paper_min_gpus": a.paper_min_gpus,
        "restart_overhead_minutes": a.restart_overhead_minutes,
        "ckpt_interval_minutes": a.ckpt_interval_minutes,
        "ckpt_write_minutes": a.ckpt_write_minutes,
        "ettr_min_run_hours": a.ettr_min_run_hours,
        "ettr_priority_qos": a.ettr_priority_qos,
        "ettr_priority_partition": a.ettr_priority_partition,
        "lost_work_cap_minutes": a.lost_work_cap_minutes,
        "lemon_window_days": a.lemon_window_days,
        "lemon_trailing_days": a.lemon_trailing_days,
        "lemon_repeat_days": a.lemon_repeat_days,
        "lemon_repeat_failures": a.lemon_repeat_failures,
    }


def run_month(month: Month, landed_dir: Path) -> dict:
    """A month's row of run.months. `observed_start`..`period_end` is the window its job records
    observe (Manifest.observed): from the month's start, or later when they begin later (a dump
    windowed by end time), to its end, or the dump time `as_of` if that came first. Exposure and
    queue time are clipped to it, so nothing is counted that the records could not have seen."""
    manifest = read_manifest(landed_dir)
    start, end = manifest.observed(month)
    return {
        "month": str(month),
        "month_start": month.start.replace(tzinfo=None),  # naive UTC, like every landed timestamp
        "month_end": month.end.replace(tzinfo=None),
        "as_of": manifest.as_of.time,
        "observed_start": start,
        "period_end": end,
    }


def landed_tables(project_dir: Path) -> list[str]:
    """The tables of dbt's `landed` source, one Parquet file each in a landed month."""
    sources = yaml.safe_load((project_dir / "models" / "staging" / "_slurm__sources.yml").read_text())["sources"]
    (landed,) = (source for source in sources if source["name"] == "landed")
    return [table["name"] for table in landed["tables"]]


def write_run_inputs(
    warehouse: Path,
    parameters: dict,
    months: list[dict],
    trailing_months: tuple[int, ...],
    landed: Mapping[Month, Path],
    tables: list[str],
) -> None:
    """run.parameters holds `parameters`, run.months the `months` rows, run.trailing_windows one row
    per trailing window's length in months; landed.<table> is a view over every landed month's
    <table>.parquet (a month landed by an older version may lack a newer column: matched by name)."""
    with duckdb.connect(str(warehouse)) as con:
        con.begin()
        con.execute("CREATE SCHEMA IF NOT EXISTS run")
        for table, columns, rows, key in (
            ("parameters", PARAMETER_COLUMNS, [parameters], ""),
            ("months", MONTH_COLUMNS, months, ", PRIMARY KEY (month)"),
        ):
            ddl = ", ".join(f"{name} {columns[name]} NOT NULL" for name in rows[0])
            con.execute(f"CREATE OR REPLACE TABLE run.{table} ({ddl}{key})")
            placeholders = ", ".join(["?"] * len(rows[0]))
            con.executemany(f"INSERT INTO run.{table} VALUES ({placeholders})", [list(row.values()) for row in rows])
        con.execute("CREATE OR REPLACE TABLE run.trailing_windows (window_months INTEGER NOT NULL PRIMARY KEY)")
        con.executemany("INSERT INTO run.trailing_windows VALUES (?)", [[m] for m in sorted(set(trailing_months))])
        con.execute("CREATE SCHEMA IF NOT EXISTS landed")
        for table in tables:
            con.execute(duckdb_landed_view(table, landed))
        con.commit()


def dbt_work_dir(warehouse: Path, project_dir: Path) -> Path:
    """dbt's target and log directories for one warehouse and one checkout of the project.

    partial_parse.msgpack keeps the absolute paths of the project that wrote it (a build from
    another checkout would read its seeds from there) and the profile, whose path is the warehouse
    (another warehouse would force a full parse), so neither may be shared."""
    checkout = hashlib.sha256(str(project_dir.resolve()).encode()).hexdigest()[:12]
    return warehouse.parent / "dbt" / f"{warehouse.stem}-{checkout}"


def build_months(config: ClusterConfig, months: Mapping[Month, Path]) -> dict[str, int]:
    """One `dbt build` of `months` (each month -> its landed directory); returns counts of nodes by
    status. Raises naming every failed node.

    A missing or corrupt warehouse, or one built by another version of the tool, is rebuilt
    instead, from every landed month of the cluster in one build (rebuild); a DuckDB warehouse then
    records that this version built it (schema_version). The models' unit tests check the SQL, not
    the months' data: they run in the test suite (a `dbt_command(..., "build")`, which includes
    them), not in every build.
    """
    if config.warehouse.engine == "spark":
        return rebuild(config, months, "missing") if spark_missing(config) else _build(config, months)
    warehouse = config.warehouse_path
    if problem := warehouse_problem(warehouse):
        statuses = rebuild(config, months, problem)
    elif other := schema_version.other_version(warehouse):
        statuses = rebuild(config, months, other, aside="previous")
    else:
        statuses = _build(config, months)
    schema_version.record(warehouse)
    return statuses


def upgrade(config: ClusterConfig) -> bool:
    """Rebuild a DuckDB warehouse another version of the tool built from every landed month, as
    build_months does first, for a reader that builds no month (a study). Whether it rebuilt."""
    warehouse = config.warehouse_path
    if config.warehouse.engine == "spark" or warehouse_problem(warehouse) or not landed_months(config):
        return False  # a missing or corrupt one is rebuilt by the months' builds that follow
    if (other := schema_version.other_version(warehouse)) is None:
        return False
    rebuild(config, {}, other, aside="previous")
    schema_version.record(warehouse)
    return True


def _build(config: ClusterConfig, months: Mapping[Month, Path]) -> dict[str, int]:
    result = dbt_command(config, months, "build", "--exclude-resource-type", "unit_test")
    return _statuses(result)


def build_study(config: ClusterConfig, first: Month, last: Month, landed_dir: Path) -> dict[str, int]:
    """`dbt build` of the periods (dim_periods and the figures' marts, tag `periods`) with the
    study's range `first`..`last` among them: a build but for the months' own rows, which are
    built. `landed_dir` is `last`'s landed month (the build's run.months). Returns counts of nodes
    by status."""
    result = dbt_command(
        config, {last: landed_dir}, "build", "--select", "tag:periods", "--exclude-resource-type", "unit_test",
        study_from=first,
    )  # fmt: skip
    return _statuses(result)


def _statuses(result) -> dict[str, int]:
    """Counts of a dbt build's nodes by status; raises WarehouseBuildError naming every failed node."""
    statuses: dict[str, int] = {}
    failed = []
    for node_result in result.result.results:
        status = str(node_result.status)
        statuses[status] = statuses.get(status, 0) + 1
        if status not in ("success", "pass"):
            failed.append(f"{node_result.node.unique_id} [{status}]: {node_result.message}")
    if not result.success:
        raise WarehouseBuildError("dbt build failed:\n  " + "\n  ".join(failed))
    return statuses


def warehouse_problem(warehouse: Path) -> str | None:
    """Why the warehouse must be rebuilt ("missing", or "cannot be opened (<DuckDB's error>)"), or None.
    Raises WarehouseBusyError if another process holds DuckDB's lock on it."""
    if not warehouse.exists():
        return "missing"
    try:
        with duckdb.connect(str(warehouse)) as con:  # read-write: any other process's lock conflicts
            con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()  # reads the catalog
    except duckdb.Error as error:
        if "Could not set lock" in str(error):
            raise WarehouseBusyError(
                f"warehouse {warehouse} is open in another process; close it and run again ({error})"
            ) from None
        return f"cannot be opened ({str(error).splitlines()[0]})"
    return None


def landed_months(config: ClusterConfig) -> dict[Month, Path]:
    """The cluster's landed months on disk, oldest first (a killed run's temporary copies excluded)."""
    root = config.data_dir / "landed" / config.cluster
    found = [p for p in root.iterdir() if p.is_dir() and MONTH_RE.fullmatch(p.name)] if root.is_dir() else []
    return {Month.parse(p.name): p for p in sorted(found, key=lambda p: p.name)}


def check_landed(landed_dir: Path, tables: list[str]) -> None:
    """Raise LandedMonthError naming the file if the landed month's manifest or a table's Parquet is
    missing or unreadable."""
    read_manifest(landed_dir)
    for table in tables:
        path = landed_dir / f"{table}.parquet"
        try:
            pq.read_metadata(path)
        except FileNotFoundError:
            raise LandedMonthError(f"{path} does not exist; run the month again to land it again") from None
        except (OSError, ValueError) as error:  # pyarrow: "Parquet magic bytes not found", ...
            raise LandedMonthError(
                f"{path}: not a Parquet file ({error}); run the month again to land it again"
            ) from None


def rebuild(
    config: ClusterConfig, months: Mapping[Month, Path], problem: str, aside: str = "corrupt"
) -> dict[str, int]:
    """Build every landed month of the cluster, `months` among them, into a new warehouse in one
    build; returns its counts. An existing warehouse (`problem` says what is wrong with it) is kept
    aside as `<name>.<aside>-<time>` (a failed rebuild loses nothing); a landed month that cannot be
    used (not one of `months`) is named and left out."""
    warehouse = config.warehouse_path
    tables = landed_tables(DBT_PROJECT_DIR)
    usable = dict(months)
    for landed, landed_dir in landed_months(config).items():
        if landed in usable:
            continue
        try:
            check_landed(landed_dir, tables)
        except LandedMonthError as error:
            log.warning("%s %s left out of the rebuilt warehouse: %s", config.cluster, landed, error)
            continue
        usable[landed] = landed_dir
    if not usable:  # before the warehouse is moved: nothing lost
        raise WarehouseBuildError(
            f"warehouse {warehouse} {problem}, and no landed month can rebuild it: build the months again "
            "(reliability-report backfill --from YYYY-MM --to YYYY-MM)"
        )
    if problem != "missing":
        kept = warehouse.with_name(f"{warehouse.name}.{aside}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
        warehouse.rename(kept)
        wal = warehouse.with_name(warehouse.name + ".wal")
        if wal.exists():
            wal.rename(kept.with_name(kept.name + ".wal"))
        log.warning(
            "warehouse %s %s: kept aside as %s; rebuilding it from the %d landed months",
            warehouse,
            problem,
            kept.name,
            len(usable),
        )
    elif len(usable) > len(months):
        log.warning("warehouse %s is missing: rebuilding it from the %d landed months", warehouse, len(usable))
    return _build(config, usable)


def dbt_command(config: ClusterConfig, months: Mapping[Month, Path], *command: str, study_from: Month | None = None):
    """A dbt command (e.g. "build") on the cluster's warehouse for `months` (each month -> its
    landed directory; with `study_from`, for the study of the months from it to the last of
    `months`); returns dbt's result, raising only when dbt could not run at all."""
    from dbt.cli.main import dbtRunner

    last = max(months)
    parameters = run_parameters(config, (study_from, last) if study_from else None)
    month_rows = [run_month(month, landed_dir) for month, landed_dir in sorted(months.items())]
    work_dir = dbt_work_dir(config.warehouse_path, DBT_PROJECT_DIR)
    tables = landed_tables(DBT_PROJECT_DIR)
    for source, schema in input_schemas(config).items():
        os.environ[f"DBT_{source.upper()}_SCHEMA"] = schema
    if config.warehouse.engine == "spark":
        write_spark_run_inputs(
            config,
            PARAMETER_COLUMNS | MONTH_COLUMNS,
            parameters,
            month_rows,
            config.analysis.trailing_months,
            months,
            tables,
        )
        profiles_dir = work_dir / "profile"
        write_spark_profile(config, profiles_dir)
    else:
        config.warehouse_path.parent.mkdir(parents=True, exist_ok=True)
        # before dbt opens the file: dbt-duckdb holds its lock until the end of the invocation
        write_run_inputs(config.warehouse_path, parameters, month_rows, config.analysis.trailing_months, months, tables)
        os.environ["DBT_DUCKDB_PATH"] = str(config.warehouse_path)
        os.environ["DBT_DUCKDB_MEMORY_LIMIT"] = config.warehouse.duckdb_settings(config.warehouse_path)["memory_limit"]
        profiles_dir = DBT_PROJECT_DIR
    args = [
        *command,
        "--project-dir",
        str(DBT_PROJECT_DIR),
        "--profiles-dir",
        str(profiles_dir),
        "--target-path",
        str(work_dir / "target"),
        "--log-path",
        str(work_dir / "logs"),
        "--quiet",
        # dbt.log keeps warnings and errors only: its debug lines cost ~8% of a small month's build
        "--log-level-file",
        "warn",
        # no manifest.json, run_results.json or graph.gpickle (a few MB, written twice per build):
        # nothing reads them; the saved parse (partial_parse.msgpack) is written all the same
        "--no-write-json",
    ]
    try:
        result = dbtRunner().invoke(args)
    finally:
        if config.warehouse.engine != "spark":
            release_duckdb()
    if result.exception is not None:
        raise WarehouseBuildError(f"dbt could not run: {result.exception}")
    return result


def release_duckdb() -> None:
    """Close dbt-duckdb's connections: it keeps the DuckDB file open and locked for the life of the process."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    if DuckDBConnectionManager._ENV is not None:
        DuckDBConnectionManager._ENV.close()
        DuckDBConnectionManager._ENV = None
    DuckDBConnectionManager.close_all_connections()
