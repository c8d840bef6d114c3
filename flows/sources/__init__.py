"""Readers for the source formats: one module per format, each yielding normalised rows."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pyarrow as pa


class InputFormatError(ValueError):
    """A line of an input file that cannot be read; names the file, line and field."""

    def __init__(self, path: Path | str, line: int, field: str, value: str, reason: str):
        self.path, self.line, self.field, self.value, self.reason = str(path), line, field, value, reason
        shown = value if len(value) <= 80 else value[:77] + "..."
        super().__init__(f"{path}:{line}: field {field}={shown!r}: {reason}")


class Quarantine:
    """Collects the rows a reader could not read. A strict one (the default) raises the first instead."""

    def __init__(self, strict: bool = True):
        self.strict = strict
        self.errors: list[InputFormatError] = []

    def reject(self, error: InputFormatError) -> None:
        if self.strict:
            raise error
        self.errors.append(error)


@dataclass
class HealthCheck:
    """A failed or warning health check on a node (NHC, DCGM, ...): one row of the health-event table."""

    node: str
    ts: datetime
    source: str  # nhc, dcgm
    check: str  # check_fs_mount, "Memory system", ...
    status: str  # the check's own verdict: ERROR, Failure, Warning
    message: str
    source_file: str
    source_line: int  # line in the file (1 for one-document files)


@dataclass(frozen=True)
class OffsetChange:
    """A change of a zone's UTC offset (a DST switch), seen from the local wall clock."""

    at_utc: datetime  # naive UTC instant of the switch
    before: timedelta
    after: timedelta

    @property
    def doubtful_from(self) -> datetime:
        """First local time that is ambiguous (clocks went back) or nonexistent (clocks went forward)."""
        return self.at_utc + min(self.before, self.after)

    @property
    def doubtful_until(self) -> datetime:
        """End (exclusive) of the doubtful local times; from here on the new offset applies."""
        return self.at_utc + max(self.before, self.after)


class LocalClock:
    """Turns a log's local wall-clock times (no offset) into UTC, counting the times DST makes doubtful.

    An ambiguous time (the repeated hour when clocks go back) is read as the first of the two
    instants; a nonexistent one (the skipped hour when clocks go forward) as the offset before the
    change. Both are counted so the report can show them. `sql_to_utc` applies the same rule to a
    column in DuckDB, for the readers that work there.
    """

    def __init__(self, tz: ZoneInfo):
        self.tz = tz
        self.ambiguous = 0
        self.nonexistent = 0

    def to_utc(self, naive: datetime) -> datetime:
        first = naive.replace(tzinfo=self.tz, fold=0)
        if first.utcoffset() != naive.replace(tzinfo=self.tz, fold=1).utcoffset():
            round_trip = first.astimezone(UTC).astimezone(self.tz).replace(tzinfo=None)
            if round_trip == naive:
                self.ambiguous += 1
            else:
                self.nonexistent += 1
        return first.astimezone(UTC)

    def _offset(self, epoch: int) -> timedelta:
        return datetime.fromtimestamp(epoch, self.tz).utcoffset() or timedelta(0)

    def offset_changes(self, first: datetime, last: datetime) -> tuple[timedelta, list[OffsetChange]]:
        """The offset in force before naive local time `first`, and every change up to `last`."""
        step = 3600  # zones change offset at most once in an hour
        epoch = int((first - timedelta(days=2)).replace(tzinfo=UTC).timestamp())
        stop = int((last + timedelta(days=2)).replace(tzinfo=UTC).timestamp())
        initial = current = self._offset(epoch)
        changes = []
        while epoch < stop:
            following = self._offset(epoch + step)
            if following != current:
                low, high = epoch, epoch + step  # the switch is in (low, high]: find its second
                while high - low > 1:
                    middle = (low + high) // 2
                    low, high = (middle, high) if self._offset(middle) == current else (low, middle)
                at = datetime.fromtimestamp(high, UTC).replace(tzinfo=None)
                changes.append(OffsetChange(at, current, following))
                current = following
            epoch += step
        return initial, changes

    def sql_to_utc(self, column: str, changes: tuple[timedelta, list[OffsetChange]]) -> str:
        """A DuckDB expression turning naive local TIMESTAMP `column` into naive UTC (see `to_utc`)."""
        initial, switches = changes

        def minus(offset: timedelta) -> str:
            return f"{column} - to_seconds({int(offset.total_seconds())})"

        if not switches:
            return column if not initial else minus(initial)
        whens = " ".join(
            f"WHEN {column} < TIMESTAMP '{c.doubtful_until.isoformat()}' THEN {minus(c.before)}" for c in switches
        )
        return f"CASE {whens} ELSE {minus(switches[-1].after)} END"

    @staticmethod
    def sql_doubtful_counts(column: str, changes: tuple[timedelta, list[OffsetChange]]) -> tuple[str, str]:
        """Two DuckDB aggregates: how many values of `column` are ambiguous, how many nonexistent."""
        counts = {"ambiguous": [], "nonexistent": []}
        for c in changes[1]:
            kind = "ambiguous" if c.after < c.before else "nonexistent"
            counts[kind].append(
                f"count_if({column} >= TIMESTAMP '{c.doubtful_from.isoformat()}' "
                f"AND {column} < TIMESTAMP '{c.doubtful_until.isoformat()}')"
            )
        # count_if(false) when there is no change: an aggregate still (a bare 0 would be a row per row)
        return tuple(" + ".join(parts) if parts else "count_if(false)" for parts in counts.values())

    def count(self, ambiguous: int, nonexistent: int) -> None:
        self.ambiguous += ambiguous
        self.nonexistent += nonexistent


