"""The readers' DuckDB statements, each in a file of sql/ (`<module>__<what>.sql`), run by name.

The files are Jinja templates linted by sqlfluff (`make lint`, sql/.sqlfluff). A value goes in as a
DuckDB named parameter, written `{{ param("name") }}` (rendered `$name`: sqlfluff cannot parse `$name`,
so its lint renders a string literal instead). Jinja itself fills in only what a parameter cannot be:
a table's name, a list of columns, or a SQL expression built in Python (a clock's DST rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import duckdb
import jinja2
import pyarrow as pa

SQL_DIR = Path(__file__).with_name("sql")

_STATEMENTS = jinja2.Environment(
    loader=jinja2.FileSystemLoader(SQL_DIR),
    undefined=jinja2.StrictUndefined,  # a template variable left out is an error, not an empty string
    autoescape=False,
    keep_trailing_newline=True,
)
_STATEMENTS.globals["param"] = lambda name: f"${name}"


def _render(name: str, **template: object) -> str:
    """The text of statement `name` (sql/<name>.sql) with its template variables filled in."""
    return _STATEMENTS.get_template(f"{name}.sql").render(template)


def run_sql(
    con: duckdb.DuckDBPyConnection, name: str, params: Mapping[str, object] | None = None, **template: object
) -> duckdb.DuckDBPyConnection:
    """Run statement `name` on `con` with the DuckDB parameters `params` (the values) and the
    template variables `template` (names and expressions); fetch its rows from the result."""
    return con.execute(_render(name, **template), params)


def sql_relation(
    con: duckdb.DuckDBPyConnection, name: str, params: Mapping[str, object] | None = None, **template: object
) -> duckdb.DuckDBPyRelation:
    """Query `name` (a SELECT) as a relation, as `run_sql` takes it: for its rows as an Arrow table
    (a DB-API result would copy them once more)."""
    return con.sql(_render(name, **template), params=params)


def sql_quote(text: str) -> str:
    """A SQL string literal (for flows/warehouse/build.py's view definitions: a view cannot take parameters)."""
    return "'" + text.replace("'", "''") + "'"


def create_temp_table(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> None:
    """Temp table `name` in DuckDB holding an Arrow table built in Python."""
    con.register(f"{name}_arrow", table)
    run_sql(con, "sql__create_temp_table", table=name)
    con.unregister(f"{name}_arrow")
