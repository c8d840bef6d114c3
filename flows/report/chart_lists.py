"""Which charts a period draws, in the order its page shows them: the period's own charts (those no
figure declares: the comparison's rate ratios, the job mix, the trend, the causes month by month),
then each figure's charts as flows/figures/registry.py declares them, in its order (the pages'
order of the figures' sections).

`DRAWS` is the one place that says which function draws a chart for a month and which for a
study; where a kind of period has no such chart it says so (None): a month compares no clusters,
and draws no causes month by month, no ETTR of its long runs and no lost goodput by size (its
sections show them as tables and words)."""

from __future__ import annotations

from typing import Literal, NamedTuple

from flows.figures.registry import FIGURES
from flows.report.charts import ChartDraw
from flows.report.ettr_charts import expected_ettr_chart, expected_ettr_grid_chart, measured_ettr_chart
from flows.report.failure_charts import causes_by_month_chart, causes_chart, rate_ratio_chart, trend_chart
from flows.report.goodput_charts import (
    job_mix_by_size_chart,
    job_mix_chart,
    lemon_signal_comparison_chart,
    lemon_signals_chart,
    lost_goodput_chart,
)
from flows.report.mttf_charts import mttf_chart
from flows.report.repair_charts import repair_chart

PeriodKind = Literal["month", "study"]


class Draws(NamedTuple):
    """A chart's draw function for each kind of period (None: that kind does not draw it)."""

    month: ChartDraw | None
    study: ChartDraw | None


# the period's own charts, before the figures' charts: no figure of the registry declares them
PERIOD_CHARTS = ("rate_ratios", "job_mix", "failure_rate_trend", "causes_by_month")

# chart name (as drawn: flows/report/charts.py Chart.name) -> what draws it for a month and for a study
DRAWS: dict[str, Draws] = {
    "rate_ratios": Draws(None, rate_ratio_chart),
    "job_mix": Draws(job_mix_chart, job_mix_by_size_chart),
    "failure_rate_trend": Draws(trend_chart, trend_chart),
    "causes_by_month": Draws(None, causes_by_month_chart),
    "mttf": Draws(mttf_chart, mttf_chart),
    "causes": Draws(causes_chart, causes_chart),
    "ettr": Draws(None, measured_ettr_chart),
    "expected_ettr": Draws(expected_ettr_chart, expected_ettr_grid_chart),
    "lost_goodput": Draws(None, lost_goodput_chart),
    "lemon_signals": Draws(lemon_signals_chart, lemon_signal_comparison_chart),
    "repair": Draws(repair_chart, repair_chart),
}


def chart_names() -> tuple[str, ...]:
    """Every chart a period may draw, in page order: the period's own, then the figures' (FIGURES' order)."""
    return (*PERIOD_CHARTS, *(chart for figure in FIGURES for chart in figure.charts))


def charts_of(kind: PeriodKind) -> tuple[ChartDraw, ...]:
    """The draw functions of a kind of period, in page order (those DRAWS gives it)."""
    return tuple(draw for name in chart_names() if (draw := getattr(DRAWS[name], kind)) is not None)
