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
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow as pa

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import gzip_break, open_text
from flows.ingest.sources.job_records import TIME_OFFSETS, finish_attempts
from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits
from flows.ingest.sources.parsable import (
    DELIMITERS,
    ParsableLayout,
    assemble_rows,
    copy_with_lf_line_ends,
    lf_lines,
    parsable_layout,
)
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sql import create_temp_table, run_sql
from flows.ingest.sources.tables import STAGED_FIELDS, column_names


@dataclass(frozen=True)
class SacctField:
    """A field of sacct's `--format`, defined once: the attempt columns typed from it (their types
    are the landed table's, `tables.TABLES["attempts"]`) and whether a dump must have it."""

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


# RE2 patterns of sql/sacct__lines.sql that the layout of an XDMoD dump is told by as well (`_fits_xdmod`)
STATE_PATTERN = r"^([A-Z_]+)(?: by (\d+))?$"
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
    carriage_return_lines: int = 0  # holding a carriage return that is no line end (CRLF is one): read alone
    joined_lines: int = 0  # lines read as part of the record before them (a job name holding a newline)


def read_sacct(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    clock: LocalClock,
    limits: InputLimits = DEFAULT_LIMITS,
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
    layout = dump_layout(path, header)
    with open_text(path) as handle:
        new_line = "\\r\\n" if handle.readline().endswith("\r\n") else "\\n"
    row = _row_params(layout)
    file = {"path": str(path), "line_sentinel": LINE_SENTINEL, "new_line": new_line, "buffer_size": READ_BUFFER_BYTES}
    carriage_returns: list[int] = []  # lines holding a carriage return that is no line end: read in Python
    try:
        run_sql(con, "sacct__lines", row | file, recovered=False)
    except duckdb.Error as error:  # DuckDB's message names neither the file nor the line: find them
        if path.suffix == ".gz" and (broken := gzip_break(path)) is not None:
            raise broken from None
        carriage_returns = _read_without_carriage_returns(con, path, row | file, error)
        stats.carriage_return_lines = len(carriage_returns)
    rejected = [line for (line,) in run_sql(con, "sacct__rejected_lines").fetchall()]
    stats.undecodable_lines = len(rejected)
    if rejected:
        _number_lines_around(con, rejected)
    run_sql(con, "sacct__rows", first_row_line=layout.first_row_line)
    odd = run_sql(con, "sacct__odd_lines").fetchall()
    if carriage_returns:  # blank in the copy DuckDB read: their text is the file's
        kept = set(carriage_returns)
        odd = [(line, text) for line, text in odd if line not in kept]
        rejected = sorted(set(rejected) | kept)
    wanted = [line for line in rejected if line >= layout.first_row_line]
    odd.extend(zip(wanted, _read_lines(path, wanted), strict=True))
    rows = list(assemble_rows(layout, sorted(odd), quarantine, stats))
    recovered = pa.table(
        {"line_no": [no for no, _ in rows], "parts": [values for _, values in rows]},
        schema=pa.schema([("line_no", pa.int64()), ("parts", pa.list_(pa.string()))]),
    )
    create_temp_table(con, "sacct_recovered_rows", recovered)
    run_sql(con, "sacct__lines", row, recovered=True)

    stats.rows, stats.steps_skipped = run_sql(con, "sacct__row_counts").fetchall()[0]
    run_sql(con, "sacct__attempts_staged", columns=[*column_names(STAGED_FIELDS), *TIME_OFFSETS])
    problems = [
        InputFormatError(path, line, field, value, reason)
        for line, field, value, reason in run_sql(con, "sacct__problems").fetchall()
    ]
    return finish_attempts(con, path, clock, quarantine, stats, problems, limits=limits, offsets=True)


def read_sacct_xdmod(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    clock: LocalClock,
    limits: InputLimits = DEFAULT_LIMITS,
    quarantine: Quarantine | None = None,
    stats: SacctReadStats | None = None,
) -> duckdb.DuckDBPyRelation:
    """Attempts of Open XDMoD's headerless dump, in whichever of its layouts it is (`xdmod_layout`), as `read_sacct`."""
    return read_sacct(con, path, clock, limits, quarantine, xdmod_layout(path), stats)


def _fits_xdmod(layout: tuple[str, ...], line: str) -> bool:
    """Whether one record, split by `layout` (JobName last, so at most width-1 times), has its fields where
    that layout puts them."""
    values = line.split("|", len(layout) - 1)
    if len(values) != len(layout):
        return False
    fields = dict(zip(layout, values, strict=True))
    return (
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:Z|[+-]\d\d(?::?\d\d)?)?", fields["Submit"]) is not None
        and re.fullmatch(STATE_PATTERN.strip("^$"), fields["State"]) is not None
        and fields["NNodes"].isdigit()
        and all(re.fullmatch(TRES_FORMAT, fields[name]) for name in ("ReqTRES", "AllocTRES") if name in fields)
        and "=" not in fields.get("ReqGRES", "")  # `gpu:2`, never a TRES list
    )


