"""SQL statements kept in files, one statement per `<module>__<what>.sql`, run by name.

The files are Jinja templates linted by sqlfluff (`make lint`, the directory's .sqlfluff). A value
goes in as a DuckDB named parameter, written `{{ param("name") }}` (rendered `$name`: sqlfluff
cannot parse `$name`, so its lint renders a string literal instead). Jinja itself fills in only
what a parameter cannot be: a table's name or a relation (a Parquet file read), a list of columns,
or a SQL expression built in Python. The readers' statements are flows/ingest/sources/sql/, the
explanations' flows/explain/sql/.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import duckdb
import jinja2


class SqlFiles:
    """The statements of one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(directory),
            undefined=jinja2.StrictUndefined,  # a template variable left out is an error, not an empty string
            autoescape=False,
            keep_trailing_newline=True,
        )
        self._templates.globals["param"] = lambda name: f"${name}"

    def render(self, name: str, **template: object) -> str:
        """The text of statement `name` (<directory>/<name>.sql) with its template variables filled in."""
        return self._templates.get_template(f"{name}.sql").render(template)

    def run(
        self,
        con: duckdb.DuckDBPyConnection,
        name: str,
        params: Mapping[str, object] | None = None,
        **template: object,
    ) -> duckdb.DuckDBPyConnection:
        """Run statement `name` on `con` with the DuckDB parameters `params` (the values) and the
        template variables `template` (names and expressions); fetch its rows from the result."""
        return con.execute(self.render(name, **template), params)

    def relation(
        self,
        con: duckdb.DuckDBPyConnection,
        name: str,
        params: Mapping[str, object] | None = None,
        **template: object,
    ) -> duckdb.DuckDBPyRelation:
        """Query `name` (a SELECT) as a relation, as `run` takes it: for its rows as an Arrow table
        (a DB-API result would copy them once more)."""
        return con.sql(self.render(name, **template), params=params)
