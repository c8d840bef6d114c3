"""The typed rows the figures join for the report's tables (templates only format: a join of two
lists by key or position is made here, once, and written into metrics.json): a month's causes
against last month and its trailing window (flows/figures/compare.py causes_compared), and a
study's clusters side by side by cause, by size bucket and by projection size
(flows/figures/study_metrics.py side_by_side).
flows/figures/document.py places them in the documents."""

from __future__ import annotations

from pydantic import Field

from flows.figures.figure_types import Count, Real, Strict


class CausesCompared(Strict):
    """What a month's causes are compared with (each cause's `month_over_month_test` and `trailing`)."""

    window_months: Count | None = Field(
        description="the built months of the longest trailing window, where it holds 2+ and a cause (else null)"
    )
    month_over_month_tests: Count = Field(description="the causes tested against last month (Holm's family)")
    window_tests: Count | None = Field(description="the causes tested against the window (null: no window)")


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
