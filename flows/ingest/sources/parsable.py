"""The Slurm `--parsable2` layout: delimiter, header, rows split over lines by multi-line job names."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import TextFile, open_text
from flows.ingest.sources.quarantine import Quarantine


@dataclass(frozen=True)
class ParsableLayout:
    """How a Slurm `--parsable2` file splits into rows: its delimiter, columns and where rows start."""

    path: Path
    delimiter: str  # one of DELIMITERS, found from the header line
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


# The delimiters sites give `--delimiter`, tried in this order on the header: GCM's collectors write
# `|#` (its fields may hold `||`), a 0x1f cannot be in a job name, `|` is sacct's default.
DELIMITERS = ("|#", "\x1f", "|")


def _delimiter(first_line: str, required: tuple[str, ...], header: tuple[str, ...] | None) -> str:
    """The delimiter that splits the header line into names holding every required column (a
    headerless file's first record: into as many fields as `header` has); `|` when none does."""
    for delimiter in DELIMITERS:
        fields = first_line.split(delimiter)
        if len(fields) > 1 and (set(required) <= set(fields) if header is None else len(fields) == len(header)):
            return delimiter
    return "|"


def parsable_layout(path: Path, required: tuple[str, ...], header: tuple[str, ...] | None = None) -> ParsableLayout:
    """The layout of a parsable2 file from its header line (or the given `header` of a headerless one).

    The delimiter is the one that splits the header into column names (DELIMITERS). Columns are
    found by name, never by position; a header without the required columns fails the file.
    """
    with open_text(path) as handle:
        first_line = next(lf_lines(handle), "").rstrip("\r\n")
    delimiter = _delimiter(first_line, required, header)
    layout = ParsableLayout(path, delimiter, header or tuple(first_line.split(delimiter)), 1 if header else 2)
    missing = [f for f in required if f not in layout.header]
    if missing:
        raise InputFormatError(path, 1, "header", first_line, f"missing columns {', '.join(missing)}")
    return layout


class JoinedLineStats(Protocol):
    """A reader's statistics that count the lines joined to the record before them."""

    joined_lines: int


def assemble_rows(
    layout: ParsableLayout,
    lines: Iterable[tuple[int, str]],
    quarantine: Quarantine,
    stats: JoinedLineStats | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """Rows as (line number, values) from numbered lines in file order, which may skip lines.

    A newline inside a field (a multi-line job name) splits a row over lines: a short row takes the
    lines right after it, each short itself, while that completes it exactly. Anything else of the
    wrong width (including a truncated last row) goes to the quarantine. A row is landed or
    quarantined at its first line; each line it took in is counted in `stats.joined_lines`, so that
    every line is a row's first line, joined, or blank.
    """
    broken: tuple[int, str] | None = None
    previous = None
    for line_no, line in lines:
        values = layout.split(line)
        if broken is not None:
            if line_no == previous + 1 and len(values) < layout.width:
                joined = broken[1] + "\n" + line
                count = len(layout.split(joined))
                if count <= layout.width and stats is not None:
                    stats.joined_lines += 1
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
    path: Path,
    required: tuple[str, ...],
    quarantine: Quarantine,
    header: tuple[str, ...] | None = None,
    stats: JoinedLineStats | None = None,
) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a Slurm `--parsable2` file as (line number, {column: value}), read line by line in Python
    (for the small files; job records go through DuckDB in `sacct.py`); the lines joined to a row
    counted in `stats` (`assemble_rows`)."""
    layout = parsable_layout(path, required, header)
    with open_text(path) as handle:
        numbered = enumerate(lf_lines(handle), start=1)
        lines = ((no, line.rstrip("\r\n")) for no, line in numbered if no >= layout.first_row_line)
        for line_no, values in assemble_rows(layout, lines, quarantine, stats):
            yield line_no, dict(zip(layout.header, values, strict=True))


def copy_with_lf_line_ends(path: Path, copy: Path) -> list[int] | None:
    """Copy `path` (decompressed) to `copy` with every line ending at LF alone, as Slurm's tools write
    them: CRLF as LF, and a line holding another carriage return blank (its reader reads it alone,
    by number, from `path`). The numbers of those lines, or None when the file holds no carriage
    return at all (the copy is then the file)."""
    carriage_returns: list[int] = []
    found = False
    with gzip.open(path) if path.suffix == ".gz" else open(path, "rb") as source, open(copy, "wb") as out:
        for number, raw in enumerate(source, start=1):
            if b"\r" not in raw:
                out.write(raw)
                continue
            found = True
            line = raw.rstrip(b"\n").rstrip(b"\r")
            if b"\r" in line:
                carriage_returns.append(number)
                line = b""
            out.write(line + b"\n")
    return carriage_returns if found else None


def lf_lines(handle: TextFile) -> Iterator[str]:
    """The lines of an open text file as Slurm's tools end them: at LF alone, each with its LF (a CRLF
    line keeps its CR, which readers strip as part of the line end; any other CR is the line's own,
    never a line break that would shift every later line's number). The handle reads universal
    newlines: the pieces it ends at a lone CR are joined again, each once."""
    pending: list[str] = []
    for piece in handle:
        if piece.endswith("\n"):
            yield "".join(pending) + piece if pending else piece
            pending = []
        else:  # ended at a lone CR (or at the file's end)
            pending.append(piece)
    if pending:
        yield "".join(pending)
