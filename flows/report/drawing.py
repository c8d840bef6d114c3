"""A process that draws a month's charts while this one checks the month (its data-quality suites).

Drawing the charts is most of rendering a report (matplotlib; about 1.5 s of a 1.56M-attempt month),
and the checks are most of what follows a build (Great Expectations; about 4 s). Both are CPU-bound
Python, which threads would run one at a time (the GIL), so the charts go to a process of their own.
A backfill or a refresh of at least MIN_MONTHS months holds one for all of them (`drawing_process`):
the process imports the report's libraries once (about 2 s), while the months are built, and each
month's charts (about 1 s on a small month) are drawn beside its checks. A run of fewer months draws
its own charts: the process would cost it more than it saves.

The charts are drawn from the month's validated document alone (flows/report/render.py
`render_charts`; a pydantic model, pickled to the process): none shows the data-quality results,
so they are the same whether they are drawn before or after the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib's: imported by the drawing process, and by the render stage
    from flows.figures.document import MonthDocument
    from flows.report.charts import Chart

# the months from which a drawing process saves more than its start-up costs (the numbers above)
MIN_MONTHS = 3
_pool: ProcessPoolExecutor | None = None


def _import_report() -> None:
    """The worker's start: import what drawing needs now, not at the first month."""
    import flows.report.render  # noqa: F401


def month_charts(document: MonthDocument) -> dict[str, Chart]:
    """The month's charts from its validated document (flows/figures/read.py month_document)."""
    from flows.report.render import render_charts

    return render_charts(document)


@contextmanager
def drawing_process(months: int) -> Iterator[None]:
    """The `months` reported inside have their charts drawn by one process of their own
    (`charts_ahead`), if they are at least MIN_MONTHS. Nested: the outermost one's process serves."""
    global _pool
    if _pool is not None or months < MIN_MONTHS:
        yield
        return
    # spawn, not fork: this process runs threads (Prefect's, DuckDB's), which a fork would copy mid-work
    _pool = ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn"), initializer=_import_report)
    try:
        yield
    finally:
        pool, _pool = _pool, None
        pool.shutdown(cancel_futures=True)


def charts_ahead(document: Callable[[], MonthDocument]) -> Future[dict[str, Chart]] | None:
    """The month's charts being drawn in the drawing process from its `document()` (made only
    then), or None outside one (drawn when rendered)."""
    return _pool.submit(month_charts, document()) if _pool is not None else None
