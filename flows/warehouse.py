"""Build the month in the DuckDB warehouse with dbt (in-process), then release dbt-duckdb's file lock."""

from __future__ import annotations

import json
import os
from pathlib import Path

from flows import DBT_PROJECT_DIR
from flows.config import ClusterConfig
from flows.months import Month


class WarehouseBuildError(RuntimeError):
    pass


def dbt_vars(config: ClusterConfig, month: Month, landed_dir: Path) -> dict:
    a = config.analysis
    return {
        "cluster": config.cluster,
        "month": str(month),
        "month_start": month.start.strftime("%Y-%m-%d %H:%M:%S"),
        "month_end": month.end.strftime("%Y-%m-%d %H:%M:%S"),
        "landed_dir": str(landed_dir),
        "gpus_per_node": a.gpus_per_node,
        "attr_before_minutes": a.attr_before_minutes,
        "attr_after_minutes": a.attr_after_minutes,
        "run_link_gap_minutes": a.run_link_gap_minutes,
        "paper_min_gpus": a.paper_min_gpus,
    }


def build_month(config: ClusterConfig, month: Month, landed_dir: Path) -> dict[str, int]:
    """`dbt build` for one month; returns counts of nodes by status. Raises naming every failed node.

    The models' unit tests check the SQL, not the month's data: they run in the test suite
    (`dbt_command(..., "test", "--select", "test_type:unit")`), not in every monthly build.
    """
    result = dbt_command(config, month, landed_dir, "build", "--exclude-resource-type", "unit_test")
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


def dbt_command(config: ClusterConfig, month: Month, landed_dir: Path, *command: str):
    """A dbt command (e.g. "build") on the cluster's warehouse with the month's vars; returns dbt's
    result, raising only when dbt could not run at all."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    from dbt.cli.main import dbtRunner

    config.warehouse_path.parent.mkdir(parents=True, exist_ok=True)
    os.environ["DBT_DUCKDB_PATH"] = str(config.warehouse_path)
    args = [
        *command,
        "--project-dir",
        str(DBT_PROJECT_DIR),
        "--profiles-dir",
        str(DBT_PROJECT_DIR),
        "--target-path",
        str(config.warehouse_path.parent / "dbt_target"),
        "--log-path",
        str(config.warehouse_path.parent / "dbt_logs"),
        "--quiet",
        "--vars",
        json.dumps(dbt_vars(config, month, landed_dir)),
    ]
    try:
        result = dbtRunner().invoke(args)
    finally:
        # dbt-duckdb keeps the DuckDB file open and locked for the life of the process.
        if DuckDBConnectionManager._ENV is not None:
            DuckDBConnectionManager._ENV.close()
            DuckDBConnectionManager._ENV = None
        DuckDBConnectionManager.close_all_connections()
    if result.exception is not None:
        raise WarehouseBuildError(f"dbt could not run: {result.exception}")
    return result