TimeZone = ZoneInfo | LocalClock


def to_utc(naive: datetime, tz: TimeZone) -> datetime:
    """A naive local time in `tz` as UTC (through a LocalClock when DST cases are to be counted)."""
    if isinstance(tz, LocalClock):
        return tz.to_utc(naive)
    return naive.replace(tzinfo=tz).astimezone(UTC)


def parse_local_timestamp(text: str, tz: TimeZone) -> datetime | None:
    """Slurm prints `YYYY-MM-DDTHH:MM:SS` in the local time of the process; `Unknown`/`None` mean no time."""
    if text in ("", "Unknown", "None"):
        return None
    return to_utc(datetime.fromisoformat(text), tz)


def open_text(path: Path):
    """A text file, gzip-compressed when it ends in .gz; undecodable bytes become U+FFFD, never an error."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")


@dataclass(frozen=True)
class ParsableLayout:
    """How a Slurm `--parsable2` file splits into rows: its delimiter, columns and where rows start."""

    path: Path
    delimiter: str  # `|`, or the 0x1f of `--delimiter=$'\\x1f'` that a `|` in a job name cannot break
    header: tuple[str, ...]
    first_row_line: int  # 2 after a header line, 1 for a headerless (`--noheader`) file

    @property
    def width(self) -> int:
        return len(self.header)

    @property
    def maxsplit(self) -> int:
        """When the last column is JobName a row is split at most width-1 times, so a `|` in the name survives."""
        return self.width - 1 if self.header[-1] == "JobName" else -1

    def split(self, text: str) -> list[str]:
        return text.split(self.delimiter, self.maxsplit)

    def wrong_width(self, line_no: int, text: str) -> InputFormatError:
        count = len(text.split(self.delimiter))
        return InputFormatError(self.path, line_no, "row", text, f"has {count} fields, the header has {self.width}")


def parsable_layout(path: Path, required: tuple[str, ...], header: tuple[str, ...] | None = None) -> ParsableLayout:
    """The layout of a parsable2 file from its header line (or the given `header` of a headerless one).

    Columns are found by name, never by position; a header without the required columns fails the file.
    """
    with open_text(path) as handle:
        first_line = handle.readline().rstrip("\r\n")
    delimiter = "\x1f" if "\x1f" in first_line else "|"
    layout = ParsableLayout(path, delimiter, header or tuple(first_line.split(delimiter)), 1 if header else 2)
    missing = [f for f in required if f not in layout.header]
    if missing:
        raise InputFormatError(path, 1, "header", first_line, f"missing columns {', '.join(missing)}")
    return layout


def assemble_rows(
    layout: ParsableLayout, lines: Iterable[tuple[int, str]], quarantine: Quarantine
) -> Iterator[tuple[int, list[str]]]:
    """Rows as (line number, values) from numbered lines in file order, which may skip lines.

    A newline inside a field (a multi-line job name) splits a row over lines: a short row takes the
    lines right after it, each short itself, while that completes it exactly. Anything else of the
    wrong width (including a truncated last row) goes to the quarantine.
    """
    broken: tuple[int, str] | None = None
    previous = None
    for line_no, line in lines:
        values = layout.split(line)
        if broken is not None:
            if line_no == previous + 1 and len(values) < layout.width:
                joined = broken[1] + "\n" + line
                count = len(layout.split(joined))
                if count == layout.width:
                    yield broken[0], layout.split(joined)
                    broken = None
                    previous = line_no
                    continue
                if count < layout.width:
                    broken = (broken[0], joined)
                    previous = line_no
                    continue
            quarantine.reject(layout.wrong_width(*broken))
            broken = None
        previous = line_no
        if not line:
            continue
        if len(values) < layout.width:
            broken = (line_no, line)
        elif len(values) > layout.width:
            quarantine.reject(layout.wrong_width(line_no, line))
        else:
            yield line_no, values
    if broken is not None:
        quarantine.reject(layout.wrong_width(*broken))


def read_parsable_rows(
    path: Path, required: tuple[str, ...], quarantine: Quarantine, header: tuple[str, ...] | None = None
) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a Slurm `--parsable2` file as (line number, {column: value}), read line by line in Python
    (for the small files; job records go through DuckDB in `sacct.py`)."""
    layout = parsable_layout(path, required, header)
    with open_text(path) as handle:
        lines = ((no, line.rstrip("\r\n")) for no, line in enumerate(handle, start=1) if no >= layout.first_row_line)
        for line_no, values in assemble_rows(layout, lines, quarantine):
            yield line_no, dict(zip(layout.header, values, strict=True))


def sql_quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def create_temp_table(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> None:
    """Temp table `name` in DuckDB holding an Arrow table built in Python."""
    con.register(f"{name}_arrow", table)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_arrow")
    con.unregister(f"{name}_arrow")
