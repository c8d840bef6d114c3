"""What every job-record reader (sacct text, sacct JSON) ends with, in DuckDB.

A reader leaves temp table `attempts_staged` (registry.STAGED_FIELDS, one row per attempt, times naive in
the reader's clock) and hands over here: times go to UTC (DST doubts counted), host lists are
sized and expanded, records that cannot be right are quarantined (`_bad_records`: the host list,
NNodes against it, times against the clock's window, the times a state needs and their order)
and duplicate records (overlapping daily dumps concatenated) are landed once, by one rule
(`KEPT_RECORD`); duplicates that disagree on the attempt's outcome or times are counted as
conflicts, with both lines. The result is temp table `attempts` whose nodes are
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
from flows.ingest.sources.node_names import NODE_NAME
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.registry import STAGED_FIELDS, column_names
from flows.ingest.sources.sql import create_temp_table, sql_quote

TIME_COLUMNS = ("submit_at", "eligible_at", "start_at", "end_at")
SACCT_NAMES = {"submit_at": "Submit", "eligible_at": "Eligible", "start_at": "Start", "end_at": "End"}
LIST_REASONS = pa.schema([("node_list", pa.string()), ("reason", pa.string())])
# The states of an attempt that ran and ended (it has a Start and an End), and the other ended ones
# (an End; a job cancelled or past its deadline while pending never started). Open states (RUNNING,
# PENDING, ...) have no End yet. The outcome of each state is dbt's (fct_attempts).
RAN_STATES = ("COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "REQUEUED")
ENDED_STATES = (*RAN_STATES, "CANCELLED", "DEADLINE", "BOOT_FAIL")
# The array index in a JobID (`12_3`, `12_[4-9]`): array records may share a JobIDRaw and a Submit
ARRAY_INDEX = "CASE WHEN strpos(job_id, '_') > 0 THEN substr(job_id, strpos(job_id, '_')) END"  # as macro attempt_id


# Of the records of one attempt, the one landed (docs/methodology.md "Units"): the later End (a
# record without one, still open at its dump, is the oldest), else the later line. `end_utc`: End in UTC.
KEPT_RECORD = "arg_max(source_line, {'end': coalesce(end_utc, TIMESTAMP '0001-01-01'), 'line': source_line})"
# What two ended records of one attempt must agree on (its outcome and times), as sacct prints them;
# records that differ in any of these are a conflict. An open record superseded by an ended one is not.
CONFLICT_FIELDS = {
    "State": "coalesce(state || coalesce(' by ' || cancelled_by_uid, ''), '')",
    "ExitCode": "coalesce(exit_code || ':' || exit_signal, '')",
    **{n: f"coalesce(strftime({c}, '%Y-%m-%dT%H:%M:%S'), '')" for c, n in SACCT_NAMES.items() if n != "Submit"},
}
# ... the staged columns they are shown from, compared (hashed) in one pass over the duplicates
CONFLICT_COLUMNS = ("state", "cancelled_by_uid", "exit_code", "exit_signal", "eligible_at", "start_at", "end_at")
CONFLICT_SAMPLE = 10  # conflicts described (all are counted)
# NNodes 0 beside a host list (seen in Open XDMoD's sample, tests/data/xdmod): the list's size is the
# count, a repair the reader counts. Over the staged row `s` and its sized list `l` (host_lists).
NODE_COUNT_FROM_LIST = "s.n_nodes = 0 AND l.size > 0"


class AttemptStats(Protocol):
    attempts: int
    duplicate_records: int
    conflicting_attempts: int
    conflicts: list[str]
    node_counts_from_node_list: int


def _count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    return con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]


def _problem(field: str, value: str, reason: str) -> str:
    """A quarantine's {field, value, reason} in SQL (field a name, value and reason expressions)."""
    return f"{{'field': '{field}', 'value': coalesce(CAST({value} AS VARCHAR), ''), 'reason': {reason}}}"


