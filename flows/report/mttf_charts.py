"""The chart of MTTF by job size (the paper's Fig. 7), drawn once for a period
(flows/report/charts.py): each cluster's observed MTTF with its interval by size bucket, the
model's line and its projections to larger jobs."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from flows.figures.figure_types import MttfBucket
from flows.figures.formats import fmt_dec, fmt_duration, fmt_num
from flows.figures.period import representative_gpus
from flows.report.charts import (
    BLUE,
    GREEN,
    GREY,
    VERMILLION,
    Chart,
    Marks,
    Period,
    Series,
    finish_chart,
    gpu_tick,
    legend,
    legend_rows,
    log_limits,
    new_figure,
    shown_name,
)

MTTF_HEIGHT = 460  # CSS px at WIDTH_PX, before a study's legend rows
NO_LEGEND = "_nolegend_"  # a mark the legend leaves out (matplotlib skips labels starting with "_")
# by `Period.side_by_side`: one cluster's marks alone, several clusters' side by side
MTTF_MARKS = {False: Marks(7, 3.5, 1.5), True: Marks(6, 3, 1.25, linewidth=1.5)}


def _gpus(bucket: MttfBucket) -> int:
    """Where a size bucket is placed on the x axis (flows/figures/period.py representative_gpus)."""
    return representative_gpus(bucket.min_gpus, bucket.max_gpus)


def _model_lines(ax: Axes, series: Series, side_by_side: bool) -> bool:
    """The model MTTF through the bucket and projection sizes: a cluster alone for both r_f
    definitions, each a colour; side by side for the cluster's definition in its colour. Whether it drew one."""
    figures = series.figures
    lines = (
        ((figures.ettr_vs_expected.r_f_definition, series.colour, "--"),)
        if side_by_side
        else (("paper", BLUE, "-"), ("all", GREY, "--"))
    )
    drawn = False
    for definition, colour, style in lines:
        model = sorted(
            [(_gpus(b), getattr(b.model_mttf_hours, definition)) for b in figures.mttf_by_size if _gpus(b) > 0]
            + [(p.gpus, getattr(p, f"mttf_hours_{definition}")) for p in figures.projections]
        )
        model = [(x, y) for x, y in model if y]
        if model:
            rate = fmt_dec(getattr(figures.node_failure_rate, definition).value)
            name = (
                f"{shown_name(series.name)} model, $r_f$ {definition} {rate}"
                if side_by_side
                else f"model, $r_f$ {definition} = {rate}"
            )
            ax.plot(
                *zip(*model, strict=True), style, color=colour, linewidth=MTTF_MARKS[side_by_side].linewidth, label=name
            )
            drawn = True
    return drawn


def _projections(ax: Axes, series: Series, side_by_side: bool) -> list[tuple[int, float]]:
    """The model's MTTF at the projection sizes, as squares (a cluster alone's labelled and annotated)."""
    definition = series.figures.ettr_vs_expected.r_f_definition
    projected = [(p.gpus, getattr(p, f"mttf_hours_{definition}")) for p in series.figures.projections]
    shown = [(x, y) for x, y in projected if y]
    if shown:
        ax.plot(
            *zip(*shown, strict=True),
            "s",
            color=series.colour,
            markerfacecolor="white",
            markersize=7,
            label=NO_LEGEND if side_by_side else "projection",
        )
    for x, y in [] if side_by_side else shown:
        # up and to the right, off the model line (which falls to the right) and clear of an observed
        # point's error bar at the same size (its caps reach CAPSIZE points either side)
        ax.annotate(
            fmt_duration(y),
            (x, y),
            textcoords="offset points",
            xytext=(MTTF_MARKS[False].capsize + 3, 5),
            color=series.colour,
        )
    return shown


