"""The charts of failures, each drawn once for a period (flows/report/charts.py): the failure rate
month by month, failures by cause (overall and month by month) and the clusters'
rate ratios. A month draws one cluster, its kinds of marks each a colour and larger; the study
each cluster a colour. Nothing is summed here: a chart draws the figures as they are."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from flows.figures.figure_types import MonthRates, MonthRatesByCause
from flows.figures.formats import fmt_dec, fmt_num, label
from flows.figures.period_figures import PeriodFigures
from flows.report.charts import (
    BLUE,
    GREY,
    ORANGE,
    PALETTE,
    TITLE_PT,
    VERMILLION,
    Chart,
    Marks,
    Period,
    Series,
    finish_chart,
    legend,
    legend_rows,
    month_axis,
    new_figure,
    shown_name,
)

TREND_HEIGHT = 340  # CSS px at WIDTH_PX, before a study's legend rows
# by `Period.side_by_side`: one cluster's marks alone, several clusters' side by side
TREND_MARKS = {False: Marks(6, 3.5, 1.25), True: Marks(5, 3, 1.1)}
CAUSE_MARKS = {False: Marks(0, 3.5, 1.25), True: Marks(0, 2.5, 1.0)}  # error bars on bars: no marker


def _trend_lines(period: Period) -> list[tuple[list[MonthRates], str, str, str, str]]:
    """(rows, definition, colour, legend name, name in the alt text) of each line: a cluster alone
    under both definitions, each a colour; side by side each cluster's over all GPU jobs in its colour."""
    if period.side_by_side:
        return [(period.rates_by_month[s.name], "all", s.colour, shown_name(s.name), s.name) for s in period.series]
    rows = period.rates_by_month[period.series[0].name]
    paper = f"jobs > {period.series[0].figures.parameters.paper_min_gpus} GPUs (paper)"
    return [(rows, "paper", BLUE, paper, "paper definition"), (rows, "all", ORANGE, "all GPU jobs", "all GPU jobs")]


def trend_chart(period: Period) -> Chart | None:
    """r_f month by month with 95% intervals over the period's months: a cluster alone under both
    definitions, several clusters each over all GPU jobs; every month labelled, measured or not."""
    months = list(period.months)
    lines = [
        (measured, definition, colour, name, said)
        for rows, definition, colour, name, said in _trend_lines(period)
        if (measured := [r for r in rows if r.month in months and getattr(r, definition).value is not None])
    ]
    if len(months) < 2 or not lines:
        return None
    side_by_side = period.side_by_side
    height = TREND_HEIGHT + (legend_rows(len(lines), 3) if side_by_side else 0)
    fig = new_figure(height)
    ax = fig.add_subplot()
    spread = 0.12 if side_by_side else 0.16  # lines side by side at each month
    marks = TREND_MARKS[side_by_side]
    for i, (rows, definition, colour, name, _) in enumerate(lines):
        offset = spread * (i - (len(lines) - 1) / 2)
        rates = [getattr(r, definition) for r in rows]
        ax.errorbar(
            [months.index(r.month) + offset for r in rows],
            [r.value for r in rates],
            yerr=[[r.value - r.lower for r in rates], [r.upper - r.value for r in rates]],
            fmt="-o",
            color=colour,
            markersize=marks.markersize,
            linewidth=marks.linewidth,
            capsize=marks.capsize,
            elinewidth=marks.elinewidth,
            label=name,
        )
    month_axis(ax, months)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("failures per 1000 node-days")
    ax.set_title(
        "$r_f$ (all GPU jobs) by month, 95% intervals"
        if side_by_side
        else "Node failure rate $r_f$ by month, 95% intervals"
    )
    legend(fig, 3 if side_by_side else 2)
    return finish_chart("failure_rate_trend", fig, _trend_alt(side_by_side, lines, months), height)


def _trend_alt(side_by_side: bool, lines: list, months: list[str]) -> str:
    ends = "; ".join(
        f"{said} {fmt_dec(getattr(rows[0], d).value)} in {rows[0].month}"
        + (f", {fmt_dec(getattr(rows[-1], d).value)} in {rows[-1].month}" if len(rows) > 1 else " only")
        for rows, d, _, _, said in lines
    )
    what = "over all GPU jobs per month, one line per cluster" if side_by_side else "per month, by definition"
    return f"Line chart of the node failure rate {what} with 95% intervals, {months[0]} to {months[-1]}: {ends} failures per 1000 node-days."