def dump_layout(
    path: Path, header: tuple[str, ...] | None = None, required: tuple[str, ...] | None = None
) -> ParsableLayout:
    """The layout of a sacct dump (`header`: of a headerless one) that has the `required` fields
    (default: what the reader needs). A headerless file given as sacct_psv whose first record is in
    one of Open XDMoD's layouts is refused with the kind to give it as."""
    try:
        return parsable_layout(path, _required(header) if required is None else required, header)
    except InputFormatError as error:
        if header is None and _first_line_fits_xdmod(path):
            hint = 'the file has no header: its first line is a record in Open XDMoD\'s layout; give it as kind = "sacct_xdmod"'
            raise InputFormatError(path, error.line, error.field, error.value, f"{error.reason}; {hint}") from None
        raise


def _first_line_fits_xdmod(path: Path) -> bool:
    with open_text(path) as handle:
        first_line = next(lf_lines(handle), "").rstrip("\r\n")
    return any(_fits_xdmod(layout, first_line) for layout in XDMOD_LAYOUTS.values())


def _sacct_header(line: str) -> bool:
    """Whether `line` is the header line of `sacct --parsable2` (it names JobID, Submit and State,
    which no record's fields are)."""
    return any({"JobID", "Submit", "State"} <= set(line.split(delimiter)) for delimiter in DELIMITERS)


def xdmod_layout(path: Path) -> tuple[str, ...]:
    """The columns of an Open XDMoD dump: the layout (XDMOD_LAYOUTS) its first records fit best, the
    newest on a tie; today's when none fits (its lines are then quarantined one by one, with why).
    A layout without AllocTRES (before XDMoD 9.0) gives no GPU counts, and a file that starts with
    sacct's header line is sacct_psv: each refused, naming it."""
    with open_text(path) as handle:
        sample = [
            (no, line.rstrip("\r\n"))
            for no, line in enumerate(itertools.islice(lf_lines(handle), XDMOD_SAMPLE_LINES), 1)
        ]
    if sample and _sacct_header(sample[0][1]):
        raise InputFormatError(
            path,
            1,
            "header",
            sample[0][1],
            "a header line of sacct --parsable2, which Open XDMoD's dump (--noheader) never has; "
            'give the file as kind = "sacct_psv"',
        )
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
    dump_layout(path)


def check_xdmod_header(path: Path, site_timezone: str) -> None:
    """`check --month`: headerless, so the first record has the fields of one of XDMoD's layouts."""
    header = xdmod_layout(path)
    layout = parsable_layout(path, _required(header), header)
    with open_text(path) as handle:
        first_line = next(lf_lines(handle), "").rstrip("\r\n")
    if first_line and len(layout.split(first_line)) != layout.width:
        raise layout.wrong_width(1, first_line)


def _read_without_carriage_returns(
    con: duckdb.DuckDBPyConnection, path: Path, params: dict[str, object], error: duckdb.Error
) -> list[int]:
    """Read the dump into `sacct_lines` again when DuckDB could not, from a copy in which a line ends
    at LF alone, as in sacct's output: CRLF (a file saved by a Windows editor, or one such line) is a
    line end, and a line holding any other carriage return (DuckDB's CSV reader takes one for a line
    end, which would shift every later line's number) is blank, its text read in Python as the
    file's (`_read_lines`) and its record typed or quarantined alone. The lines so read, in order.

    A file without a carriage return that DuckDB cannot read is refused naming it, without DuckDB's
    internals."""
    with tempfile.TemporaryDirectory(prefix="sacct-lines-") as scratch:
        copy = Path(scratch) / "lines.psv"
        carriage_returns = copy_with_lf_line_ends(path, copy)
        if carriage_returns is None:
            why = str(error).split("\n", 1)[0][:200]
            raise InputFormatError(path, 1, "file", path.name, f"cannot be read as lines of text: {why}") from None
        run_sql(con, "sacct__lines", params | {"path": str(copy), "new_line": "\\n"}, recovered=False)
    return carriage_returns


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
    run_sql(con, "sacct__number_lines_around")
    run_sql(con, "sacct__drop_row_numbers")


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


def _row_params(layout: ParsableLayout) -> dict[str, object]:
    """The parameters sql/sacct__lines.sql splits and types a row of `layout` by."""
    return {
        "header": list(layout.header),
        "delimiter": layout.delimiter,
        "width": layout.width,
        "name_last": layout.maxsplit > 0,  # JobName last: whatever follows the other columns is the name
        "state_pattern": STATE_PATTERN,
        "tres_format": TRES_FORMAT,
    }
