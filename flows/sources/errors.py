"""The error every reader raises (or quarantines) for a line it cannot read."""

from __future__ import annotations

from pathlib import Path


class InputFormatError(ValueError):
    """A line of an input file that cannot be read; names the file, line and field."""

    def __init__(self, path: Path | str, line: int, field: str, value: str, reason: str):
        self.path, self.line, self.field, self.value, self.reason = str(path), line, field, value, reason
        shown = value if len(value) <= 80 else value[:77] + "..."
        super().__init__(f"{path}:{line}: field {field}={shown!r}: {reason}")
