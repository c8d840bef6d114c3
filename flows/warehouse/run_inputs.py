"""What a dbt build reads as data rather than as dbt vars (flows/warehouse/build.py): the run's
parameters (run.parameters), its months and their observed windows (run.months), the trailing
windows' lengths (run.trailing_windows) and a view over every landed month's Parquet per landed
table (landed.*). Kept as data, the parsed project is the same for every build, and dbt re-uses it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import duckdb

from flows.config.cluster import ClusterConfig
from flows.core.months import Month
from flows.ingest.manifest import read_manifest
from flows.warehouse.engines import duckdb_landed_view

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
