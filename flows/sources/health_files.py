"""What a health reader does with a file it cannot read to its end: it quarantines the file (with
its path and the reason) and goes on with the source's other files, so one bad file never fails
the month."""

from __future__ import annotations

import zlib
from pathlib import Path

from flows.sources.errors import InputFormatError

# a corrupt or truncated .gz, a file removed or unreadable while the month is read
READ_ERRORS = (OSError, EOFError, zlib.error)


def unreadable(path: Path, line: int, error: BaseException) -> InputFormatError:
    """The quarantine entry of a file that could not be read past `line`."""
    return InputFormatError(path, line, "file", path.name, f"could not be read from this line on: {error}")
