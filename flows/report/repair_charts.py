"""The node repair times' chart: each cause's median time to repair with its exact 95% interval,
one bar per cluster of the period (flows/figures/repair.py)."""

from __future__ import annotations

from matplotlib.ticker import FuncFormatter

from flows.figures.formats import fmt_dec, fmt_num, fmt_pct, label
from flows.figures.repair import MIN_REPAIRS_TO_BOUND
from flows.report.charts import (
    GREY,
    TITLE_PT,
    Chart,
    Period,
    finish_chart,
    legend,
    legend_rows,
    log_limits,
    new_figure,
    shown_name,
)


def _causes(period: Period) -> list[str]:
    """The causes any cluster repaired, the most repairs first (over the period's clusters)."""
    repairs: dict[str, int] = {}
    for series in period.series:
        for row in series.figures.node_repairs.by_cause:
            if row.repairs:
                repairs[row.category] = repairs.get(row.category, 0) + row.repairs
    return sorted(repairs, key=lambda cause: (-repairs[cause], cause))


def repair_chart(period: Period) -> Chart | None:
    """Median hours from a node's DOWN/DRAIN to its return, by cause, with the median's interval
    (an open mark without a whisker where too few repairs bound it, flows/figures/repair.py), one
    mark per cluster, on a log scale (repairs take minutes to weeks); a single cluster's repairs
    counted beside each cause."""
    causes = _causes(period)
    if not causes:
        return None
    n = len(period.series)
    height = 130 + (14 + 22 * n) * len(causes) + legend_rows(n + 1, 2)  # and the open mark's entry
    fig = new_figure(height)
    ax = fig.add_subplot()
    step = 0.8 / n
    counts: dict[str, int] = {}
    too_few = False
    for i, series in enumerate(period.series):
        rows = {r.category: r for r in series.figures.node_repairs.by_cause if r.repairs}
        drawn = [(len(causes) - 1 - causes.index(c) + 0.4 - step * (i + 0.5), rows[c]) for c in causes if c in rows]
        if not drawn:
            continue
        counts = {c: rows[c].repairs for c in rows} if n == 1 else {}
        bounded = [(y, r) for y, r in drawn if r.median_lower_hours is not None]
        if bounded:
            values = [r.median_hours for _, r in bounded]
            ax.errorbar(
                values,
                [y for y, _ in bounded],
                xerr=[
                    [v - r.median_lower_hours for v, (_, r) in zip(values, bounded, strict=True)],
                    [r.median_upper_hours - v for v, (_, r) in zip(values, bounded, strict=True)],
                ],
                fmt="o",
                color=series.colour,
                markersize=7,
                capsize=3,
                elinewidth=1.5,
                label=f"{shown_name(series.name)}, 95% interval",
            )
        unbounded = [(y, r) for y, r in drawn if r.median_lower_hours is None]
        if unbounded:  # an open mark, no whisker: what the legend's last entry says
            ax.plot(
                [r.median_hours for _, r in unbounded],
                [y for y, _ in unbounded],
                "o",
                color=series.colour,
                markerfacecolor="white",
                markersize=7,
                label="_nolegend_",
            )
            too_few = True
    if too_few:
        ax.plot(
            [],
            [],
            "o",
            color=GREY,
            markerfacecolor="white",
            markersize=7,
            label=f"under {MIN_REPAIRS_TO_BOUND} repairs: too few to bound",
        )
    ax.set_xscale("log")
    log_limits(ax, "x")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.set_yticks(range(len(causes)))
    ax.set_yticklabels(
        [shown_name(label(c)) + (f" ({fmt_num(counts[c])})" if c in counts else "") for c in causes[::-1]]
    )
    ax.set_ylim(-0.6, len(causes) - 0.4)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("median hours to repair")
    # over the figure, not the plot: the causes' names with their counts push the plot to the right
    fig.suptitle("Node repair time by cause" + (" (repairs)" if n == 1 else ""), fontsize=TITLE_PT)
    legend(fig, 2)
    return finish_chart("repair", fig, _alt(period, causes), height)


def _alt(period: Period, causes: list[str]) -> str:
    parts = []
    for series in period.series:
        repairs = series.figures.node_repairs
        availability = repairs.availability.value
        shown = [
            f"{label(r.category)} {fmt_dec(r.median_hours)} h ({fmt_num(r.repairs)} repairs)"
            for r in repairs.by_cause
            if r.repairs
        ]
        parts.append(
            f"{series.name}: "
            + "; ".join(shown[:6])
            + (f"; and {len(shown) - 6} more" if len(shown) > 6 else "")
            + (f"; GPU nodes available {fmt_pct(availability)} of the time" if availability is not None else "")
        )
    return f"Bar chart of the median time to repair a node by cause ({len(causes)} causes). " + ". ".join(parts) + "."
