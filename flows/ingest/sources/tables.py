"""The landed tables: each column once, as a typed `Field` (`TABLES`), their Arrow schemas, and a
reader's output as rows of them. The landing writes these columns, the readers stage them and the
landing's quality suites (flows/quality/suites.py) check them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import pyarrow as pa

from flows.ingest.sources.records import HealthCheck, NodeEvent, XidEvent

FieldType = Literal["string", "int64", "timestamp"]  # timestamp: naive UTC, microseconds


@dataclass(frozen=True)
class Field:
    """A column of a landed table, defined once: the landing writes it with this type, the readers
    stage it, and the landing's quality suites check its presence, type and (if `required`) values."""

    name: str
    type: FieldType
    required: bool = False  # every landed row has a value
    # landed only when a row of the month gives it (a month without one lacks the column, and its
    # view reads it as null: the landed Parquet of every other month stays as it was)
    optional: bool = False


def column_names(fields: tuple[Field, ...]) -> tuple[str, ...]:
    return tuple(field.name for field in fields)


# The landed tables: each field once, with its type. `attempts` is written by DuckDB from the
# job-record readers' `attempts` (its nodes land normalised, as host_lists / host_list_members).
TABLES: dict[str, tuple[Field, ...]] = {
    "attempts": (
        Field("cluster", "string"),
        Field("job_id", "string"),
        Field("job_id_raw", "string", required=True),
        Field("job_name", "string"),
        Field("user_name", "string"),
        Field("account", "string"),
        Field("partition", "string"),
        Field("qos", "string"),
        Field("state", "string"),
        Field("cancelled_by_uid", "int64"),
        Field("exit_code", "int64"),
        Field("exit_signal", "int64"),
        Field("submit_at", "timestamp", required=True),
        Field("eligible_at", "timestamp"),
        Field("start_at", "timestamp"),
        Field("end_at", "timestamp"),
        Field("elapsed_seconds", "int64"),
        Field("n_nodes", "int64"),
        Field("node_list", "string"),
        Field("gpus", "int64"),
        Field("req_gpus", "int64"),
        Field("reason", "string"),
        Field("failed_node", "string"),  # sacct FailedNode (23.02+): the node whose failure ended the job
        Field("restarts", "int64"),  # sacct Restarts (24.11+): times the job was requeued
        Field("sluid", "string"),  # sacct SLUID (25.11+): unique per run
        Field("admin_comment", "string"),  # sacct AdminComment: where a site marks who requeued a job
        Field("source_file", "string"),
        Field("source_line", "int64"),
    ),
    "node_events": (
        Field("cluster", "string"),
        Field("node", "string", required=True),
        Field("started_at", "timestamp", required=True),
        Field("ended_at", "timestamp"),
        Field("state", "string"),
        Field("reason", "string"),
        Field("user_name", "string"),
        Field("source_file", "string"),
        Field("source_line", "int64"),
    ),
    "health_checks": (
        Field("cluster", "string"),
        Field("node", "string", required=True),
        Field("ts", "timestamp", required=True),
        Field("source", "string"),
        Field("check_name", "string"),
        Field("status", "string"),
        Field("message", "string"),
        Field("source_file", "string"),
        Field("source_line", "int64"),
        # the event happened in (ts - this, ts]: a scraped series' step (dcgm_series); null: at ts, a
        # log line's own time. Last, so that a month's columns are every other month's and this one.
        Field("ts_uncertainty_seconds", "int64", optional=True),
    ),
    "xid_events": (
        Field("cluster", "string"),
        Field("node", "string", required=True),
        Field("ts", "timestamp", required=True),
        Field("xid", "int64"),
        Field("pci", "string"),
        Field("message", "string"),
        Field("source_file", "string"),
        Field("source_line", "int64"),
        Field("ts_uncertainty_seconds", "int64", optional=True),  # as health_checks'
    ),
}
# What a job-record reader stages (flows.ingest.sources.job_records): the attempt less what the landing adds.
STAGED_FIELDS = tuple(field for field in TABLES["attempts"] if field.name not in ("cluster", "source_file"))

ARROW_TYPES: dict[FieldType, pa.DataType] = {
    "string": pa.string(),
    "int64": pa.int64(),
    "timestamp": pa.timestamp("us"),
}


