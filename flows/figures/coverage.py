"""What a month's inputs observe of it: metrics.json `period`, the window the figures cover, and the
one sentence every output shows of a month observed in part (docs/methodology.md "The month's
observed window").

The window is the job records' (flows/ingest/manifest.py Manifest.observed): from where they begin
(flows/core/months.py observed_start) to the month's end or the dump. A node source whose first
record comes more than NODE_SOURCE_LATE after the window's start is named with it: the faults it
would have told of before then are missing from the attribution, the failures by cause, the fleet's
fault rate and the lemon signals. (A health log that logs only failures may simply have had none:
its first record says where it at least ran, so it is named, not used to shorten the window.)
"""

from __future__ import annotations

from datetime import datetime, timedelta

from flows.core.months import Month
from flows.figures.measured import NODE_INPUTS
from flows.ingest.manifest import Manifest

NODE_SOURCE_LATE = timedelta(days=1)
DEPENDS_ON_NODE_SOURCES = "the attribution, the failures by cause, the fleet's fault rate and the lemon signals"


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
        if kind in NODE_INPUTS and entry.first_record is not None and entry.first_record > start + NODE_SOURCE_LATE
    }
    sentences = [_partial_notice(month, start, end)] + [
        f"{kind}'s first record is of {first:%Y-%m-%d %H:%M} UTC: faults before then are missing from "
        f"{DEPENDS_ON_NODE_SOURCES}."
        for kind, first in late.items()
    ]
    return {
        "start": start.isoformat(),
        "end": end.isoformat(),
        "complete": (start, end) == (month_start, month_end),
        "month_start": month_start.isoformat(),
        "month_end": month_end.isoformat(),
        "observed_days": round((end - start).total_seconds() / 86400, 2),
        "month_days": round(month.days, 2),
        "late_node_sources": {kind: first.isoformat() for kind, first in late.items()},
        "notice": " ".join(s for s in sentences if s) or None,
    }


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
