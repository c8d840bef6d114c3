"""What every job-record reader (sacct text, sacct JSON) ends with, in DuckDB.

A reader leaves temp table `attempts_staged` (tables.STAGED_FIELDS, one row per attempt, times naive in
the reader's clock) and hands over here: times go to UTC (DST doubts counted), host lists are
sized and expanded, records that cannot be right are quarantined (sql/job_records__problems.sql: the
host list, NNodes against it, times against the clock's window, the times a state needs and their
order) and duplicate records (overlapping daily dumps concatenated) are landed once, by one rule
(sql/job_records__duplicates.sql); duplicates that disagree on the attempt's outcome or times are
counted as conflicts, with both lines. The result is temp table `attempts` whose nodes are
`host_list_members`, reached through `host_lists` by `node_list`.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Protocol

import duckdb
import pyarrow as pa

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.hostlists import expand_host_lists
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits
from flows.ingest.sources.node_names import NODE_NAME
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sql import create_temp_table, run_sql

TIME_COLUMNS = ("submit_at", "eligible_at", "start_at", "end_at")
# A text reader's staged times may carry an offset (`2026-11-22T03:21:55+05:00`): the wall time as
# written in the time's column, its offset east of UTC in seconds here (NULL: a local time)
TIME_OFFSETS = tuple(f"{column}_offset" for column in TIME_COLUMNS)
LIST_REASONS = pa.schema([("node_list", pa.string()), ("reason", pa.string())])
CONFLICT_SAMPLE = 10  # conflicts described (all are counted)


class AttemptStats(Protocol):
    attempts: int
    duplicate_records: int
    conflicting_attempts: int
    conflicts: list[str]
    node_counts_from_node_list: int


def _count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    return run_sql(con, "sql__count_rows", table=table).fetchall()[0][0]


def _bad_records(
    con: duckdb.DuckDBPyConnection, utc: dict[str, str], clock: LocalClock, skew: timedelta, limits: InputLimits
) -> list[tuple]:
    """(line, field, value, reason) of the staged records to quarantine (temp table attempt_problems,
    sql/job_records__problems.sql), after the host lists are expanded and checked (`expand_host_lists`).
    `utc`: each time column in UTC; `skew`: how far DST may put two local times out of order."""
    refused = expand_host_lists(con, "attempts_staged", limits)
    create_temp_table(
        con,
        "refused_host_lists_why",
        pa.table({"node_list": list(refused), "reason": list(refused.values())}, schema=LIST_REASONS),
    )
    checks = clock.sql_window() | {"node_name": NODE_NAME, "skew_seconds": int(skew.total_seconds())}
    run_sql(con, "job_records__problems", checks, utc=utc)
    return run_sql(con, "job_records__problem_rows").fetchall()


def _count_conflicts(con: duckdb.DuckDBPyConnection, path: Path, end_utc: str, stats: AttemptStats) -> None:
    """Count the attempts whose ended records disagree and describe the first CONFLICT_SAMPLE: the
    file, the kept line and the first other line that differs from it, the fields that differ (in
    line order) and why that line was kept."""
    run_sql(con, "job_records__ended_records", end_utc=end_utc)
    run_sql(con, "job_records__conflicts")
    stats.conflicting_attempts = _count(con, "attempt_conflicts")
    pairs = run_sql(con, "job_records__conflict_pairs", {"sample": CONFLICT_SAMPLE}).fetchall()
    stats.conflicts = []
    for job_id, kept_line, other_line, later_end, fields in pairs:
        first_line, second_line = sorted((kept_line, other_line))
        in_line_order = [(name, a, b) if kept_line == first_line else (name, b, a) for name, a, b in fields]
        differences = ", ".join(f"{name} {a} / {b}" for name, a, b in in_line_order if a != b)
        job = job_id if job_id.isprintable() else repr(job_id)  # a JobID is text from the logs: no escapes raw
        stats.conflicts.append(
            f"{path}: lines {first_line} and {second_line} record one attempt of job {job} differently: "
            f"{differences}; line {kept_line} kept ({'the later End' if later_end else 'the later line'})"
        )


def finish_attempts(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    clock: LocalClock,
    quarantine: Quarantine,
    stats: AttemptStats,
    problems: list[InputFormatError],
    local_times: bool = True,
    limits: InputLimits = DEFAULT_LIMITS,
    offsets: bool = False,
) -> duckdb.DuckDBPyRelation:
    """Temp table `attempts` from `attempts_staged`; `local_times` False when the times are UTC
    already (the clock then only gives the window of valid times); `limits` bound the host lists;
    `offsets` when the staged table has TIME_OFFSETS: a time with an offset is that instant, never
    read in the clock's zone (nor counted as a DST doubt).

    `problems` are the rows the reader could not type; with the ones found here they go to the
    quarantine in line order, so a strict quarantine stops at the first bad line of the file.
    """
    utc = {column: column for column in TIME_COLUMNS}
    skew = timedelta(0)
    if local_times:
        window = {"earliest": clock.earliest, "latest": clock.latest}
        values = [v for v in run_sql(con, "job_records__time_bounds", window).fetchall()[0] if v is not None]
        if values:
            changes = clock.offset_changes(min(values), max(values))
            skew = clock.max_offset_change(changes)
            utc = {column: clock.sql_to_utc(column, changes) for column in TIME_COLUMNS}
            local = {column: column for column in TIME_COLUMNS}
            if offsets:
                local = {column: f"(case when {column}_offset is null then {column} end)" for column in TIME_COLUMNS}
            doubtful = [LocalClock.sql_doubtful_counts(local[column], changes) for column in TIME_COLUMNS]
            counts = {
                "ambiguous": " + ".join(a for a, _ in doubtful),
                "nonexistent": " + ".join(n for _, n in doubtful),
            }
            clock.count(*run_sql(con, "clock__doubtful_counts", table="attempts_staged", **counts).fetchall()[0])

    if offsets:  # a time with an offset is its instant, whatever the clock
        utc = {
            column: f"(case when {column}_offset is null then {utc[column]} else {column} - to_seconds({column}_offset) end)"
            for column in TIME_COLUMNS
        }
    bad = _bad_records(con, utc, clock, skew, limits)
    for error in sorted(problems + [InputFormatError(path, *row) for row in bad], key=lambda e: e.line):
        quarantine.reject(error)
    run_sql(con, "job_records__node_count_repairs")
    stats.node_counts_from_node_list = _count(con, "node_count_repairs")
    run_sql(con, "job_records__duplicates", end_utc=utc["end_at"])
    duplicates = _count(con, "attempt_duplicates") > 0
    if duplicates:
        _count_conflicts(con, path, utc["end_at"], stats)
    repairs = stats.node_counts_from_node_list > 0
    run_sql(con, "job_records__attempts", utc=utc, duplicates=duplicates, repairs=repairs)
    stats.duplicate_records = run_sql(con, "job_records__duplicate_records").fetchall()[0][0]
    stats.attempts = _count(con, "attempts_staged") - len(bad) - stats.duplicate_records
    return con.table("attempts")
