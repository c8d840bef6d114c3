"""The templates' Jinja environment and filters: every page, text, email, archive page and
explanation is rendered through it. Light to import (no chart, no CSS inliner): `explain` and
`node` print through it in a fraction of a second."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from flows import TEMPLATES_DIR
from flows.core.escape import printable
from flows.core.words import counted, plural
from flows.figures.compare import distinct_windows
from flows.figures.document import PeriodFigures, Window
from flows.figures.formats import (
    FORMATS,
    fmt_before_end,
    fmt_change,
    fmt_dec,
    fmt_duration,
    fmt_num,
    fmt_pct,
    fmt_seconds,
    fmt_timestamp,
    label,
    month_name,
    month_spans,
    partial_months_notice,
    partial_notice,
)
from flows.figures.repair import MIN_REPAIRS_TO_BOUND
from flows.figures.side_by_side import paper_job_mix_shape


def _unbroken(text: str, names: Iterable[str]) -> Markup:
    """`text` for HTML with each occurrence of `names` in a `<span class="unbroken">`, which a line
    break never falls inside (the longest name first where one contains another)."""
    names = sorted({n for n in names if n}, key=len, reverse=True)
    if not names:
        return escape(printable(text))
    pieces = re.split("(" + "|".join(map(re.escape, names)) + ")", text)
    return Markup("").join(
        Markup('<span class="unbroken">{}</span>').format(printable(p)) if i % 2 else escape(printable(p))
        for i, p in enumerate(pieces)
    )


def _wrapped(text: str, indent: int, start: int | None = None, width: int = 80) -> Markup:
    """Text for a terminal: its unprintable characters escaped (a log's text may hold any), then
    wrapped to `width` columns, its first line starting at column `start` (where the template puts
    it; default `indent`), the lines after it indented by `indent` spaces."""
    import textwrap

    first = " " * (indent if start is None else start)
    lines = textwrap.wrap(
        printable(str(text)), width, initial_indent=first, subsequent_indent=" " * indent, break_on_hyphens=False
    )
    return Markup("\n".join(lines)[len(first) :])


def _candidate_nodes(clusters: Iterable[tuple[str, PeriodFigures]]) -> list[str]:
    """The lemon-node candidates' names of the period's clusters (a summary names them unbroken)."""
    return [c.node for _, figures in clusters for c in figures.lemon_nodes.candidates]


def _distinct_windows(trailing: list[Window]) -> list[Window]:
    """The month's trailing windows the report shows and tests: flows/figures/compare.py
    distinct_windows (the one rule, on the figures) applied to the document's windows."""
    by_months = {window.months: window for window in trailing}
    return [by_months[months] for months in distinct_windows([(w.months, w.months_available) for w in trailing])]


@functools.cache  # one per process: its templates compile once (it reloads one whose file changed)
def environment(templates_dir: Path = TEMPLATES_DIR) -> Environment:
    env = Environment(
        loader=FileSystemLoader(templates_dir),
        autoescape=lambda name: not (name or "").endswith(".txt.j2"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=printable,
    )
    env.filters.update(
        num=fmt_num,
        dec=fmt_dec,
        pct=fmt_pct,
        duration=fmt_duration,
        change=fmt_change,
        unbroken=_unbroken,
        candidate_nodes=_candidate_nodes,
        label=label,
        month_name=month_name,
        partial_notice=partial_notice,
        partial_months_notice=partial_months_notice,
        month_spans=month_spans,
        distinct_windows=_distinct_windows,
        paper_job_mix_shape=paper_job_mix_shape,
        fmt=lambda value, kind: FORMATS[kind](value),
        timestamp=fmt_timestamp,
        seconds=fmt_seconds,
        before_end=fmt_before_end,
        wrapped=_wrapped,
        counted=lambda count, noun, many=None: counted(count, noun, many, number=fmt_num(count)),
        plural=lambda count, noun, many=None: plural(count, noun, many),
    )
    env.globals["min_repairs_to_bound"] = MIN_REPAIRS_TO_BOUND  # below it a cause's repair times are not bounded
    return env
