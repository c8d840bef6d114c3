"""What every job-record reader (sacct text, sacct JSON) ends with, in DuckDB.

A reader leaves temp table `attempts_staged` (registry.STAGED_FIELDS, one row per attempt, times naive in
the reader's clock) and hands over here: times go to UTC (DST doubts counted), host lists are
expanded, records dated in the future are quarantined and duplicate records (overlapping daily
dumps concatenated) are landed once, the most complete kept. The result is temp table `attempts`
whose nodes are `host_list_members`, reached through `host_lists` by `node_list`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import duckdb
import pyarrow as pa

from flows.sources.clock import LocalClock
from flows.sources.errors import InputFormatError
from flows.sources.hostlists import expand_host_lists
from flows.sources.quarantine import Quarantine
from flows.sources.registry import STAGED_FIELDS, column_names
from flows.sources.sql import create_temp_table

TIME_COLUMNS = ("submit_at", "eligible_at", "start_at", "end_at")
LIST_REASONS = pa.schema([("node_list", pa.string()), ("reason", pa.string())])
FUTURE_TOLERANCE = timedelta(days=1)  # clock skew between hosts; later than this is a bad record


class AttemptStats(Protocol):
    attempts: int
    duplicate_records: int


def _count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    return con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]


def _bad_records(con: duckdb.DuckDBPyConnection, utc: dict[str, str]) -> list[tuple]:
    """(line, field, value, reason) of the staged records to quarantine: an unreadable host list
    (the host lists are expanded here), else a time in the future (`utc`: each time column in UTC)."""
    unreadable = expand_host_lists(con, "attempts_staged")
    bad = []
    if unreadable:
        create_temp_table(
            con,
            "unreadable_host_lists",
            pa.table({"node_list": list(unreadable), "reason": list(unreadable.values())}, schema=LIST_REASONS),
        )
        bad += con.execute(
            """SELECT s.source_line, 'NodeList', s.node_list, bad.reason
               FROM attempts_staged s JOIN unreadable_host_lists bad USING (node_list)"""
        ).fetchall()
    latest = (datetime.now(UTC) + FUTURE_TOLERANCE).replace(tzinfo=None).isoformat()
    future = " ".join(
        f"WHEN {utc[column]} > TIMESTAMP '{latest}' THEN {{'field': '{name}', 'value': CAST({utc[column]} AS VARCHAR), "
        "'reason': 'a time in the future'}"
        for column, name in (("end_at", "End"), ("start_at", "Start"), ("submit_at", "Submit"))
    )
    bad_lines = {row[0] for row in bad}
    return bad + [
        row
        for row in con.execute(
            f"""SELECT source_line, problem.field, problem.value, problem.reason
                FROM (SELECT source_line, CASE {future} END AS problem FROM attempts_staged)
                WHERE problem IS NOT NULL"""
        ).fetchall()
        if row[0] not in bad_lines
    ]


def finish_attempts(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    clock: LocalClock | None,
    quarantine: Quarantine,
    stats: AttemptStats,
    problems: list[InputFormatError],
) -> duckdb.DuckDBPyRelation:
    """Temp table `attempts` from `attempts_staged`; `clock` None when the times are UTC already.

    `problems` are the rows the reader could not type; with the ones found here they go to the
    quarantine in line order, so a strict quarantine stops at the first bad line of the file.
    """
    utc = {column: column for column in TIME_COLUMNS}
    if clock is not None:
        bounds = ", ".join(f"min({c}), max({c})" for c in TIME_COLUMNS)
        values = [v for v in con.execute(f"SELECT {bounds} FROM attempts_staged").fetchall()[0] if v is not None]
        if values:
            changes = clock.offset_changes(min(values), max(values))
            utc = {column: clock.sql_to_utc(column, changes) for column in TIME_COLUMNS}
            doubtful = [LocalClock.sql_doubtful_counts(column, changes) for column in TIME_COLUMNS]
            ambiguous = " + ".join(a for a, _ in doubtful)
            nonexistent = " + ".join(n for _, n in doubtful)
            clock.count(*con.execute(f"SELECT {ambiguous}, {nonexistent} FROM attempts_staged").fetchall()[0])

    bad = _bad_records(con, utc)
    for error in sorted(problems + [InputFormatError(path, *row) for row in bad], key=lambda e: e.line):
        quarantine.reject(error)
    quarantined_lines = ", ".join(str(row[0]) for row in bad)
    kept = f"source_line NOT IN ({quarantined_lines})" if bad else "true"
    # The same attempt twice: keep the record that has an end, then the later one in the file.
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE attempt_duplicates AS
        SELECT job_id_raw, submit_at, count(*) - 1 AS dropped,
               max(CAST(end_at IS NOT NULL AS BIGINT) * 1099511627776 + source_line) % 1099511627776 AS kept_line
        FROM attempts_staged WHERE {kept}
        GROUP BY ALL HAVING count(*) > 1
        """
    )
    if _count(con, "attempt_duplicates"):
        kept += """ AND NOT EXISTS (SELECT 1 FROM attempt_duplicates d WHERE d.job_id_raw = s.job_id_raw
                                    AND d.submit_at = s.submit_at AND d.kept_line <> s.source_line)"""
    times = ", ".join(f"{utc[c]} AS {c}" for c in TIME_COLUMNS)
    others = ", ".join(f"s.{c}" for c in column_names(STAGED_FIELDS) if c not in TIME_COLUMNS)
    # A view: the landing writes it to Parquet once; a table would copy millions of rows first.
    con.execute(
        f"""
        CREATE OR REPLACE TEMP VIEW attempts AS
        SELECT {others}, {times}
        FROM attempts_staged s
        WHERE {kept}
        """
    )
    stats.duplicate_records = con.execute("SELECT coalesce(sum(dropped), 0) FROM attempt_duplicates").fetchall()[0][0]
    stats.attempts = _count(con, "attempts_staged") - len(bad) - stats.duplicate_records
    return con.table("attempts")
