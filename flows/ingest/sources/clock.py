"""Local wall-clock times of the logs to UTC, counting the times DST makes doubtful."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

UTC_ZONE = ZoneInfo("UTC")  # a reader's zone when it is called without the site's (its tests)
FUTURE_TOLERANCE = timedelta(days=1)  # clock skew between hosts; later than the dump by more is a bad record
# The earliest date a record may carry unless [ingest] earliest_record says otherwise: Slurm's
# accounting is younger, so anything before is a clock at 1970 or a corrupt time.
EARLIEST_RECORD = date(2000, 1, 1)
# No zone is further from UTC than this (Kiribati +14:00, Baker Island -12:00): a larger offset
# (`+99:99`, `+23:00`) is a corrupt stamp, never applied.
MAX_UTC_OFFSET = timedelta(hours=14)
OFFSET_RULE = "a UTC offset is at most 14:00 either side, its minutes below 60 (no zone has more)"


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

    It also knows which times a record may carry (`earliest`, `latest`: naive UTC): none before the
    earliest valid date, none after the dump's time (`as_of`, else now) plus clock skew.
    """

    def __init__(self, tz: ZoneInfo, earliest: date = EARLIEST_RECORD, as_of: datetime | None = None):
        self.tz = tz
        self.ambiguous = 0
        self.nonexistent = 0
        self.earliest = datetime.combine(earliest, datetime.min.time())
        dumped = as_of.astimezone(UTC) if as_of is not None else datetime.now(UTC)
        self.latest = (dumped + FUTURE_TOLERANCE).replace(tzinfo=None)

    @property
    def _too_early(self) -> str:
        return f"before {self.earliest.date()}, the earliest valid date ([ingest] earliest_record)"

    @property
    def _too_late(self) -> str:
        return f"after the dump time (later than {self.latest.isoformat()} UTC)"

    def implausible(self, utc: datetime | None) -> str | None:
        """Why a record cannot carry the time `utc` (naive or aware UTC), or None when it can."""
        if utc is None:
            return None
        utc = utc.astimezone(UTC).replace(tzinfo=None) if utc.tzinfo else utc
        return self._too_early if utc < self.earliest else self._too_late if utc > self.latest else None

    def checked(self, utc: datetime) -> datetime:
        """`utc` (naive or aware UTC) as aware UTC when a record may carry it, else the ValueError saying
        why not (`implausible`): the one check every health reader applies to the times it reads."""
        if (why := self.implausible(utc)) is not None:
            raise ValueError(why)
        return utc.astimezone(UTC) if utc.tzinfo else utc.replace(tzinfo=UTC)

    def sql_window(self) -> dict[str, datetime | str]:
        """The window of valid times and why a time outside it is refused (`implausible`), as the
        parameters of the SQL that checks it (sql/job_records__problems.sql)."""
        return {
            "earliest": self.earliest,
            "latest": self.latest,
            "too_early": self._too_early,
            "too_late": self._too_late,
        }

    def max_offset_change(self, changes: tuple[timedelta, list[OffsetChange]]) -> timedelta:
        """The largest jump of the UTC offset in `changes`: how far apart two local times read as
        UTC may be out of order when they fall on either side of a DST switch."""
        return max((abs(c.after - c.before) for c in changes[1]), default=timedelta(0))

    def to_utc(self, naive: datetime) -> datetime:
        """The instant of local time `naive` (aware UTC); an aware time is the instant it names. A time
        that no UTC instant can hold (year 1 east of Greenwich) raises ValueError with the window."""
        if naive.tzinfo is not None:
            return _instant(naive, naive, self)
        first = naive.replace(tzinfo=self.tz, fold=0)
        if first.utcoffset() != naive.replace(tzinfo=self.tz, fold=1).utcoffset():
            round_trip = first.astimezone(UTC).astimezone(self.tz).replace(tzinfo=None)
            if round_trip == naive:
                self.ambiguous += 1
            else:
                self.nonexistent += 1
        return _instant(first, naive, self)

    def _offset(self, epoch: int) -> timedelta:
        return datetime.fromtimestamp(epoch, self.tz).utcoffset() or timedelta(0)

    def offset_changes(self, first: datetime, last: datetime) -> tuple[timedelta, list[OffsetChange]]:
        """The offset in force before naive local time `first`, and every change up to `last`."""
        step = 3600  # zones change offset at most once in an hour
        # only the window of valid times can hold a record (a year-1 or year-9999 stamp is refused)
        first = min(max(first, self.earliest), self.latest)
        last = max(min(last, self.latest), first)
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
            counts[kind].append(  # coalesce: DuckDB's count_if of nothing but NULLs is NULL, not 0
                f"coalesce(count_if({column} >= TIMESTAMP '{c.doubtful_from.isoformat()}' "
                f"AND {column} < TIMESTAMP '{c.doubtful_until.isoformat()}'), 0)"
            )
        # count_if(false) when there is no change: an aggregate still (a bare 0 would be a row per row)
        return tuple(" + ".join(parts) if parts else "count_if(false)" for parts in counts.values())

    def count(self, ambiguous: int, nonexistent: int) -> None:
        self.ambiguous += ambiguous
        self.nonexistent += nonexistent


TimeZone = ZoneInfo | LocalClock


def as_clock(tz: TimeZone) -> LocalClock:
    """A LocalClock for `tz` (a bare zone gets the default window of valid times)."""
    return tz if isinstance(tz, LocalClock) else LocalClock(tz)


def offset_problem(offset: timedelta | None) -> str | None:
    """Why a time's written UTC offset is no zone's (OFFSET_RULE), or None."""
    if offset is None or (abs(offset) <= MAX_UTC_OFFSET and not offset.seconds % 60 and not offset.microseconds):
        return None
    return OFFSET_RULE


def _instant(aware: datetime, written: datetime, clock: LocalClock | None) -> datetime:
    """`aware` as UTC, or the ValueError of a time beyond the dates UTC can hold (or the clock's window),
    or of an offset no zone has (OFFSET_RULE)."""
    if written.tzinfo is not None and (problem := offset_problem(written.utcoffset())):
        raise ValueError(problem)
    try:
        return aware.astimezone(UTC)
    except OverflowError:
        early = written.year < 2000
        if clock is not None:
            raise ValueError(clock._too_early if early else clock._too_late) from None
        raise ValueError(f"{written.isoformat()} is beyond the dates a time can hold") from None


def to_utc(naive: datetime, tz: TimeZone) -> datetime:
    """A local time in `tz` as UTC (through a LocalClock when DST cases are to be counted); a time
    with an offset is the instant it names, whatever the zone."""
    if isinstance(tz, LocalClock):
        return tz.to_utc(naive)
    if naive.tzinfo is not None:
        return _instant(naive, naive, None)
    return _instant(naive.replace(tzinfo=tz), naive, None)


def parse_local_timestamp(text: str, tz: TimeZone) -> datetime | None:
    """Slurm prints `YYYY-MM-DDTHH:MM:SS` in the local time of the process (`SLURM_TIME_FORMAT` may add
    an offset, `%z`: then it is that instant); `Unknown`/`None` mean no time. ValueError for anything
    else (a zone name, a time no calendar holds)."""
    if text in ("", "Unknown", "None"):
        return None
    return to_utc(datetime.fromisoformat(text), tz)