SQL_TYPES: dict[FieldType, str] = {"string": "VARCHAR", "int64": "BIGINT", "timestamp": "TIMESTAMP"}  # DuckDB's


def arrow_schema(fields: Iterable[Field]) -> pa.Schema:
    return pa.schema([(field.name, ARROW_TYPES[field.type]) for field in fields])


SCHEMAS = {name: arrow_schema(fields) for name, fields in TABLES.items()}


def naive_utc(ts: datetime | None) -> datetime | None:
    return None if ts is None else ts.astimezone(UTC).replace(tzinfo=None)


def _check_row(cluster: str, path: Path, check: HealthCheck) -> dict:
    return {
        "cluster": cluster,
        "node": check.node,
        "ts": naive_utc(check.ts),
        "ts_uncertainty_seconds": check.uncertainty_seconds or None,
        "check_name": check.check,
        "status": check.status,
        "message": check.message,
        "source_file": check.source_file,
        "source_line": check.source_line,
    }


def _event_row(cluster: str, path: Path, event: NodeEvent) -> dict:
    return {
        "cluster": cluster,
        "node": event.node,
        "started_at": naive_utc(event.started_at),
        "ended_at": naive_utc(event.ended_at),
        "state": event.state,
        "reason": event.reason,
        "user_name": event.user,
        "source_file": path.name,
        "source_line": event.source_line,
    }


def _xid_row(cluster: str, path: Path, xid: XidEvent) -> dict:
    return {
        "cluster": cluster,
        "node": xid.node,
        "ts": naive_utc(xid.ts),
        "ts_uncertainty_seconds": xid.uncertainty_seconds or None,
        "xid": xid.xid,
        "pci": xid.pci,
        "message": xid.message,
        "source_file": xid.source_file,
        "source_line": xid.source_line,
    }


# A Python reader's row objects as rows of its table, and the table of each class of row object
ROWS = {"health_checks": _check_row, "node_events": _event_row, "xid_events": _xid_row}
ROW_TABLES: dict[type, str] = {HealthCheck: "health_checks", NodeEvent: "node_events", XidEvent: "xid_events"}


def landed_rows(table: str, cluster: str, source: str, path: Path, found: Iterable) -> Iterable[dict]:
    """The rows of a reader that yields row objects, as dicts of `table`'s columns; a table with a
    `source` column gets `source`, the landed source name its kind declares (not the reader's)."""
    declared = {"source": source} if "source" in SCHEMAS[table].names else {}
    return ({**ROWS[table](cluster, path, record), **declared} for record in found)


def landed_rows_by_table(
    tables: tuple[str, ...], cluster: str, source: str, path: Path, found: Iterable
) -> dict[str, Iterable[dict]]:
    """`landed_rows` of a reader whose row objects go to several tables (`tables`, the kind's), each
    row to its class's table (ROW_TABLES)."""
    if len(tables) == 1:
        return {tables[0]: landed_rows(tables[0], cluster, source, path, found)}
    records: dict[str, list] = {table: [] for table in tables}
    for record in found:
        records[ROW_TABLES[type(record)]].append(record)
    return {table: landed_rows(table, cluster, source, path, rows) for table, rows in records.items()}


def landed_table(table: str, cluster: str, source: str, found: pa.Table) -> pa.Table:
    """The Arrow table of a reader that works in DuckDB (the table's columns less cluster and
    source), as landed: with `cluster`, an optional column it does not give as null and, in a table
    with that column, the declared `source`."""
    schema = SCHEMAS[table]
    found = found.append_column("cluster", pa.array([cluster] * found.num_rows, pa.string()))
    for field in TABLES[table]:
        if field.optional and field.name not in found.column_names:
            found = found.append_column(field.name, pa.nulls(found.num_rows, ARROW_TYPES[field.type]))
    if "source" in schema.names:
        found = found.append_column("source", pa.array([source] * found.num_rows, pa.string()))
    return found.select(schema.names).cast(schema)


def without_unused_columns(table: str, rows: pa.Table) -> pa.Table:
    """`rows` of `table` less its optional columns that no row gives (Field.optional)."""
    unused = [f.name for f in TABLES[table] if f.optional and rows.column(f.name).null_count == rows.num_rows]
    return rows.drop_columns(unused)
