"""Infrastructure failures, lost GPU-hours and ETTR by account and by partition (mart
fct_period_breakdowns): who lost the most, so an operator knows whom to tell."""

from __future__ import annotations

from flows.figures.figure import Figure
from flows.figures.figure_types import Breakdowns
from flows.figures.period import Mart, Period
from flows.warehouse.engines import MartReader

BREAKDOWNS = Mart(
    "fct_period_breakdowns",
    ("key", "rank", "infra_failures", "lost_gpu_hours", "gpu_hours", "ettr_runs", "mean_ettr"),
)


def unmeasured_breakdowns(breakdowns: dict, _why: str, _gaps: dict[str, str]) -> dict:
    """The breakdowns not measured: each dimension's rows [] and its `not_shown` null; `top` kept."""
    return {
        key: {k: [] if isinstance(v, list) else None for k, v in dimension.items()}
        if isinstance(dimension, dict)
        else dimension
        for key, dimension in breakdowns.items()
    }


def breakdowns(con: MartReader, period: Period, top: int) -> dict:
    """Infrastructure failures, lost GPU-hours and ETTR by account and by partition: the `top` rows
    of each with the most lost GPU-hours (the mart's rank, `rows`), and how many more the mart holds."""
    result: dict = {"top": top}
    for dimension in ("account", "partition"):
        rows = period.rows(con, BREAKDOWNS, order="rank", where="dimension = ?", args=(dimension,))
        shown = [row for row in rows if row["rank"] <= top]
        result[dimension] = {"rows": shown, "not_shown": len(rows) - len(shown)}
    return result


FIGURE = Figure(
    "breakdowns",
    "breakdowns",
    Breakdowns,
    lambda r: breakdowns(r.con, r.period, r.params.breakdown_top),
    (
        "infrastructure failures, lost GPU-hours and ETTR by account and by partition "
        "(`fct_period_breakdowns`): `top` (`breakdown_top`), and `account` and `partition`, each with "
        "`rows[]`, the `top` keys with the most lost GPU-hours (`key`, `rank`: 1 the most, ties by "
        "`infra_failures` then key; `infra_failures`, `lost_gpu_hours` (first order, and the second-order "
        "preemptions charged to the preempted attempt's account and partition, so each dimension adds up "
        "to `lost_goodput.lost_gpu_hours`), `gpu_hours`, `ettr_runs`, `mean_ettr` (the long job runs that "
        "ended this month, whole history, under the run's account and its last attempt's partition; null "
        "without any)), and `not_shown` (the keys beyond `top`). A record without an account or partition "
        "counts under the key `(none)`"
    ),
    named={"breakdowns": "the accounts' and partitions' losses"},
    marts=(BREAKDOWNS.table,),
    needs=("gpu_exposure",),
    keep=("top",),
    unmeasured=unmeasured_breakdowns,
    section="breakdowns",
)
