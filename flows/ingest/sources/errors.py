"""The error every reader raises (or quarantines) for a line it cannot read."""

from __future__ import annotations

from pathlib import Path

from flows.core.errors import InputError
from flows.core.escape import printable


class InputFormatError(InputError, ValueError):
    """A line of an input file that cannot be read; names the file, line and field. Its message is
    shown on terminals, in log lines and in the report: every part of it that may come from the
    file (its name, the field, the value, a reason quoting the line) is escaped (flows/core/escape.py)."""

    def __init__(self, path: Path | str, line: int, field: str, value: str, reason: str):
        self.path, self.line, self.field, self.value, self.reason = str(path), line, field, value, reason
        shown = value if len(value) <= 80 else value[:77] + "..."
        super().__init__(
            f"{printable(str(path))}:{line}: field {printable(field)}='{printable(shown)}': {printable(reason)}"
        )
