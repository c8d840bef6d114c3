"""Readers for the source formats: one module per format, each yielding normalised rows."""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo


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


class LocalClock:
    """Turns a log's local wall-clock times (no offset) into UTC, counting the times DST makes doubtful.

    An ambiguous time (the repeated hour when clocks go back) is read as the first of the two
    instants; a nonexistent one (the skipped hour when clocks go forward) as the offset before the
    change. Both are counted so the report can show them.
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


def read_parsable_rows(
    path: Path, required: tuple[str, ...], quarantine: Quarantine, header: tuple[str, ...] | None = None
) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a Slurm `--parsable2` file (`|` between fields, or the 0x1f of `--delimiter=$'\\x1f'` that a
    `|` in a job name cannot break) as (line number, {column: value}).

    Columns are found by the file's header line, never by position; a headerless file (`--noheader`)
    needs `header`. When the last column is JobName a row is split at most width-1 times, so a `|` in
    the name survives. A header without the required columns fails the file; a row whose field count
    differs from the header's goes to the quarantine, unless it is a row split by a newline inside a
    field (a multi-line job name), which is rejoined.
    """
    with open_text(path) as handle:
        first_line = handle.readline().rstrip("\r\n")
        delimiter = "\x1f" if "\x1f" in first_line else "|"
        if header is None:
            header = tuple(first_line.split(delimiter))
            lines = enumerate(handle, start=2)
        else:
            lines = enumerate(itertools.chain([first_line + "\n"], handle), start=1)
        missing = [f for f in required if f not in header]
        if missing:
            raise InputFormatError(path, 1, "header", first_line, f"missing columns {', '.join(missing)}")
        maxsplit = len(header) - 1 if header[-1] == "JobName" else -1
        width = len(header)

        def wrong_width(line_no: int, text: str) -> InputFormatError:
            count = len(text.split(delimiter))
            return InputFormatError(path, line_no, "row", text, f"has {count} fields, the header has {width}")

        # A newline inside a job name splits a row over lines: a short row takes the next lines
        # while that completes it exactly; otherwise it is quarantined (so is a truncated last row).
        broken: tuple[int, str] | None = None
        for line_no, line in lines:
            line = line.rstrip("\r\n")
            if broken is not None:
                joined = broken[1] + "\n" + line
                count = len(joined.split(delimiter, maxsplit))
                if count <= width:
                    if count == width:
                        yield broken[0], dict(zip(header, joined.split(delimiter, maxsplit), strict=True))
                        broken = None
                    else:
                        broken = (broken[0], joined)
                    continue
                quarantine.reject(wrong_width(*broken))
                broken = None
            if not line:
                continue
            values = line.split(delimiter, maxsplit)
            if len(values) < width:
                broken = (line_no, line)
                continue
            if len(values) > width:
                quarantine.reject(wrong_width(line_no, line))
                continue
            yield line_no, dict(zip(header, values, strict=True))
        if broken is not None:
            quarantine.reject(wrong_width(*broken))
