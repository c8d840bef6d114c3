"""The built warehouse, opened to answer a question about one job or node: read only, checked first.

A warehouse another version of the tool built (flows/warehouse/schema_version.py) is refused with
the command that rebuilds it: its tables may lack a column or mean another thing, and answering
from them could be wrong. So is a missing one, one another process is writing, a Spark warehouse
(explain reads DuckDB's file: a Spark session alone takes longer than the answer may), and a month
asked for that is not built.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from flows.config.cluster import ClusterConfig
from flows.core.errors import UsageError
from flows.core.months import Month
from flows.core.sql_files import SqlFiles
from flows.figures.document import MonthDocument
from flows.figures.measured import NODE_INPUTS  # the rule `node_source` of what a figure needs
from flows.ingest.manifest import LandedMonthError, read_manifest
from flows.ingest.sources.sql import sql_quote
from flows.warehouse import schema_version

NO_NODE_SOURCE = "no health or node source was landed for {month}: nothing could have shown a fault on its nodes"
STATEMENTS = SqlFiles(Path(__file__).with_name("sql"))  # explain's queries, one per file
LANDED_TABLES = ("attempts", "host_lists", "host_list_members", "node_events", "health_checks")  # what explain reads
NO_LANDING = "{month}'s landing is gone ({path} is missing): its records' nodes, exit codes and log lines are unknown"
NO_MANIFEST = "{month}'s landing manifest is missing or damaged ({error}): its sources are unknown"


class WarehouseRefusedError(UsageError):
    """The warehouse cannot answer: missing, another version's, busy, or not DuckDB (exit 2)."""


@dataclass(frozen=True)
class Warehouse:
    """An open, checked warehouse of one cluster, and what its months landed."""

    con: duckdb.DuckDBPyConnection
    config: ClusterConfig
    months: tuple[str, ...]  # the months built, oldest first
    # the months' documents: the one being written (before it is in place), and those read from
    # their metrics.json, once (None: no readable report)
    documents: dict[str, MonthDocument | None] = field(default_factory=dict)
    _sources: dict[str, tuple[list[str], str | None]] = field(default_factory=dict, repr=False)

    def rows(self, statement: str, params: dict | None = None, **template: str) -> list[tuple]:
        """The rows of query `statement` (sql/<statement>.sql)."""
        return STATEMENTS.run(self.con, statement, params or {}, **template).fetchall()

    def records(self, statement: str, params: dict | None = None, **template: str) -> list[dict]:
        """The rows of query `statement` as dicts by column."""
        cursor = STATEMENTS.run(self.con, statement, params or {}, **template)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def node_sources(self, month: str) -> tuple[list[str], str | None]:
        """The health and node inputs landed for `month`, and why the nodes' faults are not
        measured in it (None: they are); its manifest read once."""
        if month not in self._sources:
            self._sources[month] = self._landed_sources(month)
        return self._sources[month]

    def _landed_sources(self, month: str) -> tuple[list[str], str | None]:
        try:
            inputs = read_manifest(self.config.landed_dir(Month.parse(month))).sources
        except LandedMonthError as error:
            return [], NO_MANIFEST.format(month=month, error=str(error).split(": ")[-1])
        landed = sorted(set(inputs) & NODE_INPUTS)
        return landed, None if landed else NO_NODE_SOURCE.format(month=month)

    def landing_gone(self, month: str) -> str | None:
        """Why `month`'s landing (kept for rebuilds: the records' exit codes, host lists and log
        lines) cannot be read, or None when it can."""
        landed = self.config.landed_dir(Month.parse(month))
        missing = [t for t in LANDED_TABLES if not (landed / f"{t}.parquet").is_file()]
        if not missing:
            return None
        return NO_LANDING.format(month=month, path=landed / f"{missing[0]}.parquet")

    def landed(self, month: str, table: str) -> str:
        """SQL reading `month`'s landed <table>.parquet (the warehouse's landed.<table> views hold
        only the months of its latest build); ask landing_gone first."""
        path = self.config.landed_dir(Month.parse(month)).absolute() / f"{table}.parquet"
        return f"read_parquet({sql_quote(str(path))})"

    @functools.cached_property
    def parameters(self) -> dict:
        """The run parameters the warehouse was built with (run.parameters: the config's [analysis])."""
        return self.records("warehouse__parameters")[0]

    def checked_months(self, month: Month | None) -> tuple[str, ...]:
        """The months a question covers: `month` (refused unless built), else every month built."""
        if month is None:
            return self.months
        if str(month) not in self.months:
            raise UsageError(
                f"{month} is not built in {self.config.warehouse_path} ({self.built_span()}); build it: "
                f"reliability-report run --month {month} --config {self.config.config_path}"
            )
        return (str(month),)

    def built_span(self) -> str:
        if not self.months:
            return "no month is built"
        return f"months built: {self.months[0]}" + (f" to {self.months[-1]}" if len(self.months) > 1 else "")


def rebuild_command(config: ClusterConfig, months: list[str]) -> str:
    span = f"--from {months[0]} --to {months[-1]}" if months else "--from YYYY-MM --to YYYY-MM"
    return f"reliability-report backfill {span} --config {config.config_path} --force --email none"


@contextmanager
def opened(config: ClusterConfig, documents: dict[str, MonthDocument] | None = None) -> Iterator[Warehouse]:
    """The cluster's warehouse, read only, once it is known to be this version's; WarehouseRefusedError
    (one line, with the command to run) when it cannot answer. `documents`: months' documents to
    read in place of their metrics.json (the month being written)."""
    path = config.warehouse_path
    if config.warehouse.engine != "duckdb":
        raise WarehouseRefusedError(
            f"{config.config_path}: [warehouse] engine = {config.warehouse.engine!r}: explain and node read a "
            "DuckDB warehouse only"
        )
    if not path.is_file():
        raise WarehouseRefusedError(
            f"no warehouse at {path}: build a month first: reliability-report run --month YYYY-MM --config "
            f"{config.config_path}"
        )
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as error:
        first = str(error).splitlines()[0]
        if "lock" in first.lower():
            raise WarehouseRefusedError(
                f"warehouse {path} is being written by another run; ask again when it ends"
            ) from None
        raise WarehouseRefusedError(f"warehouse {path} cannot be opened ({first})") from None
    try:
        months = _months_built(con)
        _refuse_another_version(con, config, months)
        yield Warehouse(con, config, tuple(months), dict(documents or {}))
    finally:
        con.close()


def _months_built(con: duckdb.DuckDBPyConnection) -> list[str]:
    try:
        return [m for (m,) in STATEMENTS.run(con, "warehouse__months_built").fetchall()]
    except duckdb.CatalogException:
        return []


def _refuse_another_version(con: duckdb.DuckDBPyConnection, config: ClusterConfig, months: list[str]) -> None:
    current = schema_version.schema_version()
    try:
        built, tool = STATEMENTS.run(con, "warehouse__built_by").fetchone()
    except duckdb.CatalogException:
        built, tool = None, None
    if built == current:
        return
    what = f"schema version {built}, tool {tool}" if built else "no schema version recorded"
    raise WarehouseRefusedError(
        f"warehouse {config.warehouse_path} was built by another version of the tool ({what}; this one's is "
        f"{current}): rebuild it first: {rebuild_command(config, months)}"
    )
