"""Slurm job records as `sacct --allusers --duplicates --allocations --parsable2` prints them.

A month of a large cluster is millions of records, so the file is read and typed inside DuckDB:
each line is read whole (so every row keeps its line number), split at the delimiter and
converted in SQL. The few lines DuckDB cannot take (bad UTF-8, too long) and the rows of the
wrong width (multi-line job names) are reassembled by the same Python rules as every other
parsable2 file (`flows.ingest.sources.parsable.assemble_rows`) and put back. Columns are found by the header,
never by position. Step rows (`123.batch`, `123.0`) are not attempts and are skipped (and counted).
"""

from __future__ import annotations

import gzip
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow as pa

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import gzip_break, open_text
from flows.ingest.sources.job_records import finish_attempts
from flows.ingest.sources.parsable import ParsableLayout, assemble_rows, parsable_layout
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.registry import STAGED_FIELDS, column_names
from flows.ingest.sources.sql import create_temp_table, sql_quote


@dataclass(frozen=True)
class SacctField:
    """A field of sacct's `--format`, defined once: the attempt columns typed from it (their types
    are the registry's, `TABLES["attempts"]`) and whether a dump must have it."""

    name: str
    gives: tuple[str, ...]
    need: Literal["required", "optional"] | tuple[int, int] = "required"  # or the Slurm version that added it


# The fields read, in the order the live pull asks for them; the later ones are read when present,
# and the live pull asks for each from the Slurm version that has it (sacct's man page).
SACCT_FIELDS = (
    SacctField("JobID", ("job_id",)),
    SacctField("JobIDRaw", ("job_id_raw",)),
    SacctField("JobName", ("job_name",)),
    SacctField("User", ("user_name",)),
    SacctField("Account", ("account",)),
    SacctField("Partition", ("partition",)),
    SacctField("QOS", ("qos",)),
    SacctField("State", ("state", "cancelled_by_uid")),  # `CANCELLED by <uid>`
    SacctField("ExitCode", ("exit_code", "exit_signal")),  # <code>:<signal>
    SacctField("Submit", ("submit_at",)),
    SacctField("Eligible", ("eligible_at",)),
    SacctField("Start", ("start_at",)),
    SacctField("End", ("end_at",)),
    SacctField("Elapsed", ("elapsed_seconds",)),
    SacctField("NNodes", ("n_nodes",)),
    SacctField("NodeList", ("node_list",)),
    SacctField("AllocTRES", ("gpus",)),
    SacctField("ReqTRES", ("req_gpus",), "optional"),
    SacctField("Reason", ("reason",), "optional"),
    SacctField("DerivedExitCode", (), "optional"),  # asked for (a job's worst step), not landed
    SacctField("AdminComment", ("admin_comment",), "optional"),  # a site's mark of who requeued (methodology)
    SacctField("FailedNode", ("failed_node",), (23, 2)),
    SacctField("Restarts", ("restarts",), (24, 11)),
    SacctField("SLUID", ("sluid",), (25, 11)),
)
REQUIRED_FIELDS = tuple(f.name for f in SACCT_FIELDS if f.need == "required")
OPTIONAL_FIELDS = tuple(f.name for f in SACCT_FIELDS if f.need == "optional")
NEWER_FIELDS = {f.name: f.need for f in SACCT_FIELDS if isinstance(f.need, tuple)}

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

# Its earlier --format lists (classes/OpenXdmod/Shredder/Slurm.php over XDMoD's history; tests/data/README.md),
# newest first. A headerless dump does not say which it is: its records do (`xdmod_layout`).
XDMOD_9_5 = tuple(name for name in XDMOD_FIELDS if name != "QOS")  # ReqGRES dropped (2021-01), QOS not yet added
XDMOD_9_0 = (*XDMOD_9_5[:20], "ReqGRES", *XDMOD_9_5[20:])  # AllocTRES added (2020-05), ReqGRES before ReqTRES
XDMOD_LAYOUTS = {
    "Open XDMoD 10.0 or later (26 fields)": XDMOD_FIELDS,
    "Open XDMoD 9.5 (25 fields, no QOS)": XDMOD_9_5,
    "Open XDMoD 9.0 (26 fields, ReqGRES, no QOS)": XDMOD_9_0,
    "Open XDMoD before 9.0 (25 fields, ReqGRES, no AllocTRES or QOS)": tuple(n for n in XDMOD_9_0 if n != "AllocTRES"),
}
XDMOD_SAMPLE_LINES = 50  # records looked at to tell the layout