def _observations(
    ax: Axes, buckets: list[MttfBucket], series: Series, side_by_side: bool, shift: float
) -> tuple[list, list]:
    """The observed MTTF with its 95% interval, and the lower bound where a size had no failure:
    a cluster alone's in their own colours, side by side in the cluster's. The buckets observed and bounded."""
    observed = [b for b in buckets if b.mttf_hours is not None]
    bounds = [b for b in buckets if b.mttf_hours is None and b.mttf_lower_hours]
    marks = MTTF_MARKS[side_by_side]
    if observed:
        ax.errorbar(
            [_gpus(b) * shift for b in observed],
            [b.mttf_hours for b in observed],
            yerr=[
                [b.mttf_hours - b.mttf_lower_hours for b in observed],
                [b.mttf_upper_hours - b.mttf_hours for b in observed],
            ],
            fmt="o",
            color=series.colour if side_by_side else VERMILLION,
            markersize=marks.markersize,
            capsize=marks.capsize,
            elinewidth=marks.elinewidth,
            label=f"{shown_name(series.name)} observed, 95%" if side_by_side else "observed, 95% interval",
        )
    if bounds:
        ax.plot(
            [_gpus(b) * shift for b in bounds],
            [b.mttf_lower_hours for b in bounds],
            "^",
            color=series.colour if side_by_side else GREEN,
            markerfacecolor="white",
            markersize=marks.markersize + 1,
            label=NO_LEGEND if side_by_side else "no failure: MTTF above",
        )
    return observed, bounds


def _mttf_alt(series: Series, side_by_side: bool, observed: list, bounds: list, shown: list) -> str:
    definition = series.figures.ettr_vs_expected.r_f_definition
    rate = fmt_dec(getattr(series.figures.node_failure_rate, definition).value)
    projects = ", ".join(f"{fmt_duration(y)} at {fmt_num(x)} GPUs" for x, y in shown)
    if side_by_side:
        return (
            f"{series.name}: observed MTTF for {len(observed)} sizes"
            + (f", lower bounds for {len(bounds)} without failures" if bounds else "")
            + (
                f"; its model (r_f {definition} {rate}) projects {projects}"
                if shown
                else "; no model without a failure rate"
            )
        )
    return (
        f"Observed MTTF with 95% intervals for {len(observed)} size{'s' if len(observed) != 1 else ''} with failures"
        + (f", lower bounds for {len(bounds)} without" if bounds else "")
        + "."
        + (f" The model line for r_f {definition} = {rate} projects {projects}." if shown else "")
    )


def _mttf_series(ax: Axes, series: Series, side_by_side: bool, shift: float) -> tuple[bool, str]:
    """One cluster's model line(s), projections, observed MTTF and lower bounds; whether the chart
    has something to show for it (a model line, an observation or a bound), and its alt text."""
    modelled = _model_lines(ax, series, side_by_side)
    shown = _projections(ax, series, side_by_side)
    buckets = [b for b in series.figures.mttf_by_size if _gpus(b) > 0 and b.runtime_hours > 0]
    observed, bounds = _observations(ax, buckets, series, side_by_side, shift)
    return modelled or bool(observed) or bool(bounds), _mttf_alt(series, side_by_side, observed, bounds, shown)


def mttf_chart(period: Period) -> Chart | None:
    """The paper's Fig. 7: observed MTTF by job size with its interval, and the model line through
    the projection sizes, log-log; several clusters side by side at each size."""
    n, side_by_side = len(period.series), period.side_by_side
    height = MTTF_HEIGHT + (legend_rows(2 * n + 2, 2) if side_by_side else 0)
    fig = new_figure(height)
    ax = fig.add_subplot()
    drawn = [
        _mttf_series(ax, series, side_by_side, 2 ** (0.12 * (i - (n - 1) / 2)))
        for i, series in enumerate(period.series)
    ]
    if not any(shown for shown, _ in drawn):
        return None
    if side_by_side:  # the marks every cluster shares, once in the legend in grey
        ax.plot([], [], "s", color=GREY, markerfacecolor="white", markersize=7, label="projection")
        ax.plot([], [], "^", color=GREY, markerfacecolor="white", markersize=7, label="no failure: MTTF above")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    log_limits(ax, "x", 2)
    log_limits(ax, "y")
    ax.xaxis.set_major_formatter(FuncFormatter(gpu_tick))
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("GPUs in the job")
    ax.set_ylabel("MTTF (hours)")
    ax.set_title("Mean time to failure by job size")
    legend(fig, 2)
    alt = "Log-log chart of mean time to failure against job size"
    if side_by_side:
        alt += ", each cluster a colour. " + ". ".join(a for shown, a in drawn if shown) + "."
    else:
        alt += ". " + drawn[0][1]
    return finish_chart("mttf", fig, alt, height)
