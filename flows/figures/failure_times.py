"""When failures strike: how long each infrastructure failure's attempt had run when it failed, by
cause, over a period (mart fct_period_time_to_failure; docs/methodology.md "When failures strike").
Start-up faults (a bad node, a wrong configuration) end an attempt in its first minutes; wear-out
later: published fleets report most failures early in a run."""

from __future__ import annotations

from flows.figures.figure import Figure, Reading
from flows.figures.figure_types import Count, Real, Strict
from flows.figures.period import Mart

TIME_TO_FAILURE = Mart(
    "fct_period_time_to_failure",
    (
        *("cause_category", "failures", "within_10_minutes", "within_1_hour", "later"),
        *("share_within_10_minutes", "share_within_1_hour", "median_hours"),
    ),
)


class StrikeTimes(Strict):
    """Infrastructure failures of GPU attempts by the time their attempt had run when it failed
    (null where not measured)."""

    failures: Count | None
    within_10_minutes: Count | None
    within_1_hour: Count | None  # the first 10 minutes included
    later: Count | None
    share_within_10_minutes: Real | None
    share_within_1_hour: Real | None
    median_hours: Real | None


class CauseStrikeTimes(StrikeTimes):
    category: str


class TimeToFailure(Strict):
    all: StrikeTimes
    by_cause: list[CauseStrikeTimes]
    not_measured: str | None = None


NONE_FAILED = {k: 0 for k in ("failures", "within_10_minutes", "within_1_hour", "later")} | {
    "share_within_10_minutes": None,
    "share_within_1_hour": None,
    "median_hours": None,
}


def time_to_failure(reading: Reading) -> dict:
    """The period's failures by how soon they struck: over every cause (`all`) and by cause, most failures first."""
    rows = reading.period.rows(reading.con, TIME_TO_FAILURE, order="failures desc, cause_category")
    every = [row for row in rows if row["cause_category"] is None]
    return {
        "all": {k: v for k, v in every[0].items() if k != "cause_category"} if every else NONE_FAILED,
        "by_cause": [
            {"category": row.pop("cause_category"), **row} for row in rows if row["cause_category"] is not None
        ],
    }


FIGURE = Figure(
    "time_to_failure",
    "when failures strike",
    TimeToFailure,
    time_to_failure,
    (
        'when failures strike (methodology "When failures strike"; `fct_period_time_to_failure`): `all` and '
        "`by_cause[]` (with `category`), each `failures`, `within_10_minutes`, `within_1_hour` (the first 10 "
        "minutes included), `later`, `share_within_10_minutes`, `share_within_1_hour` (null: no failure) and "
        "`median_hours` (the median hours an attempt had run when it failed). Not measured (`no_node_source`, "
        "or GPU exposure) where `failures_by_cause` is not; its numbers null, `by_cause` []"
    ),
    marts=(TIME_TO_FAILURE.table,),
    needs=("node_source", "gpu_exposure"),
    section="time_to_failure",
    since=4,
)
