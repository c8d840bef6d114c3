"""The typed rows the documents join for the report's tables when read (templates only format: a
join of two lists by key or position is made once, in Python; metrics.json says each number once):
a study's clusters side by side by cause, by size bucket, by month and by projection size
(`SideBySide`: flows/figures/side_by_side.py, StudyDocument.side_by_side), and a month's causes with
what they are compared with (`CausesCompared`: flows/figures/compare.py causes_compared,
MonthDocument.causes_compared)."""

from __future__ import annotations

from pydantic import Field

from flows.figures.figure_types import Change, Count, FlagTest, Rate, RateGap, Real, Strict


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


class SizeSideBySide(Strict):
    class Cell(Strict):
        attempts: Count
        gpu_hours: Real

    size_bucket: str
    clusters: dict[str, Cell]


class MttfCell(Strict):
    """A cluster's observed MTTF at a size bucket, side by side with the others'."""

    mttf_hours: Real | None
    mttf_lower_hours: Real | None
    mttf_upper_hours: Real | None


class MttfSideBySide(Strict):
    size_bucket: str
    clusters: dict[str, MttfCell | None] = Field(description="null: the cluster did not measure MTTF by size")


class ProjectedCell(Strict):
    mttf_hours: Real | None = Field(description="the model MTTF under the r_f the cluster's models use")


class ProjectionSideBySide(Strict):
    gpus: Count
    clusters: dict[str, ProjectedCell | None] = Field(description="null: the cluster did not measure its projections")


class LostCell(Strict):
    """A cluster's lost goodput at a size bucket, side by side with the others'."""

    lost_gpu_hours: Real
    second_order_gpu_hours: Real
    second_order_preemptions: Count


class LostSideBySide(Strict):
    size_bucket: str
    clusters: dict[str, LostCell | None] = Field(description="null: the cluster did not measure lost goodput by size")


class MonthSideBySide(Strict):
    month: str
    clusters: dict[str, Rate | RateGap]


class SideBySide(Strict):
    """The clusters' tables joined by their rows' key (flows/figures/side_by_side.py side_by_side)."""

    unmeasured_everywhere: list[str]
    trend_measured: bool
    job_mix_by_size: list[SizeSideBySide]
    mttf_by_size: list[MttfSideBySide]
    projections: list[ProjectionSideBySide]
    lost_goodput_by_size: list[LostSideBySide]
    monthly: list[MonthSideBySide]
    failures_by_cause: list[CauseSideBySide]
    ettr_by_size: list[EttrSideBySide]
    expected_ettr: list[GridSideBySide]
