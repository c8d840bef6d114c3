"""Build months in the DuckDB warehouse with dbt (in-process), then release dbt-duckdb's file lock.

A dbt build takes any number of months (build_months): every model computes each month of
run.months from that month's landing, and the incremental marts replace those months' rows. Many
months are built in batches that fit `[warehouse] memory_limit` (flows/warehouse/batches.py). The
warehouse is a cache of the landed months on disk: one that is missing, cannot be opened (corrupt)
or was built by another version of the tool (flows/warehouse/schema_version.py) is rebuilt from
them, every landed month, the old file kept aside.

The run's parameters, its months and their landed Parquet files reach dbt as data in the warehouse
(flows/warehouse/run_inputs.py), not as dbt vars, so that dbt re-uses its parse of the project.
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
from flows.config.cluster import ClusterConfig
from flows.core.escape import escaped_logger
from flows.core.months import MONTH_RE, Month
from flows.ingest.manifest import LandedMonthError, read_manifest
from flows.warehouse import schema_version
from flows.warehouse.batches import build_batches
from flows.warehouse.engines import (
    input_schemas,
    spark_missing,
    write_spark_profile,
    write_spark_run_inputs,
)
from flows.warehouse.run_inputs import (
    MONTH_COLUMNS,
    PARAMETER_COLUMNS,
    run_month,
    run_parameters,
    write_run_inputs,
)

# What a warehouse this version of the tool built holds unchanged since: the seeds, made from the
# project's files alone (its schema version digests them) and checked by their tests when loaded. A
# build of months on it keeps them (a dbt node each, their CSV read, and their tests'); a rebuild's
# first batch and Spark's warehouse, which records no version, load them.
SEED_TESTS = "tag:seeds"  # (not path:seeds: it selects the seeds, and with them the tests of every model reading one)

log = escaped_logger(__name__)


class WarehouseBuildError(RuntimeError):
    pass


class WarehouseBusyError(RuntimeError):
    """Another process (not a run of this tool, which would hold the run lock) has the warehouse open."""


def landed_tables(project_dir: Path) -> list[str]:
    """The tables of dbt's `landed` source, one Parquet file each in a landed month."""
    sources = yaml.safe_load((project_dir / "models" / "staging" / "_slurm__sources.yml").read_text())["sources"]
    (landed,) = (source for source in sources if source["name"] == "landed")
    return [table["name"] for table in landed["tables"]]


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
    records that this version built it (schema_version); a build on a warehouse this version built
    keeps the seeds it holds (SEED_TESTS). The models' unit tests check the SQL, not
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
        statuses = _build(config, months, load_seeds=False)
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


def _build(config: ClusterConfig, months: Mapping[Month, Path], load_seeds: bool = True) -> dict[str, int]:
    """dbt builds of `months` in batches that fit the memory limit (flows/warehouse/batches.py), the
    seeds in the first (with `load_seeds`: SEED_TESTS), the periods' marts in the last; the counts
    of all of them."""
    batches = (
        build_batches(months, int(config.warehouse.memory_limit)) if config.warehouse.engine == "duckdb" else [months]
    )
    statuses: dict[str, int] = {}
    for i, batch in enumerate(batches, 1):
        seeds = load_seeds and i == 1
        excluded = [*([] if seeds else [SEED_TESTS]), *(["tag:periods"] if i < len(batches) else [])]
        result = dbt_command(
            config,
            batch,
            "build",
            "--exclude-resource-type",
            "unit_test",
            *([] if seeds else ["seed"]),
            *(["--exclude", *excluded] if excluded else []),
        )
        for status, count in _statuses(result, config).items():
            statuses[status] = statuses.get(status, 0) + count
    return statuses


def build_study(config: ClusterConfig, first: Month, last: Month, landed_dir: Path) -> dict[str, int]:
    """`dbt build` of the periods (dim_periods and the figures' marts, tag `periods`) with the
    study's range `first`..`last` among them: a build but for the months' own rows, which are
    built. `landed_dir` is `last`'s landed month (the build's run.months). Returns counts of nodes
    by status."""
    result = dbt_command(
        config,
        {last: landed_dir},
        "build",
        "--select",
        "tag:periods",
        "--exclude-resource-type",
        "unit_test",
        study_from=first,
    )
    return _statuses(result, config)


def _statuses(result, config: ClusterConfig) -> dict[str, int]:
    """Counts of a dbt build's nodes by status; raises WarehouseBuildError naming every failed node,
    or, when DuckDB ran out of memory, in one line what to do."""
    statuses: dict[str, int] = {}
    failed = []
    for node_result in result.result.results:
        status = str(node_result.status)
        statuses[status] = statuses.get(status, 0) + 1
        if status not in ("success", "pass"):
            if "Out of Memory Error" in str(node_result.message):
                raise WarehouseBuildError(out_of_memory(config, node_result.node.name))
            failed.append(f"{node_result.node.unique_id} [{status}]: {node_result.message}")
    if not result.success:
        raise WarehouseBuildError("dbt build failed:\n  " + "\n  ".join(failed))
    return statuses


def out_of_memory(config: ClusterConfig, model: str) -> str:
    """What to do when DuckDB ran out of memory building `model`, in one line."""
    limit = config.warehouse.memory_limit.human_readable(separator=" ")
    return (
        f"dbt ran out of memory building {model} within [warehouse] memory_limit = {limit}: raise "
        f"memory_limit in {config.config_path}, or free memory on this machine, and run again"
    )


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
