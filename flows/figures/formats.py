"""The number and name formats the report, its charts and its texts use: counts, decimals,
percentages, durations and changes ("–" for a missing value, never 0), taxonomy names for people,
month names and runs of months."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from flows.core.months import Month

MONTH_NAMES = tuple("January February March April May June July August September October November December".split())


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value)))


def fmt_num(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if _missing(value):
        return "–"
    # a few GPU-seconds are not "0" GPU-hours: a fraction under 1 is "< 1" (a true 0 stays 0)
    return "< 1" if 0 < value < 1 else f"{value:,.0f}"


def fmt_dec(value, digits: int = 2) -> str:
    return "–" if _missing(value) else f"{value:,.{digits}f}"


def fmt_pct(value, digits: int = 1) -> str:
    return "–" if _missing(value) else f"{100 * value:.{digits}f}%"


def fmt_duration(hours) -> str:
    """Hours as the unit that reads best: seconds under a minute (a repair can be that quick, and
    "0 min" would read as none), minutes under an hour, hours under two days, else days."""
    if _missing(hours):
        return "–"
    if hours * 60 < 1:
        return f"{hours * 3600:.0f} s"
    if hours < 1:
        return f"{hours * 60:.0f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    return f"{hours / 24:,.1f} d"


def fmt_change(change) -> str:
    """A relative change as a signed percentage, e.g. "+22%"."""
    return "–" if _missing(change) else f"{100 * change:+.0f}%"


FORMATS = {"num": fmt_num, "dec": fmt_dec, "duration": fmt_duration, "pct": fmt_pct}  # a headline figure's `format`


def label(name: str) -> str:
    """A taxonomy or rule name for people: "gpu_memory" -> "gpu memory"."""
    return str(name).replace("_", " ")


def month_name(month: str) -> str:
    parsed = Month.parse(month)
    return f"{MONTH_NAMES[parsed.start.month - 1]} {parsed.start.year}"


def month_spans(months: Sequence[str]) -> str:
    """Months as their runs of consecutive months: ["2026-01", "2026-02", "2026-03", "2026-05"] ->
    "2026-01 to 2026-03, 2026-05"."""
    spans: list[tuple[Month, Month]] = []
    for month in sorted(map(Month.parse, months)):
        if spans and spans[-1][1].next() == month:
            spans[-1] = (spans[-1][0], month)
        else:
            spans.append((month, month))
    return ", ".join(str(first) if first == last else f"{first} to {last}" for first, last in spans)


# A number and the word after it (its unit, or what it counts: "1,258.7 d", "12 months"), and "<"
# or ">" and the number after it, in a page's text: outside tags, comments and <style>, and across
# the tags between them ("<strong>6.36</strong> per 1000 node-days").
_TAG_OR_STYLE = re.compile(r"(<style\b.*?</style>|<!--.*?-->|<[^>]*>)", re.S | re.I)
# a number standing alone (not the digits ending a name such as rsc2, nor a date's month as in 2026-10)
_NUMBER = r"(?<![\w.,\-])\d(?:[\d,.]*\d)?"
_NUMBER_AND_WORD = re.compile(rf"({_NUMBER}) (?=[^\W\d_]|%)|(&lt;|&gt;) (?=\d)")
_ENDS_IN_A_NUMBER = re.compile(rf"{_NUMBER}$")
_WORD_AFTER_A_TAG = re.compile(r"^ (?=[^\W\d_])")


def keep_units(html: str) -> str:
    """An HTML page with a no-break space between each number and the word that follows it, so that
    a line never ends between them (a unit alone on a phone's next line reads as a figure of its own)."""
    parts = _TAG_OR_STYLE.split(html)
    after_number = False  # the text before the tags in between ended in a digit
    for i in range(0, len(parts), 2):
        text = _NUMBER_AND_WORD.sub(lambda m: (m[1] or m[2]) + "&nbsp;", parts[i])
        if after_number and i and not parts[i - 1].lower().startswith(("<style", "<!--")):
            text = _WORD_AFTER_A_TAG.sub("&nbsp;", text)
        parts[i] = text
        after_number = bool(_ENDS_IN_A_NUMBER.search(text)) if text else after_number
    return "".join(parts)


def partial_notice(period) -> str:
    """What a month's outputs say of the time its figures do not cover: metrics.json `period.notice`
    (flows/figures/coverage.py; a partial month built before it was recorded: its dump time), or ""
    for a month covered whole. `period`: the typed document's, or metrics.json's."""
    fields = period if isinstance(period, dict) else vars(period)
    if fields.get("notice"):
        return fields["notice"]
    if fields["complete"]:
        return ""
    return f"Partial month: up to {fmt_timestamp(fields['end'])} UTC, when its records were taken."


def partial_months_notice(clusters: dict) -> str:
    """A study's header line naming the months its clusters' records observe in part, each with its
    window ("" when every month is whole). `clusters`: the study's, typed or as metrics.json has them."""
    named = []
    for name, cluster in clusters.items():
        months = (cluster.get("partial_months") if isinstance(cluster, dict) else cluster.partial_months) or []
        windows = [
            f"{_field(m, 'month')} ({fmt_timestamp(_field(m, 'start'))} to {fmt_timestamp(_field(m, 'end'))} UTC, "
            f"{_field(m, 'observed_days'):.1f} days)"
            for m in months
        ]
        if windows:
            named.append(f"{name}: {', '.join(windows)}")
    return (
        f"Partial months, whose figures cover only the window their records observe: {'; '.join(named)}."
        if named
        else ""
    )


def _field(row, name: str):
    return row[name] if isinstance(row, dict) else getattr(row, name)


def fmt_seconds(value) -> str:
    """A time to the second, as an explanation shows an event: "2026-10-30 00:00:42"."""
    return "–" if value is None else str(value)[:19].replace("T", " ")


def fmt_before_end(seconds: int) -> str:
    """An event's distance from an attempt's end, in words: "54 s before the end", "2 min 10 s after"."""
    if seconds == 0:
        return "at the end"
    minutes, rest = divmod(abs(seconds), 60)
    span = f"{minutes} min {rest} s" if minutes and rest else f"{minutes} min" if minutes else f"{rest} s"
    return f"{span} before the end" if seconds > 0 else f"{span} after the end"


def fmt_timestamp(value) -> str:
    """A time as the outputs show it, to the minute: "2026-10-30 00:00" (an ISO text or a datetime)."""
    return str(value)[:16].replace("T", " ")