# XDMoD printed no QOS before 10.0: such records land without one (then no highest-priority runs,
# docs/methodology.md "ETTR as the paper measured it"); a sacct dump with a header must have it.
XDMOD_MAY_LACK = ("QOS",)


def _required(header: tuple[str, ...] | None) -> tuple[str, ...]:
    """The fields a dump must have: all REQUIRED_FIELDS, but for an XDMoD layout (`header`) that lacks QOS."""
    if header is None:
        return REQUIRED_FIELDS
    return tuple(name for name in REQUIRED_FIELDS if name in header or name not in XDMOD_MAY_LACK)


# [D-][HH:]MM:SS[.fff], checked whole; the numbers are then cut out by position (cheaper than captures)
ELAPSED_FORMAT = r"(?:\d+-)?(?:\d+:)?\d+:\d+(?:\.\d+)?"
# What sacct prints for nearly every record ([D-]HH:MM:SS): read as an INTERVAL, cheaper than a list of parts
ELAPSED_COMMON = r"(?:\d+-)?\d+:[0-5]\d:[0-5]\d"
STATE_PATTERN = r"^([A-Z_]+)(?: by (\d+))?$"
EXIT_PATTERN = r"^(\d+):(\d+)$"
# A GPU count that is not a whole number of at most 9 digits (more would overflow, and no job has that many)
BAD_GPU_TRES_PATTERN = r"(?:^|,)gres/gpu(?::[^=,]*)?=(?:[^,]*[^0-9,][^,]*|\d{10,})?(?:,|$)"
# A TRES list: `name=value` pairs (`cpu=8`, `mem=64G`, `gres/gpu:h100=8`, `fs/disk=0`), comma-separated
TRES_FORMAT = r"(?:[A-Za-z][\w./:-]*=[^,=]+(?:,[A-Za-z][\w./:-]*=[^,=]+)*)?"
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
    conflicting_attempts: int = 0  # attempts whose records disagree on outcome or times (job_records)
    conflicts: list[str] = field(default_factory=list)  # the first of them, with the file and both lines
    node_counts_from_node_list: int = 0  # NNodes 0 beside a host list: the list's size landed
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
    layout = parsable_layout(path, _required(header), header)
    typed = _typed_select(layout)
    with open_text(path) as handle:
        new_line = "\\r\\n" if handle.readline().endswith("\r\n") else "\\n"
    lines = f"""(SELECT CAST(NULL AS BIGINT) AS line_no, string_split(line, {sql_quote(layout.delimiter)}) AS parts
        FROM read_csv({sql_quote(str(path))}, columns = {{'line': 'VARCHAR'}}, header = false,
                      delim = {sql_quote(LINE_SENTINEL)}, quote = '', escape = '', new_line = '{new_line}',
                      auto_detect = false, buffer_size = {READ_BUFFER_BYTES},
                      store_rejects = true, rejects_table = 'sacct_rejects',
                      rejects_scan = 'sacct_reject_scans'))"""
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE sacct_lines AS {typed.replace('{source}', lines)}")
    except duckdb.Error as error:  # DuckDB's message names neither the file nor the line: find them
        broken = gzip_break(path) if path.suffix == ".gz" else None
        if broken is None:
            raise InputFormatError(path, 1, "file", path.name, f"cannot be read: {error}") from None
        raise broken from None
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
            SELECT {", ".join(column_names(STAGED_FIELDS))} FROM sacct_rows WHERE kind = 'attempt' AND problem IS NULL"""
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
    """Attempts of Open XDMoD's headerless dump, in whichever of its layouts it is (`xdmod_layout`), as `read_sacct`."""
    return read_sacct(con, path, clock, quarantine, xdmod_layout(path), stats)


