"""What each landed source observed of its month: the span of its records, kept in the manifest.

The job records' span is where they begin to observe the month (flows/core/months.py
observed_start) and the dump time; a node source's is the time of its first and last record landed
(a health log that logs only failures says nothing of the quiet days before its first: its span is
evidence of where it *at least* ran, shown, never used to shorten the month); a live pull's is the
window it asked for.
"""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa
import pyarrow.compute as pc

# each node-signal table's time of a record
RECORD_TIME = {"node_events": "started_at", "health_checks": "ts", "xid_events": "ts"}


def record_span(tables: dict[str, pa.Table]) -> dict[str, str | None]:
    """`first_record` and `last_record` (ISO 8601, naive UTC; None without records) of one source's landed tables."""
    times = [
        value
        for name, table in tables.items()
        if name in RECORD_TIME and table.num_rows
        for value in pc.min_max(table.column(RECORD_TIME[name])).values()
        if value.is_valid
    ]
    found = [t.as_py() for t in times]
    return {
        "first_record": _text(min(found)) if found else None,
        "last_record": _text(max(found)) if found else None,
    }


def _text(time: datetime) -> str:
    return time.replace(tzinfo=None).isoformat(timespec="seconds")