def _bad_records(
    con: duckdb.DuckDBPyConnection, utc: dict[str, str], clock: LocalClock, skew: timedelta
) -> list[tuple]:
    """(line, field, value, reason) of the staged records to quarantine, the first problem of each:
    a host list refused (`expand_host_lists`), NNodes other than the list's size, a FailedNode that
    is not a host name, a time outside the clock's window, a state without the times it needs, times
    out of order (`skew`: the DST jump that may put two local times out of order when read as UTC).
    `utc`: each time column in UTC; the values shown are the file's (local) times."""
    refused = expand_host_lists(con, "attempts_staged")
    create_temp_table(
        con,
        "refused_host_lists_why",
        pa.table({"node_list": list(refused), "reason": list(refused.values())}, schema=LIST_REASONS),
    )
    ran, ended = (", ".join(sql_quote(state) for state in states) for states in (RAN_STATES, ENDED_STATES))
    checks = [
        ("bad.reason IS NOT NULL", _problem("NodeList", "s.node_list", "bad.reason")),
        (
            f"l.size IS NOT NULL AND s.n_nodes IS DISTINCT FROM l.size AND NOT ({NODE_COUNT_FROM_LIST})",
            _problem("NNodes", "s.n_nodes", "format('the NodeList names {:,} nodes', l.size)"),
        ),
        (
            f"s.failed_node IS NOT NULL AND NOT regexp_full_match(s.failed_node, '{NODE_NAME}')",
            _problem("FailedNode", "s.failed_node", "'not a host name'"),
        ),
        *(
            (
                f"({clock.sql_implausible(utc[c])}) IS NOT NULL",
                _problem(SACCT_NAMES[c], f"s.{c}", clock.sql_implausible(utc[c])),
            )
            for c in ("submit_at", "start_at", "end_at", "eligible_at")
        ),
        (
            f"s.state IN ({ran}) AND s.start_at IS NULL",
            _problem("Start", "s.start_at", "'a ' || s.state || ' attempt ran: it needs a Start'"),
        ),
        (
            f"s.state IN ({ended}) AND s.end_at IS NULL",
            _problem("End", "s.end_at", "'a ' || s.state || ' attempt ended: it needs an End'"),
        ),
        (
            "s.state = 'RUNNING' AND s.end_at IS NOT NULL",
            _problem("End", "s.end_at", "'a RUNNING attempt has no End yet'"),
        ),
        (
            "s.state = 'RUNNING' AND s.start_at IS NULL",
            _problem("Start", "s.start_at", "'a RUNNING attempt needs a Start'"),
        ),
        (
            f"{utc['start_at']} < {utc['submit_at']} - to_seconds({int(skew.total_seconds())})",
            _problem("Start", "s.start_at", "'before the Submit ' || CAST(s.submit_at AS VARCHAR)"),
        ),
        (
            f"{utc['end_at']} < {utc['start_at']} - to_seconds({int(skew.total_seconds())})",
            _problem("End", "s.end_at", "'before the Start ' || CAST(s.start_at AS VARCHAR)"),
        ),
        (
            f"{utc['end_at']} < {utc['submit_at']} - to_seconds({int(skew.total_seconds())})",
            _problem("End", "s.end_at", "'before the Submit ' || CAST(s.submit_at AS VARCHAR)"),
        ),
        ("s.gpus < 0 OR s.req_gpus < 0", _problem("AllocTRES", "s.gpus", "'a GPU count is negative'")),
    ]
    cases = " ".join(f"WHEN {condition} THEN {problem}" for condition, problem in checks)
    # utc's expressions name the staged columns bare: `s` is the only table that has them
    return con.execute(
        f"""SELECT source_line, problem.field, problem.value, problem.reason
            FROM (SELECT s.source_line, CASE {cases} END AS problem
                  FROM attempts_staged s
                  LEFT JOIN refused_host_lists_why bad USING (node_list)
                  LEFT JOIN host_lists l USING (node_list))
            WHERE problem IS NOT NULL ORDER BY source_line"""
    ).fetchall()