def _fits_xdmod(layout: tuple[str, ...], line: str) -> bool:
    """Whether one record, split by `layout` (JobName last, so at most width-1 times), has its fields where
    that layout puts them."""
    values = line.split("|", len(layout) - 1)
    if len(values) != len(layout):
        return False
    fields = dict(zip(layout, values, strict=True))
    return (
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", fields["Submit"]) is not None
        and re.fullmatch(STATE_PATTERN.strip("^$"), fields["State"]) is not None
        and fields["NNodes"].isdigit()
        and all(re.fullmatch(TRES_FORMAT, fields[name]) for name in ("ReqTRES", "AllocTRES") if name in fields)
        and "=" not in fields.get("ReqGRES", "")  # `gpu:2`, never a TRES list
    )


def xdmod_layout(path: Path) -> tuple[str, ...]:
    """The columns of an Open XDMoD dump: the layout (XDMOD_LAYOUTS) its first records fit best, the
    newest on a tie; today's when none fits (its lines are then quarantined one by one, with why).
    A layout without AllocTRES (before XDMoD 9.0) gives no GPU counts: refused, naming it."""
    with open_text(path) as handle:
        sample = [(no, line.rstrip("\r\n")) for no, line in enumerate(itertools.islice(handle, XDMOD_SAMPLE_LINES), 1)]
    sample = [(no, line) for no, line in sample if line]
    fits = {name: sum(_fits_xdmod(layout, line) for _, line in sample) for name, layout in XDMOD_LAYOUTS.items()}
    name = max(fits, key=lambda n: fits[n])  # the first of the best: the newest
    if not fits[name]:
        return XDMOD_FIELDS
    if "AllocTRES" not in XDMOD_LAYOUTS[name]:
        raise InputFormatError(
            path,
            sample[0][0],
            "layout",
            sample[0][1],
            f"the records are in the layout of {name}, which has no AllocTRES and so no GPU counts: "
            "dump the months again with the --format of Open XDMoD 10 (docs/sources.md, kind sacct_xdmod), or as sacct_psv",
        )
    return XDMOD_LAYOUTS[name]


def check_header(path: Path, site_timezone: str) -> None:
    """`check --month`: the header names every required column."""
    parsable_layout(path, REQUIRED_FIELDS)


def check_xdmod_header(path: Path, site_timezone: str) -> None:
    """`check --month`: headerless, so the first record has the fields of one of XDMoD's layouts."""
    header = xdmod_layout(path)
    layout = parsable_layout(path, _required(header), header)
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


