"""The landed tables in Arrow: their schemas (from `registry.TABLES`) and a reader's output as rows of them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from flows.ingest.sources.records import HealthCheck, NodeEvent, XidEvent
from flows.ingest.sources.registry import TABLES, Field, FieldType

ARROW_TYPES: dict[FieldType, pa.DataType] = {
    "string": pa.string(),
    "int64": pa.int64(),
    "timestamp": pa.timestamp("us"),
}


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
        "source": check.source,
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
        "xid": xid.xid,
        "pci": xid.pci,
        "message": xid.message,
        "source_file": xid.source_file,
        "source_line": xid.source_line,
    }


# A Python reader's row objects as rows of its table
ROWS = {"health_checks": _check_row, "node_events": _event_row, "xid_events": _xid_row}


def landed_rows(table: str, cluster: str, path: Path, found: Iterable) -> Iterable[dict]:
    """The rows of a reader that yields row objects, as dicts of `table`'s columns."""
    return (ROWS[table](cluster, path, record) for record in found)


def landed_table(table: str, cluster: str, found: pa.Table) -> pa.Table:
    """The Arrow table of a reader that works in DuckDB (the table's columns less cluster), as landed."""
    schema = SCHEMAS[table]
    column = pa.array([cluster] * found.num_rows, pa.string())
    return found.append_column("cluster", column).select(schema.names).cast(schema)
