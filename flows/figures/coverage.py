"""What a month's inputs observe of it: metrics.json `period`, the window the figures cover, and the
one sentence every output shows of a month observed in part (docs/methodology.md "The month's
observed window").

The window is the job records' (flows/ingest/manifest.py Manifest.observed): from where they begin
(flows/core/months.py observed_start) to the month's end or the dump. A node source whose records
begin late by the same rule, more than NODE_SOURCE_LATE after the window's start, is named with its
first record: the faults it would have told of before then are missing from the attribution, the
failures by cause, the fleet's fault rate and the lemon signals. It is named, not used to shorten
the window: the job records' window is what the exposure figures are measured over.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from flows.core.months import Month, observed_start
from flows.figures.figure_types import Strict
from flows.figures.measured import NODE_INPUTS
from flows.ingest.manifest import LandedInput, Manifest
from flows.warehouse.engines import MartReader, mart_rows

NODE_SOURCE_LATE = timedelta(days=1)
DEPENDS_ON_NODE_SOURCES = "the attribution, the failures by cause, the fleet's fault rate and the lemon signals"


class Period(Strict):
    """metrics.json `period`: the time the month's figures cover (naive UTC), `start`..`end`, the
    window of the calendar month (`month_start`..`month_end`) its job records observe; `complete`
    false for a partial month, with its `notice` in words. The calendar fields are absent in a
    report of schema version 3 built before they were recorded (its window starts at the month's)."""

    start: str
    end: str
    complete: bool
    month_start: str | None = None
    month_end: str | None = None
    observed_days: float | None = None
    month_days: float | None = None
    late_node_sources: dict[str, str] | None = None  # node sources that begin late: kind -> first record
    notice: str | None = None  # what the figures do not cover, as every output shows it


class PartialMonth(Strict):
    """A month of a study's range that its records observe in part: its window (naive UTC)."""

    month: str
    start: str
    end: str
    observed_days: float


def partial_months(con: MartReader, first: Month, last: Month) -> list[dict]:
    """The months built of first..last that their records observe in part (fct_months_built), oldest first."""
    rows = mart_rows(
        con,
        "select month, observed_start, period_end from fct_months_built "
        "where month between ? and ? and (observed_start > month_start or period_end < month_end) order by month",
        [str(first), str(last)],
    )
    return [
        PartialMonth(
            month=row["month"],
            start=row["observed_start"].isoformat(),
            end=row["period_end"].isoformat(),
            observed_days=round((row["period_end"] - row["observed_start"]).total_seconds() / 86400, 2),
        ).model_dump()
        for row in rows
    ]


def observed_period(month: Month, manifest: Manifest) -> dict:
    """metrics.json `period`: the calendar month, and the window of it the figures cover (naive UTC);
    `complete` when that is the whole month. A month observed in part (records that begin late, a
    dump taken before its end) is a partial month in every output, with its `notice`; node sources
    that begin late are named in it (`late_node_sources`: kind -> first record) either way."""
    start, end = manifest.observed(month)
    month_start, month_end = month.start.replace(tzinfo=None), month.end.replace(tzinfo=None)
    late = {
        kind: entry.first_record
        for kind, entry in sorted(manifest.sources.items())
        if kind in NODE_INPUTS and _begins_late(month, entry, start)
    }
    sentences = [_partial_notice(month, start, end)] + [
        f"{kind}'s first record is of {first:%Y-%m-%d %H:%M} UTC: faults before then are missing from "
        f"{DEPENDS_ON_NODE_SOURCES}."
        for kind, first in late.items()
    ]
    return Period(
        start=start.isoformat(),
        end=end.isoformat(),
        complete=(start, end) == (month_start, month_end),
        month_start=month_start.isoformat(),
        month_end=month_end.isoformat(),
        observed_days=round((end - start).total_seconds() / 86400, 2),
        month_days=round(month.days, 2),
        late_node_sources={kind: first.isoformat() for kind, first in late.items()},
        notice=" ".join(s for s in sentences if s) or None,
    ).model_dump()


def _begins_late(month: Month, entry: LandedInput, start: datetime) -> bool:
    """Whether a node source's records begin more than NODE_SOURCE_LATE after `start`, by the job
    records' rule (flows/core/months.py observed_start): at the rate its records come after its
    first, LATE_START_ENDS would have come before it. A log of failures only, a few a month, begins
    late by no such measure."""
    if entry.first_record is None or entry.first_record <= start + NODE_SOURCE_LATE:
        return False
    return observed_start(month, entry.records, entry.first_record, entry.last_record) > start


def _partial_notice(month: Month, start: datetime, end: datetime) -> str | None:
    """The sentence of a partial month: its window and why (None: the whole month)."""
    reasons = []
    if start > month.start.replace(tzinfo=None):
        reasons.append(f"its job records begin {start:%Y-%m-%d %H:%M} UTC (no job ended before then)")
    if end < month.end.replace(tzinfo=None):
        reasons.append(f"its records were taken {end:%Y-%m-%d %H:%M} UTC")
    if not reasons:
        return None
    days = (end - start).total_seconds() / 86400
    return (
        f"Partial month: the figures cover {start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC, "
        f"{days:.1f} of its {month.days:.0f} days: {'; '.join(reasons)}."
    )
