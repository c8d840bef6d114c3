"""Readers for the source formats: one module per format, each yielding normalised rows."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo


class InputFormatError(ValueError):
    """A line of an input file that cannot be read; names the file, line and field."""

    def __init__(self, path: Path | str, line: int, field: str, value: str, reason: str):
        self.path, self.line, self.field, self.value, self.reason = str(path), line, field, value, reason
        shown = value if len(value) <= 80 else value[:77] + "..."
        super().__init__(f"{path}:{line}: field {field}={shown!r}: {reason}")


def parse_local_timestamp(text: str, tz: ZoneInfo) -> datetime | None:
    """Slurm prints `YYYY-MM-DDTHH:MM:SS` in the local time of the process; `Unknown`/`None` mean no time."""
    if text in ("", "Unknown", "None"):
        return None
    return datetime.fromisoformat(text).replace(tzinfo=tz).astimezone(UTC)