def causes_chart(period: Period) -> Chart | None:
    """The paper's Fig. 4: each cause's failure rate with its 95% interval, one bar per cluster (a
    cluster alone's counts beside its causes' names, and the rate over its longest trailing window)."""
    causes = list(period.causes)
    drawn = [s for s in period.series if s.figures.failures_by_cause]  # a cluster without causes has no bar
    if not causes or not drawn:
        return None
    n, side_by_side = len(drawn), period.side_by_side
    height = 130 + (12 + 16 * n) * len(causes) + legend_rows(n, 3) if side_by_side else 150 + 30 * len(causes)
    fig = new_figure(height)
    ax = fig.add_subplot()
    width = 0.8 / n
    marks = CAUSE_MARKS[side_by_side]
    for i, series in enumerate(drawn):
        rows = series.figures.failures_by_cause
        top = [len(causes) - 1 - causes.index(r.category) for r in rows]
        ys = [y + 0.4 - width * (i + 0.5) for y in top] if side_by_side else top
        values = [r.per_1000_node_days or 0 for r in rows]
        ax.barh(
            ys,
            values,
            xerr=[
                [v - (r.per_1000_node_days_lower or 0) for v, r in zip(values, rows, strict=True)],
                [(r.per_1000_node_days_upper or 0) - v for v, r in zip(values, rows, strict=True)],
            ],
            color=series.colour,
            height=width * 0.9 if side_by_side else 0.6,
            error_kw={"elinewidth": marks.elinewidth, "capsize": marks.capsize, "ecolor": "#52606d"},
            label=shown_name(series.name) if side_by_side else f"{period.span}, 95% interval",
        )
    counts: dict[str, int] = {}
    if not side_by_side:  # a cluster alone: its count beside each cause's name, where no mark can cover it
        _cause_marks(ax, drawn[0].figures, causes)
        counts = {r.category: r.failures for r in drawn[0].figures.failures_by_cause}
    ax.set_yticks(range(len(causes)))
    ax.set_yticklabels(
        [shown_name(label(c)) + (f" ({fmt_num(counts[c])})" if c in counts else "") for c in causes[::-1]]
    )
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("failures per 1000 node-days" + (", 95% interval" if side_by_side else ""))
    # over the figure, not the plot: the causes' names with their counts push the plot to the right
    fig.suptitle("Infrastructure failures by cause" + ("" if side_by_side else " (failures)"), fontsize=TITLE_PT)
    legend(fig, 3 if side_by_side else 2)
    return finish_chart("causes", fig, _causes_alt(drawn, side_by_side, period.span), height)


def _cause_marks(ax: Axes, figures: PeriodFigures, causes: list[str]) -> None:
    """A cluster alone: each cause's rate over its longest trailing window where its figures join one
    to the cause (a month's: flows/figures/compare.py causes_compared)."""
    against = figures.causes_compared
    if against is None:  # a period compared with no earlier months (a study's range)
        return
    rows = figures.failures_by_cause
    ys = [len(causes) - 1 - causes.index(c.category) for c in rows]
    windows = [against.by_cause[c.category].trailing for c in rows]
    marked = [(y, window.value) for y, window in zip(ys, windows, strict=True) if window]
    if marked:
        ax.plot(
            [v for _, v in marked],
            [y for y, _ in marked],
            "D",
            color=ORANGE,
            markersize=6,
            label=f"last {against.window_months} months",
        )


def _causes_alt(drawn: list[Series], side_by_side: bool, span: str) -> str:
    if not side_by_side:
        causes = drawn[0].figures.failures_by_cause
        alt = f"Bar chart of {span}'s failure rate by cause: " + "; ".join(
            f"{label(c.category)} {fmt_dec(c.per_1000_node_days)} per 1000 node-days ({fmt_num(c.failures)} failures)"
            for c in causes[:6]
        )
        return alt + (f"; and {len(causes) - 6} more." if len(causes) > 6 else ".")
    return (
        "Grouped bar chart of each cause's failure rate per 1000 node-days, one bar per cluster: "
        + "; ".join(
            f"{s.name}: "
            + ", ".join(f"{label(c.category)} {fmt_dec(c.per_1000_node_days)}" for c in s.figures.failures_by_cause[:4])
            + (f" and {len(s.figures.failures_by_cause) - 4} more" if len(s.figures.failures_by_cause) > 4 else "")
            for s in drawn
        )
        + "."
    )


