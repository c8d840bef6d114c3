"""Slurm job records as `sacct --allusers --duplicates --allocations --parsable2` prints them.

A month of a large cluster is millions of records, so the file is read and typed inside DuckDB:
each line is read whole (so every row keeps its line number), split at the delimiter and
converted in SQL. The few lines DuckDB cannot take (bad UTF-8, too long) and the rows of the
wrong width (multi-line job names) are reassembled by the same Python rules as every other
parsable2 file (`flows.sources.parsable.assemble_rows`) and put back. Columns are found by the header,
never by position. Step rows (`123.batch`, `123.0`) are not attempts and are skipped (and counted).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from flows.sources.clock import LocalClock
from flows.sources.errors import InputFormatError
from flows.sources.files import open_text
from flows.sources.job_records import STAGED_COLUMNS, finish_attempts
from flows.sources.parsable import ParsableLayout, assemble_rows, parsable_layout
from flows.sources.quarantine import Quarantine
from flows.sources.sql import create_temp_table, sql_quote

REQUIRED_FIELDS = (
    "JobID",
    "JobIDRaw",
    "JobName",
    "User",
    "Account",
    "Partition",
    "QOS",
    "State",
    "ExitCode",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "NNodes",
    "NodeList",
    "AllocTRES",
)
OPTIONAL_FIELDS = ("ReqTRES", "Reason", "DerivedExitCode")
# Read when present; the live pull asks for each from the Slurm version that has it (sacct's man page).
NEWER_FIELDS = {"FailedNode": (23, 2), "Restarts": (24, 11), "SLUID": (25, 11)}
# Open XDMoD's documented dump (`sacct --noheader ... --format jobid,...,jobname`, XDMoD 11): 26 fields.
XDMOD_FIELDS = (
    "JobID",
    "JobIDRaw",
    "Cluster",
    "Partition",
    "QOS",
    "Account",
    "Group",
    "GID",
    "User",
    "UID",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "ExitCode",
    "State",
    "NNodes",
    "NCPUS",
    "ReqCPUS",
    "ReqMem",
    "ReqTRES",
    "AllocTRES",
    "Timelimit",
    "NodeList",
    "JobName",
)

# [D-][HH:]MM:SS[.fff], checked whole; the numbers are then cut out by position (cheaper than captures)
ELAPSED_FORMAT = r"(?:\d+-)?(?:\d+:)?\d+:\d+(?:\.\d+)?"
# What sacct prints for nearly every record ([D-]HH:MM:SS): read as an INTERVAL, cheaper than a list of parts
ELAPSED_COMMON = r"(?:\d+-)?\d+:[0-5]\d:[0-5]\d"
STATE_PATTERN = r"^([A-Z_]+)(?: by (\d+))?$"
EXIT_PATTERN = r"^(\d+):(\d+)$"
BAD_GPU_TRES_PATTERN = r"(?:^|,)gres/gpu(?::[^=,]*)?=(?:[^,]*[^0-9,][^,]*)?(?:,|$)"
LINE_SENTINEL = "\x1e"  # never in sacct output: each line is read as one column
# DuckDB's CSV reader hands out work in slices of its buffer; with its default, a slice holds fewer
# rows than a row group, and keeping the file's order then costs a third of the read in merging
# (1.9 -> 1.3 CPU-s on a 1.5M-record dump at 32 MiB; no gain above, less parallelism at 128 MiB).
READ_BUFFER_BYTES = 32 << 20


@dataclass
class SacctReadStats:
    rows: int = 0  # records read, steps included
    attempts: int = 0
    steps_skipped: int = 0
    duplicate_records: int = 0
    undecodable_lines: int = 0  # not UTF-8 (or over DuckDB's line limit): read again, bad bytes as U+FFFD


def read_sacct(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    clock: LocalClock,
    quarantine: Quarantine | None = None,
    header: tuple[str, ...] | None = None,
    stats: SacctReadStats | None = None,
) -> duckdb.DuckDBPyRelation:
    """Attempts of a sacct dump as temp table `attempts` (see `job_records`); `header=XDMOD_FIELDS`
    for Open XDMoD's headerless files. Times without an offset are local to `clock`.

    One statement reads, splits and types every line into `sacct_lines`, whose rowid + 1 is the
    line number (a table keeps the file's order). DuckDB rejects a line it cannot decode as UTF-8
    (or one over its size limit): that line is missing from the table, so the numbers after it
    are shifted back, and it is read again in Python with the other odd lines (wrong width, blank)
    to be reassembled, typed by the same SQL and added.
    """
    stats = stats if stats is not None else SacctReadStats()
    quarantine = quarantine if quarantine is not None else Quarantine()
    layout = parsable_layout(path, REQUIRED_FIELDS, header)
    typed = _typed_select(layout)
    with gzip.open(path) if path.suffix == ".gz" else open(path, "rb") as handle:
        new_line = "\\r\\n" if handle.readline().endswith(b"\r\n") else "\\n"
    lines = f"""(SELECT CAST(NULL AS BIGINT) AS line_no, string_split(line, {sql_quote(layout.delimiter)}) AS parts
        FROM read_csv({sql_quote(str(path))}, columns = {{'line': 'VARCHAR'}}, header = false,
                      delim = {sql_quote(LINE_SENTINEL)}, quote = '', escape = '', new_line = '{new_line}',
                      auto_detect = false, buffer_size = {READ_BUFFER_BYTES},
                      store_rejects = true, rejects_table = 'sacct_rejects',
                      rejects_scan = 'sacct_reject_scans'))"""
    con.execute(f"CREATE OR REPLACE TEMP TABLE sacct_lines AS {typed.replace('{source}', lines)}")
    rejected = [row[0] for row in con.execute("SELECT DISTINCT line FROM sacct_rejects ORDER BY line").fetchall()]
    stats.undecodable_lines = len(rejected)
    if rejected:
        _number_lines_around(con, rejected)
    con.execute(
        f"""CREATE OR REPLACE TEMP VIEW sacct_rows AS
            SELECT * EXCLUDE (line_no), coalesce(line_no, rowid + 1) AS source_line FROM sacct_lines
            WHERE coalesce(line_no, rowid + 1) >= {layout.first_row_line}"""
    )
    odd = con.execute("SELECT source_line, odd_text FROM sacct_rows WHERE kind = 'odd'").fetchall()
    wanted = [line for line in rejected if line >= layout.first_row_line]
    odd.extend(zip(wanted, _read_lines(path, wanted), strict=True))
    rows = list(assemble_rows(layout, sorted(odd), quarantine))
    recovered = pa.table(
        {"line_no": [no for no, _ in rows], "parts": [values for _, values in rows]},
        schema=pa.schema([("line_no", pa.int64()), ("parts", pa.list_(pa.string()))]),
    )
    create_temp_table(con, "sacct_recovered_rows", recovered)
    con.execute(f"INSERT INTO sacct_lines {typed.replace('{source}', 'sacct_recovered_rows')}")

    stats.rows, stats.steps_skipped = con.execute(
        "SELECT count_if(kind <> 'odd'), count_if(kind = 'step') FROM sacct_rows"
    ).fetchall()[0]
    con.execute(
        f"""CREATE OR REPLACE TEMP VIEW attempts_staged AS
            SELECT {", ".join(STAGED_COLUMNS)} FROM sacct_rows WHERE kind = 'attempt' AND problem IS NULL"""
    )
    problems = [
        InputFormatError(path, line, field, value, reason)
        for line, field, value, reason in con.execute(
            """SELECT source_line, problem.field, problem.value, problem.reason FROM sacct_rows
               WHERE kind = 'attempt' AND problem IS NOT NULL"""
        ).fetchall()
    ]
    return finish_attempts(con, path, clock, quarantine, stats, problems)


def read_sacct_xdmod(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    clock: LocalClock,
    quarantine: Quarantine | None = None,
    stats: SacctReadStats | None = None,
) -> duckdb.DuckDBPyRelation:
    """Attempts of Open XDMoD's headerless dump (its fields: XDMOD_FIELDS), as `read_sacct`."""
    return read_sacct(con, path, clock, quarantine, XDMOD_FIELDS, stats)


def check_header(path: Path, site_timezone: str) -> None:
    """`check --month`: the header names every required column."""
    parsable_layout(path, REQUIRED_FIELDS)


def check_xdmod_header(path: Path, site_timezone: str) -> None:
    """`check --month`: headerless, so the first record has XDMoD's fields."""
    layout = parsable_layout(path, REQUIRED_FIELDS, XDMOD_FIELDS)
    with open_text(path) as handle:
        first_line = handle.readline().rstrip("\r\n")
    if first_line and len(layout.split(first_line)) != layout.width:
        raise layout.wrong_width(1, first_line)


def _number_lines_around(con: duckdb.DuckDBPyConnection, rejected: list[int]) -> None:
    """Give every row of `sacct_lines` its line number when DuckDB rejected the lines `rejected`.

    Those lines are missing from the table, so row n (rowid + 1) is line n + #{j : r_j - j < n},
    with the rejected lines r_j in order and j from 1; r_j - j never decreases, so an ASOF join
    finds that count for every row at once.
    """
    shifts = pa.table(
        {
            "kept_before": [line - j for j, line in enumerate(rejected, start=1)],
            "shift": list(range(1, len(rejected) + 1)),
        }
    )
    create_temp_table(con, "sacct_line_shifts", shifts)
    con.execute(
        """CREATE OR REPLACE TEMP TABLE sacct_lines AS
           SELECT l.* REPLACE (coalesce(l.line_no, l.n + coalesce(s.shift, 0)) AS line_no)
           FROM (SELECT *, rowid + 1 AS n FROM sacct_lines) l
           ASOF LEFT JOIN (SELECT kept_before, max(shift) AS shift FROM sacct_line_shifts GROUP BY ALL) s
             ON l.n > s.kept_before
           ORDER BY l.n"""
    )
    con.execute("ALTER TABLE sacct_lines DROP COLUMN n")


def _read_lines(path: Path, line_numbers: list[int]) -> list[str]:
    """Lines DuckDB rejected, read again in one pass (by number: its byte offsets of rejected lines
    are not reliable); undecodable bytes become U+FFFD."""
    if not line_numbers:
        return []
    wanted, lines = set(line_numbers), {}
    with gzip.open(path) if path.suffix == ".gz" else open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number in wanted:
                lines[number] = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if len(lines) == len(wanted):
                    break
    return [lines.get(number, "") for number in line_numbers]


def _typed_select(layout: ParsableLayout) -> str:
    """A SELECT over `{source}(line_no, parts)` giving each line's kind (attempt, step, or odd: the
    wrong width, or blank), an odd line's text, and the typed STAGED_COLUMNS (local times) with the
    first field that cannot be read (`problem`, NULL when none)."""
    index = {name: i + 1 for i, name in enumerate(layout.header)}
    delimiter, width = sql_quote(layout.delimiter), layout.width
    if layout.maxsplit > 0:  # JobName last: whatever follows the other columns is the name
        fields = (
            f"CASE WHEN len(parts) > {width} "
            f"THEN parts[:{width - 1}] || [array_to_string(parts[{width}:], {delimiter})] ELSE parts END"
        )
        regular = f"coalesce(len(parts) >= {width}, false)"
    else:
        fields, regular = "parts", f"coalesce(len(parts) = {width}, false)"

    def raw(name: str) -> str:
        return f"f[{index[name]}]" if name in index else "''"

    def optional(name: str) -> str:
        """A column only newer Slurm versions print: NULL when absent or empty."""
        return f"nullif({raw(name)}, '')" if name in index else "CAST(NULL AS VARCHAR)"

    def given(name: str) -> str:
        return f"{raw(name)} NOT IN ('', 'Unknown', 'None')"

    def timestamp(name: str) -> str:
        return f"TRY_CAST({raw(name)} AS TIMESTAMP)"  # NULL for Unknown and None too

    # The untyped `gres/gpu=N` is authoritative; typed entries (`gres/gpu:h100=N`) repeat it and
    # are only summed (and checked) when no untyped entry exists.
    tres = [name for name in ("AllocTRES", "ReqTRES") if name in index]
    # the digits after the first `gres/gpu=` up to the next comma ('' when not a whole number); cut
    # out by position, as splitting the TRES string costs twice as much
    untyped = ", ".join(
        f"CASE WHEN strpos({raw(name)}, 'gres/gpu=') > 0 THEN regexp_extract(substr({raw(name)}, "
        f"strpos({raw(name)}, 'gres/gpu=') + 9, 20), '^(\\d+)(?:,|$)', 1) ELSE '' END AS untyped_{name}"
        for name in tres
    )

    def gpus(name: str) -> str:
        typed = f"regexp_extract_all({raw(name)}, 'gres/gpu:[^=,]*=(\\d+)', 1)"
        return f"""CASE WHEN untyped_{name} <> '' THEN CAST(untyped_{name} AS BIGINT)
                        ELSE CAST(coalesce(list_sum(list_transform({typed}, lambda x: CAST(x AS BIGINT))), 0) AS BIGINT)
                   END"""  # list_sum gives a HUGEINT, which would land as a DOUBLE

    def tres_unreadable(name: str) -> str:
        """A GPU entry whose count is not a whole number."""
        return (
            f"untyped_{name} = '' AND contains({raw(name)}, 'gres/gpu') "
            f"AND regexp_matches({raw(name)}, '{BAD_GPU_TRES_PATTERN}')"
        )

    # Checked in this order; the first failing field names the row's problem.
    checks = [
        ("State", "state.state = ''", "expected STATE or 'CANCELLED by <uid>'"),
        ("ExitCode", f"{raw('ExitCode')} <> '' AND exit_code IS NULL", "expected <code>:<signal>"),
        ("Submit", "submit_at IS NULL", "every attempt has a submit time, as YYYY-MM-DDTHH:MM:SS"),
        ("JobIDRaw", "job_id_raw IS NULL", "expected a job number"),
        ("Eligible", f"eligible_at IS NULL AND {given('Eligible')}", "expected YYYY-MM-DDTHH:MM:SS"),
        ("Start", f"start_at IS NULL AND {given('Start')}", "expected YYYY-MM-DDTHH:MM:SS"),
        ("End", f"end_at IS NULL AND {given('End')}", "expected YYYY-MM-DDTHH:MM:SS"),
        ("Elapsed", "elapsed_seconds IS NULL", "expected [D-]HH:MM:SS"),
        ("NNodes", "n_nodes IS NULL", "expected a whole number"),
        ("AllocTRES", tres_unreadable("AllocTRES"), "expected gres/gpu[:type]=<count>"),
    ]
    if "ReqTRES" in index:
        checks.append(("ReqTRES", tres_unreadable("ReqTRES"), "expected gres/gpu[:type]=<count>"))
        req_gpus = f"CASE WHEN {raw('ReqTRES')} <> '' THEN {gpus('ReqTRES')} END"
    else:
        req_gpus = "CAST(NULL AS BIGINT)"
    problem = " ".join(
        f"WHEN {condition} THEN {{'field': '{name}', 'value': {raw(name)}, 'reason': {sql_quote(reason)}}}"
        for name, condition, reason in checks
    )
    return f"""
        SELECT line_no, kind, odd_text, job_id, job_id_raw, job_name, user_name, account, partition, qos,
               nullif(state.state, '') AS state, TRY_CAST(nullif(state.uid, '') AS BIGINT) AS cancelled_by_uid,
               exit_code, exit_signal, submit_at, eligible_at, start_at, end_at, elapsed_seconds, n_nodes,
               node_list, gpus, req_gpus, reason, failed_node, restarts, sluid,
               CASE WHEN kind <> 'attempt' THEN NULL {problem} END AS problem
        FROM (
            SELECT line_no, f, {", ".join(f"untyped_{name}" for name in tres)},
                   CASE WHEN NOT {regular} THEN 'odd' WHEN contains({raw("JobID")}, '.') THEN 'step' ELSE 'attempt' END
                     AS kind,
                   CASE WHEN NOT {regular} THEN coalesce(array_to_string(parts, {delimiter}), '') END AS odd_text,
                   {raw("JobID")} AS job_id,
                   CAST(TRY_CAST({raw("JobIDRaw")} AS BIGINT) AS VARCHAR) AS job_id_raw,
                   {raw("JobName")} AS job_name, {raw("User")} AS user_name, {raw("Account")} AS account,
                   {raw("Partition")} AS partition, {raw("QOS")} AS qos,
                   regexp_extract({raw("State")}, '{STATE_PATTERN}', ['state', 'uid']) AS state,
                   TRY_CAST(nullif(exit.code, '') AS BIGINT) AS exit_code,
                   TRY_CAST(nullif(exit.signal, '') AS BIGINT) AS exit_signal,
                   {timestamp("Submit")} AS submit_at, {timestamp("Eligible")} AS eligible_at,
                   {timestamp("Start")} AS start_at, {timestamp("End")} AS end_at,
                   CASE WHEN common_elapsed
                        THEN CAST(epoch(TRY_CAST(replace({raw("Elapsed")}, '-', ' days ') AS INTERVAL)) AS BIGINT)
                        ELSE ((days * 24 + coalesce(TRY_CAST(clock[-3] AS BIGINT), 0)) * 60
                              + TRY_CAST(clock[-2] AS BIGINT)) * 60 + TRY_CAST(clock[-1] AS BIGINT)
                   END AS elapsed_seconds,
                   TRY_CAST({raw("NNodes")} AS BIGINT) AS n_nodes,
                   {raw("NodeList")} AS node_list,
                   {gpus("AllocTRES")} AS gpus,
                   {req_gpus} AS req_gpus,
                   {raw("Reason")} AS reason,
                   {optional("FailedNode")} AS failed_node,
                   TRY_CAST({optional("Restarts")} AS BIGINT) AS restarts,
                   {optional("SLUID")} AS sluid
            FROM (SELECT *, CASE WHEN common_elapsed THEN NULL WHEN regexp_full_match({raw("Elapsed")}, '{ELAPSED_FORMAT}')
                              THEN string_split(split_part(split_part({raw("Elapsed")}, '-', -1), '.', 1), ':') END AS clock,
                         CASE WHEN common_elapsed THEN NULL WHEN contains({raw("Elapsed")}, '-')
                              THEN TRY_CAST(split_part({raw("Elapsed")}, '-', 1) AS BIGINT) ELSE 0 END AS days,
                         regexp_extract({raw("ExitCode")}, '{EXIT_PATTERN}', ['code', 'signal']) AS exit, {untyped}
                  FROM (SELECT *, regexp_full_match({raw("Elapsed")}, '{ELAPSED_COMMON}') AS common_elapsed
                        FROM (SELECT line_no, parts, {fields} AS f FROM {{source}})))
        )
    """