class _RowSql:
    """SQL expressions over `f`, the fields of one row of `layout` (a DuckDB list, 1-based)."""

    def __init__(self, layout: ParsableLayout) -> None:
        self.index = {name: i + 1 for i, name in enumerate(layout.header)}
        # AllocTRES and, when the dump has it, ReqTRES: their GPU counts
        self.tres = [name for name in ("AllocTRES", "ReqTRES") if name in self.index]

    def raw(self, name: str) -> str:
        return f"f[{self.index[name]}]" if name in self.index else "''"

    def optional(self, name: str) -> str:
        """A column only newer Slurm versions print: NULL when absent or empty."""
        return f"nullif({self.raw(name)}, '')" if name in self.index else "CAST(NULL AS VARCHAR)"

    def given(self, name: str) -> str:
        return f"{self.raw(name)} NOT IN ('', 'Unknown', 'None')"

    def timestamp(self, name: str) -> str:
        return f"TRY_CAST({self.raw(name)} AS TIMESTAMP)"  # NULL for Unknown and None too

    def untyped_gpus(self) -> str:
        """`untyped_<TRES field>`: the digits after its first `gres/gpu=` up to the next comma ('' when
        not a whole number); cut out by position, as splitting the TRES string costs twice as much.
        The untyped `gres/gpu=N` is authoritative; typed entries (`gres/gpu:h100=N`) repeat it and
        are only summed (and checked) when no untyped entry exists."""
        return ", ".join(
            f"CASE WHEN strpos({self.raw(name)}, 'gres/gpu=') > 0 THEN regexp_extract(substr({self.raw(name)}, "
            f"strpos({self.raw(name)}, 'gres/gpu=') + 9, 20), '^(\\d{{1,9}})(?:,|$)', 1) ELSE '' END AS untyped_{name}"
            for name in self.tres
        )

    def gpus(self, name: str) -> str:
        typed = f"regexp_extract_all({self.raw(name)}, 'gres/gpu:[^=,]*=(\\d{{1,9}})(?:,|$)', 1)"
        return f"""CASE WHEN untyped_{name} <> '' THEN CAST(untyped_{name} AS BIGINT)
                        ELSE CAST(coalesce(list_sum(list_transform({typed}, lambda x: CAST(x AS BIGINT))), 0) AS BIGINT)
                   END"""  # list_sum gives a HUGEINT, which would land as a DOUBLE

    def req_gpus(self) -> str:
        if "ReqTRES" not in self.index:
            return "CAST(NULL AS BIGINT)"
        return f"CASE WHEN {self.raw('ReqTRES')} <> '' THEN {self.gpus('ReqTRES')} END"

    def tres_unreadable(self, name: str) -> str:
        """A GPU entry whose count is not a whole number."""
        return (
            f"untyped_{name} = '' AND contains({self.raw(name)}, 'gres/gpu') "
            f"AND regexp_matches({self.raw(name)}, '{BAD_GPU_TRES_PATTERN}')"
        )

    def tres_garbled(self, name: str) -> str:
        """Not a TRES list at all, so its GPU count cannot be known (checked only when no
        `gres/gpu=N` was found: a GPU job's list has one)."""
        return f"untyped_{name} = '' AND NOT regexp_full_match({self.raw(name)}, '{TRES_FORMAT}')"

    def elapsed_seconds(self) -> str:
        """[D-]HH:MM:SS as an INTERVAL when it is that (`common_elapsed`), else from `days` and `clock`."""
        return f"""CASE WHEN common_elapsed
                        THEN CAST(epoch(TRY_CAST(replace({self.raw("Elapsed")}, '-', ' days ') AS INTERVAL)) AS BIGINT)
                        ELSE ((days * 24 + coalesce(TRY_CAST(clock[-3] AS BIGINT), 0)) * 60
                              + TRY_CAST(clock[-2] AS BIGINT)) * 60 + TRY_CAST(clock[-1] AS BIGINT)
                   END"""

    def elapsed_parts(self) -> str:
        """`clock` (the H:M:S parts) and `days` of an Elapsed that is not the common form."""
        elapsed = self.raw("Elapsed")
        return f"""CASE WHEN common_elapsed THEN NULL WHEN regexp_full_match({elapsed}, '{ELAPSED_FORMAT}')
                        THEN string_split(split_part(split_part({elapsed}, '-', -1), '.', 1), ':') END AS clock,
                   CASE WHEN common_elapsed THEN NULL WHEN contains({elapsed}, '-')
                        THEN TRY_CAST(split_part({elapsed}, '-', 1) AS BIGINT) ELSE 0 END AS days"""

    def problem(self) -> str:
        """The first field of an attempt that cannot be read, as {field, value, reason}; checked in this order."""
        checks = [
            ("State", "state.state = ''", "expected STATE or 'CANCELLED by <uid>'"),
            ("ExitCode", f"{self.raw('ExitCode')} <> '' AND exit_code IS NULL", "expected <code>:<signal>"),
            ("Submit", "submit_at IS NULL", "every attempt has a submit time, as YYYY-MM-DDTHH:MM:SS"),
            ("JobIDRaw", "job_id_raw IS NULL", "expected a job number"),
            ("Eligible", f"eligible_at IS NULL AND {self.given('Eligible')}", "expected YYYY-MM-DDTHH:MM:SS"),
            ("Start", f"start_at IS NULL AND {self.given('Start')}", "expected YYYY-MM-DDTHH:MM:SS"),
            ("End", f"end_at IS NULL AND {self.given('End')}", "expected YYYY-MM-DDTHH:MM:SS"),
            ("Elapsed", "elapsed_seconds IS NULL", "expected [D-]HH:MM:SS"),
            ("NNodes", "n_nodes IS NULL", "expected a whole number"),
        ]
        for name in self.tres:
            checks.append((name, self.tres_garbled(name), "expected a TRES list: name=value,..."))
            checks.append((name, self.tres_unreadable(name), "expected gres/gpu[:type]=<count>"))
        cases = " ".join(
            f"WHEN {condition} THEN {{'field': '{name}', 'value': {self.raw(name)}, 'reason': {sql_quote(reason)}}}"
            for name, condition, reason in checks
        )
        return f"CASE WHEN kind <> 'attempt' THEN NULL {cases} END"

    def read(self) -> dict[str, str]:
        """The staged columns (less source_line) read from the row: state is still a struct of state and uid."""
        raw = self.raw
        return {
            "job_id": raw("JobID"),
            "job_id_raw": f"CAST(TRY_CAST({raw('JobIDRaw')} AS BIGINT) AS VARCHAR)",
            "job_name": raw("JobName"),
            "user_name": raw("User"),
            "account": raw("Account"),
            "partition": raw("Partition"),
            "qos": raw("QOS"),
            "state": f"regexp_extract({raw('State')}, '{STATE_PATTERN}', ['state', 'uid'])",
            "exit_code": "TRY_CAST(nullif(exit.code, '') AS BIGINT)",
            "exit_signal": "TRY_CAST(nullif(exit.signal, '') AS BIGINT)",
            "submit_at": self.timestamp("Submit"),
            "eligible_at": self.timestamp("Eligible"),
            "start_at": self.timestamp("Start"),
            "end_at": self.timestamp("End"),
            "elapsed_seconds": self.elapsed_seconds(),
            "n_nodes": f"TRY_CAST({raw('NNodes')} AS BIGINT)",
            "node_list": raw("NodeList"),
            "gpus": self.gpus("AllocTRES"),
            "req_gpus": self.req_gpus(),
            "reason": raw("Reason"),
            "failed_node": self.optional("FailedNode"),
            "restarts": f"TRY_CAST({self.optional('Restarts')} AS BIGINT)",
            "sluid": self.optional("SLUID"),
            "admin_comment": self.optional("AdminComment"),
        }