def _count_conflicts(con: duckdb.DuckDBPyConnection, path: Path, kept: str, end_utc: str, stats: AttemptStats) -> None:
    """Count the attempts whose ended records disagree (CONFLICT_FIELDS) and describe the first
    CONFLICT_SAMPLE: the file, the kept line and the first other line that differs from it, the
    fields that differ (in line order) and why that line was kept."""
    shown = ", ".join(f"{sql} AS {name}" for name, sql in CONFLICT_FIELDS.items())
    ended = f"""(SELECT job_id_raw, {ARRAY_INDEX} AS array_index, submit_at, job_id, source_line, {end_utc} AS end_utc,
                        {{columns}} FROM attempts_staged WHERE {kept} AND end_at IS NOT NULL)"""
    key = (
        "s.job_id_raw = d.job_id_raw AND s.submit_at = d.submit_at AND s.array_index IS NOT DISTINCT FROM d.array_index"
    )
    # One pass over the duplicates' ended records: they conflict when the hashes of their fields differ.
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE attempt_conflicts AS
            SELECT d.job_id_raw, d.array_index, d.submit_at, d.kept_line, min(s.source_line) AS first_line
            FROM {ended.format(columns=f"hash({', '.join(CONFLICT_COLUMNS)}) AS fields")} s
            JOIN attempt_duplicates d ON {key}
            GROUP BY ALL HAVING min(s.fields) <> max(s.fields)"""
    )
    stats.conflicting_attempts = _count(con, "attempt_conflicts")
    first = f"(SELECT * FROM attempt_conflicts ORDER BY first_line LIMIT {CONFLICT_SAMPLE})"
    records = f"(SELECT s.*, d.kept_line FROM {ended.format(columns=shown)} s JOIN {first} d ON {key})"
    differs = " OR ".join(f"k.{name} IS DISTINCT FROM o.{name}" for name in CONFLICT_FIELDS)
    pairs = con.execute(
        f"""SELECT k.job_id, k.source_line AS kept, o.source_line AS other, k.end_utc > o.end_utc,
                   [{", ".join(f"[k.{name}, o.{name}]" for name in CONFLICT_FIELDS)}]
            FROM {records} k JOIN {records} o
              ON k.source_line = k.kept_line AND o.kept_line = k.source_line AND o.source_line <> k.source_line
            WHERE {differs}
            QUALIFY row_number() OVER (PARTITION BY k.source_line ORDER BY o.source_line) = 1
            ORDER BY least(kept, other), greatest(kept, other)"""
    ).fetchall()
    stats.conflicts = []
    for job_id, kept_line, other_line, later_end, values in pairs:
        first_line, second_line = sorted((kept_line, other_line))
        in_line_order = [(a, b) if kept_line == first_line else (b, a) for a, b in values]
        differences = ", ".join(
            f"{name} {a} / {b}" for name, (a, b) in zip(CONFLICT_FIELDS, in_line_order, strict=True) if a != b
        )
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
) -> duckdb.DuckDBPyRelation:
    """Temp table `attempts` from `attempts_staged`; `local_times` False when the times are UTC
    already (the clock then only gives the window of valid times).

    `problems` are the rows the reader could not type; with the ones found here they go to the
    quarantine in line order, so a strict quarantine stops at the first bad line of the file.
    """
    utc = {column: column for column in TIME_COLUMNS}
    skew = timedelta(0)
    if local_times:
        # DST switches are looked for between the first and last valid times only: the others are
        # quarantined, and a time in 1970 would cost a search through decades of offsets
        valid = f"BETWEEN TIMESTAMP '{clock.earliest.isoformat()}' AND TIMESTAMP '{clock.latest.isoformat()}'"
        bounds = ", ".join(f"min({c}) FILTER ({c} {valid}), max({c}) FILTER ({c} {valid})" for c in TIME_COLUMNS)
        values = [v for v in con.execute(f"SELECT {bounds} FROM attempts_staged").fetchall()[0] if v is not None]
        if values:
            changes = clock.offset_changes(min(values), max(values))
            skew = clock.max_offset_change(changes)
            utc = {column: clock.sql_to_utc(column, changes) for column in TIME_COLUMNS}
            doubtful = [LocalClock.sql_doubtful_counts(column, changes) for column in TIME_COLUMNS]
            ambiguous = " + ".join(a for a, _ in doubtful)
            nonexistent = " + ".join(n for _, n in doubtful)
            clock.count(*con.execute(f"SELECT {ambiguous}, {nonexistent} FROM attempts_staged").fetchall()[0])

    bad = _bad_records(con, utc, clock, skew)
    for error in sorted(problems + [InputFormatError(path, *row) for row in bad], key=lambda e: e.line):
        quarantine.reject(error)
    quarantined_lines = ", ".join(str(row[0]) for row in bad)
    kept = f"source_line NOT IN ({quarantined_lines})" if bad else "true"
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE node_count_repairs AS
            SELECT s.source_line, l.size FROM attempts_staged s JOIN host_lists l USING (node_list)
            WHERE {NODE_COUNT_FROM_LIST} AND s.{kept if bad else "source_line IS NOT NULL"}"""
    )
    stats.node_counts_from_node_list = _count(con, "node_count_repairs")
    # The same attempt twice: one record kept (KEPT_RECORD). Array records are told apart by their
    # index as well: some dumps give their tasks one JobIDRaw.
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE attempt_duplicates AS
        SELECT job_id_raw, array_index, submit_at, count(*) - 1 AS dropped, {KEPT_RECORD} AS kept_line
        FROM (SELECT job_id_raw, {ARRAY_INDEX} AS array_index, submit_at, source_line, {utc["end_at"]} AS end_utc
              FROM attempts_staged WHERE {kept})
        GROUP BY ALL HAVING count(*) > 1
        """
    )
    if _count(con, "attempt_duplicates"):
        _count_conflicts(con, path, kept, utc["end_at"], stats)
        kept += f""" AND NOT EXISTS (SELECT 1 FROM attempt_duplicates d WHERE d.job_id_raw = s.job_id_raw
                                     AND d.array_index IS NOT DISTINCT FROM {ARRAY_INDEX.replace("job_id", "s.job_id")}
                                     AND d.submit_at = s.submit_at AND d.kept_line <> s.source_line)"""
    times = ", ".join(f"{utc[c]} AS {c}" for c in TIME_COLUMNS)
    others = ", ".join(f"s.{c}" for c in column_names(STAGED_FIELDS) if c not in TIME_COLUMNS)
    repairs = ""
    if stats.node_counts_from_node_list:
        others = others.replace("s.n_nodes", "coalesce(r.size, s.n_nodes) AS n_nodes")
        repairs = "LEFT JOIN node_count_repairs r USING (source_line)"
    # A view: the landing writes it to Parquet once; a table would copy millions of rows first.
    con.execute(
        f"""
        CREATE OR REPLACE TEMP VIEW attempts AS
        SELECT {others}, {times}
        FROM attempts_staged s {repairs}
        WHERE {kept}
        """
    )
    stats.duplicate_records = con.execute("SELECT coalesce(sum(dropped), 0) FROM attempt_duplicates").fetchall()[0][0]
    stats.attempts = _count(con, "attempts_staged") - len(bad) - stats.duplicate_records
    return con.table("attempts")
