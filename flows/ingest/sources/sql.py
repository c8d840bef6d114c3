"""Small DuckDB helpers of the readers that work in SQL."""

from __future__ import annotations

import duckdb
import pyarrow as pa


def sql_quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def create_temp_table(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> None:
    """Temp table `name` in DuckDB holding an Arrow table built in Python."""
    con.register(f"{name}_arrow", table)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_arrow")
    con.unregister(f"{name}_arrow")
