"""The typed rows the figures join for the report's tables (templates only format: a join of two
lists by key or position is made here, once): a study's clusters side by side by cause, by size
bucket and by projection size (flows/figures/study_metrics.py side_by_side, written into its
metrics.json), and a month's causes with what they are compared with (joined when read, from the
figures that say each number once: `CausesCompared`, MonthDocument.causes_compared).
flows/figures/document.py places them in the documents."""

from __future__ import annotations

from pydantic import Field

from flows.figures.figure_types import Change, Count, FlagTest, Rate, Real, Strict


class CauseInWindow(Rate):
    """A cause's rate over a month's trailing window, and this month's flagged test against it."""

    test: FlagTest | None


class ComparedCause(Strict):
    """A month's cause against last month (its change and that change's flagged test) and against its
    longest trailing window (null: no window of two built months or more holds the cause)."""

    month_over_month: Change | None
    month_over_month_test: FlagTest | None
    trailing: CauseInWindow | None


class CausesCompared(Strict):
    """What a month's causes are compared with, joined by category (not written: each number is in
    `month_over_month_by_cause`, `change_flags` and `history.trailing`), and the counts the report's
    heading and note give."""

    window_months: Count | None = Field(
        description="the built months of the longest trailing window, where it holds 2+ and a cause (else null)"
    )
    month_over_month_tests: Count = Field(description="the causes tested against last month (Holm's family)")
    window_tests: Count | None = Field(description="the causes tested against the window (null: no window)")
    by_cause: dict[str, ComparedCause]


class CurveAt(Strict):
    """A curve's E[ETTR] at one checkpoint interval."""

    ettr: Real | None
    valid: bool


class EttrAtInterval(Strict):
    """The month's E[ETTR] curves at one checkpoint interval, in the order of its `curves` (a row of
    its table: an interval a row, a projection size a column)."""

    ckpt_minutes: Real
    curves: list[CurveAt]


class CauseCell(Strict):
    """A cluster's failures of a cause and their rate with its interval, side by side with the others'."""

    failures: Count
    per_1000_node_days: Real | None
    per_1000_node_days_lower: Real | None
    per_1000_node_days_upper: Real | None


class CauseSideBySide(Strict):
    category: str
    clusters: dict[str, CauseCell | None] = Field(description="null: no failure of the cause, or not measured")


class EttrCell(Strict):
    """A cluster's highest-priority runs of a size bucket, side by side with the others'."""

    runs: Count
    mean_ettr: Real | None
    mean_lower: Real | None
    mean_upper: Real | None
    expected_ettr: Real | None
    model_applies: bool


class EttrSideBySide(Strict):
    size_bucket: str
    clusters: dict[str, EttrCell | None] = Field(description="null: no such run, or not measured")


class GridCell(Strict):
    """A cluster's E[ETTR] of a projection size at its configured checkpoint interval."""

    at_interval: list[CurveAt | None] = Field(
        description="at each restart overhead (null: the configured interval is not among ettr_curve_minutes)"
    )
    optimal_ckpt_minutes: Real | None


class GridSideBySide(Strict):
    gpus: Count
    clusters: dict[str, GridCell | None] = Field(description="null: the cluster's r_f (all) not measured")
