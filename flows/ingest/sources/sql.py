"""The readers' DuckDB statements, each in a file of sql/ (`<module>__<what>.sql`), run by name
(flows/core/sql_files.py says how the files are written)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import duckdb
import pyarrow as pa

from flows.core.sql_files import SqlFiles

SQL_DIR = Path(__file__).with_name("sql")
_STATEMENTS = SqlFiles(SQL_DIR)


def run_sql(
    con: duckdb.DuckDBPyConnection, name: str, params: Mapping[str, object] | None = None, **template: object
) -> duckdb.DuckDBPyConnection:
    """Run the readers' statement `name` (sql/<name>.sql): SqlFiles.run."""
    return _STATEMENTS.run(con, name, params, **template)


def sql_relation(
    con: duckdb.DuckDBPyConnection, name: str, params: Mapping[str, object] | None = None, **template: object
) -> duckdb.DuckDBPyRelation:
    """The readers' query `name` as a relation: SqlFiles.relation."""
    return _STATEMENTS.relation(con, name, params, **template)


def sql_quote(text: str) -> str:
    """A SQL string literal (for flows/warehouse/build.py's view definitions: a view cannot take parameters)."""
    return "'" + text.replace("'", "''") + "'"


def create_temp_table(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> None:
    """Temp table `name` in DuckDB holding an Arrow table built in Python."""
    con.register(f"{name}_arrow", table)
    run_sql(con, "sql__create_temp_table", table=name)
    con.unregister(f"{name}_arrow")
