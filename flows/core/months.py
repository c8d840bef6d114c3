"""Report months: `YYYY-MM` strings and their UTC windows [first day 00:00, next month 00:00)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic_core import core_schema

from flows.core.errors import UsageError

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

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        """As a flow parameter: YYYY-MM text (a deployment's run: the server checks the pattern),
        given to the flow as a Month. Callers pass the text: Prefect records a flow's parameters with
        FastAPI's jsonable_encoder, which writes a dataclass as its fields, and the failure hooks,
        the UI and a re-run read the record."""
        return core_schema.json_or_python_schema(
            json_schema=core_schema.no_info_after_validator_function(
                cls.parse, core_schema.str_schema(pattern=MONTH_RE.pattern)
            ),
            python_schema=core_schema.no_info_plain_validator_function(cls._coerce),
            serialization=core_schema.plain_serializer_function_ser_schema(str),
        )

    @classmethod
    def _coerce(cls, value: object) -> Month:
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        raise ValueError(f"month must be YYYY-MM, got {value!r}")

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        return self.next().start

    def next(self) -> Month:
        return Month(self.year + self.month // 12, self.month % 12 + 1)

    def previous(self) -> Month:
        return self.minus(1)

    def minus(self, months: int) -> Month:
        """The month `months` before this one."""
        index = self.year * 12 + self.month - 1 - months
        return Month(index // 12, index % 12 + 1)

    @property
    def days(self) -> float:
        return (self.end - self.start).total_seconds() / 86400


def month_range(first: Month, last: Month) -> list[Month]:
    """Every month from `first` to `last`, both included: the one rule of a range of months."""
    if last < first:
        raise ValueError(f"the range {first}..{last} is empty: its first month must not be after its last")
    months = [first]
    while months[-1] < last:
        months.append(months[-1].next())
    return months


def observed_end(month: Month, as_of: datetime) -> datetime:
    """Where a month's observed time ends, given records dumped at `as_of` (both naive UTC or both
    aware): the month's end, or the dump if it came first. Exposure and queue time are clipped
    there, so a report never counts time that had not happened when the records were taken."""
    start, end = (
        (month.start, month.end) if as_of.tzinfo else (month.start.replace(tzinfo=None), month.end.replace(tzinfo=None))
    )
    return min(max(as_of, start), end)


# A month's job records begin late when, at the rate its jobs end after their first End, this many
# would have ended before it: the chance that none did is then e^-10 (docs/methodology.md "The
# month's observed window").
LATE_START_ENDS = 10


def observed_start(month: Month, ends: int, first_end: datetime | None, last_end: datetime | None) -> datetime:
    """Where a month's job records begin to observe it (naive UTC, like the arguments), from the
    month's `ends` Ends, the first and the last: the month's start, unless no job ended for so long
    after it that, at the rate jobs end in the rest of the month, LATE_START_ENDS would have. A dump
    windowed by end time (as Open XDMoD's and many sites' are) holds no job that ended before its
    window; one windowed by activity holds jobs ending from its first minutes; a quiet cluster's few
    Ends say nothing (from the start). A late beginning is taken at its hour: dumps are cut at whole
    hours or days, and the minutes before the first job ended are part of the window."""
    start = month.start.replace(tzinfo=None)
    if ends < 2 or first_end is None or last_end is None or last_end <= first_end:
        return start
    per_second = (ends - 1) / (last_end - first_end).total_seconds()
    if (first_end - start).total_seconds() * per_second < LATE_START_ENDS:
        return start
    return first_end.replace(minute=0, second=0, microsecond=0)


class MonthNotEndedError(UsageError):
    """The month asked for has not ended and a partial report was not asked for."""


def reportable(month: Month, now: datetime | None = None, partial: bool = False) -> Month:
    """`month` if it can be reported: not in the future, and ended unless `partial` (a partial
    report covers the month only up to when its records were taken)."""
    now = now or datetime.now(UTC)
    if month.start > now:
        raise UsageError(f"month {month} is in the future")
    if month.end > now and not partial:
        raise MonthNotEndedError(
            f"month {month} has not ended (it ends {month.end:%Y-%m-%d %H:%M} UTC): "
            "pass --partial for a report up to the time its records were taken"
        )
    return month


def parse_as_of(text: str | None, now: datetime | None = None) -> datetime | None:
    """`--as-of`: when the records were dumped, ISO 8601 (UTC unless it has an offset), not in the future."""
    if not text:
        return None
    try:
        as_of = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--as-of must be an ISO 8601 time such as 2026-11-02T06:00:00Z, got {text!r}") from None
    as_of = as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC)
    if as_of > (now or datetime.now(UTC)):
        raise UsageError(f"--as-of {text} is in the future")
    return as_of