def _measure(measure: str) -> str:
    """A rate ratio's measure on a chart: r_f set as in the report, a cause's name as a label."""
    return "$r_f$" + shown_name(measure[3:]) if measure.startswith("r_f") else shown_name(label(measure))


def causes_by_month_chart(period: Period) -> Chart | None:
    """The paper's Fig. 5: each cause's failure rate month by month, one panel per cluster (stacked bars)."""
    causes = list(period.causes)
    clusters = [s for s in period.series if period.rates_by_month[s.name]]
    if not causes or not clusters:
        return None
    colour = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(causes)}
    height = 70 + 190 * len(clusters) + legend_rows(len(causes), 2)
    fig = new_figure(height)
    axes = fig.subplots(len(clusters), 1, sharex=True, squeeze=False).ravel()
    months = list(period.months)
    drawn = set()  # the causes with a bar: the legend lists only these
    for ax, series in zip(axes, clusters, strict=True):
        for row in (r for r in period.rates_by_month[series.name] if r.month in months):
            bottom = 0.0
            by_cause = row.by_cause if isinstance(row, MonthRatesByCause) else {}  # a study's months have them
            for cause in causes:  # the same order in every month: a cause keeps its place in the stack
                if (of_month := by_cause.get(cause)) and (value := of_month.per_1000_node_days):
                    ax.bar(months.index(row.month), value, 0.7, bottom=bottom, color=colour[cause], linewidth=0)
                    bottom += value
                    drawn.add(cause)
        ax.set_title(shown_name(series.name), loc="left")
        ax.grid(axis="x", visible=False)
        ax.set_ylabel("per 1000 node-days")
    for cause in (c for c in causes if c in drawn):
        axes[0].bar([0], [0], color=colour[cause], label=shown_name(label(cause)))
    month_axis(axes[-1], months)
    fig.suptitle("Failure rate by cause, month by month")
    legend(fig, 2)
    alt = (
        f"Stacked bars of each cause's failures per 1000 node-days in each month, {months[0]} to {months[-1]}, one "
        "panel per cluster. Causes: " + ", ".join(label(c) for c in causes) + "."
    )
    return finish_chart("causes_by_month", fig, alt, height)


def rate_ratio_chart(period: Period) -> Chart | None:
    """Whether the clusters differ: each pair's rate ratios (r_f and each cause) with their
    intervals on a log scale, those that differ after Holm's correction in vermillion."""
    comparison = period.figures.comparison  # a study's (StudyDocument): its clusters compared pair by pair
    pairs = [(p, [r for r in p.ratios if None not in (r.ratio, r.lower, r.upper) and r.ratio > 0]) for p in comparison]
    pairs = [(p, rows) for p, rows in pairs if rows]
    if not pairs:
        return None
    height = 90 + sum(60 + 26 * len(rows) for _, rows in pairs) + legend_rows(2, 2)
    fig = new_figure(height)
    axes = fig.subplots(len(pairs), 1, squeeze=False, height_ratios=[len(r) + 2 for _, r in pairs]).ravel()
    for ax, (pair, rows) in zip(axes, pairs, strict=True):
        ys = list(range(len(rows)))[::-1]
        for y, r in zip(ys, rows, strict=True):
            colour = VERMILLION if r.flagged else PALETTE[0]
            ax.errorbar(
                [r.ratio],
                [y],
                xerr=[[r.ratio - max(r.lower, 1e-3)], [min(r.upper, 1e3) - r.ratio]],
                fmt="o",
                color=colour,
                markersize=6,
                capsize=3,
                elinewidth=1.25,
            )
        ax.axvline(1, color=GREY, linewidth=1.25)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_yticks(ys)
        ax.set_yticklabels([_measure(r.measure) for r in rows])
        ax.grid(axis="y", visible=False)
        ax.set_title(f"{shown_name(pair.a)} / {shown_name(pair.b)}", loc="left")
    axes[0].plot([], [], "o", color=VERMILLION, label="differ (Holm)")
    axes[0].plot([], [], "o", color=PALETTE[0], label="within chance")
    axes[-1].set_xlabel("rate ratio, 95% interval")
    legend(fig, 2)
    alt = "Rate ratios between the clusters with 95% intervals on a log scale: " + "; ".join(
        f"{p.a} / {p.b} "
        + ", ".join(f"{r.measure} {fmt_dec(r.ratio)}{' (differ)' if r.flagged else ''}" for r in rows[:5])
        + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
        for p, rows in pairs
    )
    return finish_chart("rate_ratios", fig, alt + ".", height)
