"""Opening an input file: gzip or plain text, never failing on bad bytes, and a broken gzip named."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO

from flows.ingest.sources.errors import InputFormatError

# What reading a gzip stream that is cut off (a copy stopped early) or corrupt raises
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


class BrokenGzipError(InputFormatError):
    """A gzip file that cannot be read past a line (a health reader keeps the lines before it)."""


def broken_gzip(path: Path, line: int, error: Exception) -> BrokenGzipError:
    """The error of a gzip file that cannot be read past `line` (the line where it breaks)."""
    return BrokenGzipError(path, line, "file", path.name, f"the gzip stream is cut off or corrupt: {error}")


class TextFile:
    """A text input file, gzip-compressed when it ends in .gz; undecodable bytes become U+FFFD,
    never an error. A gzip stream that ends early or is corrupt raises `broken_gzip` at the line
    where it breaks, not a bare EOFError.

    Line endings are kept (the reader strips them). `newline` is where lines end: "" (any of LF,
    CRLF, CR), or LF_ONLY, as `wc -l`, editors and `sed -n Np` count lines: a log's line that holds a
    lone carriage return is then one line (the CR in it), and the lines after it keep their numbers."""

    def __init__(self, path: Path, newline: str = "") -> None:
        self.path = path
        self.lines_read = 0
        if path.suffix == ".gz":
            self._handle: IO[str] = gzip.open(path, "rt", encoding="utf-8", errors="replace", newline=newline)
        else:
            self._handle = open(path, encoding="utf-8", errors="replace", newline=newline)

    def __enter__(self) -> TextFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._handle.close()

    @contextmanager
    def _named(self) -> Iterator[None]:
        try:
            yield
        except GZIP_ERRORS as error:
            raise broken_gzip(self.path, self.lines_read + 1, error) from None

    def __iter__(self) -> Iterator[str]:
        with self._named():
            for line in self._handle:
                self.lines_read += 1
                yield line

    def lines(self, max_chars: int) -> Iterator[str]:
        """The file's lines, each held in memory up to `max_chars` + 1 characters: a longer line
        (a log without a newline for gigabytes) is yielded as its first `max_chars` + 1 characters,
        the rest read past in pieces, so that the reader quarantines it as too long (its length is
        over any bound) and the next line keeps its number."""
        with self._named():
            while line := self._handle.readline(max_chars + 1):
                if len(line) > max_chars and not line.endswith("\n"):
                    while (rest := self._handle.readline(_PIECE)) and not rest.endswith("\n"):
                        pass
                self.lines_read += 1
                yield line

    def readline(self, size: int = -1) -> str:
        with self._named():
            line = self._handle.readline(size)
        self.lines_read += line.endswith("\n")
        return line

    def read(self, size: int = -1) -> str:
        with self._named():
            text = self._handle.read(size)
        self.lines_read += text.count("\n")
        return text


_PIECE = 1 << 20  # how much of an over-long line is read at a time, to be passed over
LF_ONLY = "\n"  # TextFile's `newline` for the logs read line by line (syslog, captures, JSON lines)


def open_text(path: Path, newline: str = "") -> TextFile:
    """The file `path` for reading as text (see `TextFile`)."""
    return TextFile(path, newline)


def gzip_break(path: Path) -> InputFormatError | None:
    """Where a gzip file cannot be read to its end, as the error to raise; None when it can."""
    with TextFile(path) as handle:
        try:
            for _ in handle:
                pass
        except InputFormatError as error:
            return error
    return None
