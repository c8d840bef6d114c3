"""Report months: `YYYY-MM` strings and their UTC windows [first day 00:00, next month 00:00)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

MONTH_RE = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")


@dataclass(frozen=True, order=True)
class Month:
    year: int
    month: int

    @classmethod
    def parse(cls, text: str) -> Month:
        match = MONTH_RE.match(text.strip())
        if not match:
            raise ValueError(f"month must be YYYY-MM, got {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))

    @classmethod
    def last_full(cls, now: datetime | None = None) -> Month:
        """The month before the one `now` (default: the current UTC time) falls in."""
        now = now or datetime.now(UTC)
        return cls(now.year, now.month).previous()

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        return self.next().start

    def next(self) -> Month:
        return Month(self.year + self.month // 12, self.month % 12 + 1)

    def previous(self) -> Month:
        return Month(self.year - (self.month == 1), (self.month - 2) % 12 + 1)

    @property
    def days(self) -> float:
        return (self.end - self.start).total_seconds() / 86400


def observed_end(month: Month, as_of: datetime) -> datetime:
    """Where a month's observed time ends, given records dumped at `as_of` (both naive UTC or both
    aware): the month's end, or the dump if it came first. Exposure and queue time are clipped
    there, so a report never counts time that had not happened when the records were taken."""
    start, end = (
        (month.start, month.end) if as_of.tzinfo else (month.start.replace(tzinfo=None), month.end.replace(tzinfo=None))
    )
    return min(max(as_of, start), end)