# The two staged columns taken apart from the State struct once the row is read
FROM_STATE = {
    "state": "nullif(state.state, '') AS state",
    "cancelled_by_uid": "TRY_CAST(nullif(state.uid, '') AS BIGINT) AS cancelled_by_uid",
}


def _typed_select(layout: ParsableLayout) -> str:
    """A SELECT over `{source}(line_no, parts)` giving each line's kind (attempt, step, or odd: the
    wrong width, or blank), an odd line's text, and the typed staged columns (registry.STAGED_FIELDS,
    local times) with the first field that cannot be read (`problem`, NULL when none)."""
    row = _RowSql(layout)
    delimiter, width = sql_quote(layout.delimiter), layout.width
    if layout.maxsplit > 0:  # JobName last: whatever follows the other columns is the name
        fields = (
            f"CASE WHEN len(parts) > {width} "
            f"THEN parts[:{width - 1}] || [array_to_string(parts[{width}:], {delimiter})] ELSE parts END"
        )
        regular = f"coalesce(len(parts) >= {width}, false)"
    else:
        fields, regular = "parts", f"coalesce(len(parts) = {width}, false)"
    staged = [name for name in column_names(STAGED_FIELDS) if name != "source_line"]
    read = ",\n".join(f"{expression} AS {name}" for name, expression in row.read().items())
    untyped = ", ".join(f"untyped_{name}" for name in row.tres)
    return f"""
        SELECT line_no, kind, odd_text, {", ".join(FROM_STATE.get(name, name) for name in staged)},
               {row.problem()} AS problem
        FROM (
            SELECT line_no, f, {untyped},
                   CASE WHEN NOT {regular} THEN 'odd' WHEN contains({row.raw("JobID")}, '.') THEN 'step' ELSE 'attempt' END
                     AS kind,
                   CASE WHEN NOT {regular} THEN coalesce(array_to_string(parts, {delimiter}), '') END AS odd_text,
                   {read}
            FROM (SELECT *, {row.elapsed_parts()},
                         regexp_extract({row.raw("ExitCode")}, '{EXIT_PATTERN}', ['code', 'signal']) AS exit,
                         {row.untyped_gpus()}
                  FROM (SELECT *, regexp_full_match({row.raw("Elapsed")}, '{ELAPSED_COMMON}') AS common_elapsed
                        FROM (SELECT line_no, parts, {fields} AS f FROM {{source}})))
        )
    """
