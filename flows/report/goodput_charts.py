"""The charts of goodput and what costs it, each drawn once for a period (flows/report/charts.py):
the job mix, lost goodput and the lemon nodes (ETTR's: flows/report/ettr_charts.py). Where the month
and the study show a figure in different forms they are different figures with their own names (the
month's job mix by outcome, the study's by outcome and size; the month's every lemon signal, the
study's one signal compared across clusters)."""

from __future__ import annotations

from matplotlib.ticker import FuncFormatter, MaxNLocator

from flows.figures.formats import fmt_num, fmt_pct, label
from flows.report.charts import (
    GREY,
    PALETTE,
    Chart,
    Period,
    bucket_tick,
    chart_text,
    finish_chart,
    legend,
    legend_rows,
    new_figure,
    shown_name,
    sparse_ticks,
)
from flows.report.lemon_panels import (
    LETTERS,
    PANEL_PX,
    SIGNAL_NAMES,
    TITLE_PX,
    legend_entries,
    legend_order,
    lemon_alt,
    nodes_by_value,
    outlier_threshold,
    separate_letters,
    signal_panel,
    signal_value,
    signals_shown,
    threshold_line,
)

JOB_MIX_HEIGHT = 300  # CSS px at WIDTH_PX
MIN_MIX_ATTEMPTS = 10  # the fewest GPU attempts whose shares by outcome are charted (the table counts fewer)


def job_mix_chart(period: Period) -> Chart | None:
    """The month's GPU attempts and GPU-hours by outcome, as shares; none from fewer than
    MIN_MIX_ATTEMPTS attempts, whose shares (one attempt: 100% "open") say less than the table's counts."""
    mix = period.figures.job_mix
    if not mix or period.figures.totals.gpu_attempts < MIN_MIX_ATTEMPTS:  # the job mix is of GPU attempts
        return None
    fig = new_figure(JOB_MIX_HEIGHT)
    ax = fig.add_subplot()
    left = [0.0, 0.0]
    for colour, row in zip(PALETTE, mix, strict=False):  # 12 colours, 11 outcomes
        shares = [row.attempt_share or 0, row.gpu_hours_share or 0]
        ax.barh([1, 0], shares, left=left, color=colour, height=0.6, label=chart_text(label(row.outcome)))
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_yticks([1, 0])
    ax.set_yticklabels(["attempts", "GPU-hours"])
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}%"))
    ax.grid(visible=False)
    fig.legend(loc="outside lower center", frameon=False, ncols=4)
    ax.set_title("Job mix by outcome")
    alt = "Stacked bars of the share of attempts and of GPU-hours by outcome: " + "; ".join(
        f"{label(r.outcome)} {fmt_pct(r.attempt_share)} of attempts, {fmt_pct(r.gpu_hours_share)} of GPU-hours"
        for r in mix
    )
    return finish_chart("job_mix", fig, alt + ".", JOB_MIX_HEIGHT)


def job_mix_by_size_chart(period: Period) -> Chart | None:
    """The paper's Fig. 3: per size bucket, each cluster's share of the range's attempts and of its
    GPU-hours, stacked by outcome (one segment per row of the job mix)."""
    clusters = [s for s in period.series if s.figures.job_mix]
    if not clusters:
        return None
    buckets = sorted({(r.bucket_order, r.size_bucket) for _, f, _ in clusters for r in f.job_mix})
    position = {bucket: i for i, (_, bucket) in enumerate(buckets)}
    outcomes = sorted({r.outcome for _, f, _ in clusters for r in f.job_mix})
    colour = {o: PALETTE[i % len(PALETTE)] for i, o in enumerate(outcomes)}
    height = 90 + 200 * len(clusters) + legend_rows(len(outcomes), 3)
    fig = new_figure(height)
    axes = fig.subplots(len(clusters), 1, sharex=True, squeeze=False).ravel()
    for ax, (name, figures, _) in zip(axes, clusters, strict=True):
        bottoms: dict[tuple[int, float], float] = {}
        rows = sorted(figures.job_mix, key=lambda r: (outcomes.index(r.outcome), r.bucket_order))
        for row in rows:
            for offset, share in ((-0.21, row.attempt_share), (0.21, row.gpu_hours_share)):
                x = position[row.size_bucket] + offset
                bottom = bottoms.get((position[row.size_bucket], offset), 0.0)
                ax.bar(x, share or 0, 0.4, bottom=bottom, color=colour[row.outcome], linewidth=0)
                bottoms[(position[row.size_bucket], offset)] = bottom + (share or 0)
        ax.set_title(shown_name(name), loc="left")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}%"))
        ax.grid(axis="x", visible=False)
    for outcome in outcomes:
        axes[0].bar([0], [0], color=colour[outcome], label=shown_name(label(outcome)))
    sparse_ticks(axes[-1], [bucket_tick(b) for _, b in buckets])
    axes[-1].set_xlabel("GPUs in the job (left bar attempts, right GPU-hours)")
    fig.suptitle("Share of the range's attempts and GPU-hours")
    legend(fig, 3)
    alt = (
        "Stacked bars, one panel per cluster, of the share of the range's attempts (left bar) and GPU-hours "
        "(right bar) in each job-size bucket by outcome. "
        + " ".join(
            f"{name}: the most GPU-hours, {fmt_pct(top.gpu_hours_share)}, in {top.outcome} jobs of "
            f"{top.size_bucket} GPUs; the most attempts, {fmt_pct(most.attempt_share)}, {most.outcome} "
            f"of {most.size_bucket}."
            for name, figures, _ in clusters
            for top in [max(figures.job_mix, key=lambda r: (r.gpu_hours_share or 0, r.bucket_order))]
            for most in [max(figures.job_mix, key=lambda r: (r.attempt_share or 0, r.bucket_order))]
        )
    )
    return finish_chart("job_mix", fig, alt, height)


def lost_goodput_chart(period: Period) -> Chart | None:
    """Lost goodput by job size, each cluster a bar: first-order (the failed jobs' work) solid,
    second-order (jobs preempted for their restarts) hatched on top; a cluster that lost none has no bar."""
    clusters = [s for s in period.series if any(b.lost_gpu_hours for b in s.figures.lost_goodput_by_size)]
    buckets = sorted(
        {(b.bucket_order, b.size_bucket) for _, f, _ in clusters for b in f.lost_goodput_by_size if b.lost_gpu_hours}
    )
    if not buckets:
        return None
    order = [b for _, b in buckets]
    height = 360 + legend_rows(len(clusters) + 1, 3)
    fig = new_figure(height)
    ax = fig.add_subplot()
    width = 0.8 / len(clusters)
    for i, (name, figures, colour) in enumerate(clusters):
        rows = [b for b in figures.lost_goodput_by_size if b.size_bucket in order]
        xs = [order.index(b.size_bucket) - 0.4 + width * (i + 0.5) for b in rows]
        first = [b.first_order_gpu_hours for b in rows]
        ax.bar(xs, first, width * 0.9, color=colour, linewidth=0, label=shown_name(name))
        ax.bar(
            xs,
            [b.second_order_gpu_hours for b in rows],
            width * 0.9,
            bottom=first,
            color="white",
            edgecolor=colour,
            hatch="///",
            linewidth=1.0,
        )
    if any(b.second_order_gpu_hours for _, f, _ in clusters for b in f.lost_goodput_by_size):
        ax.bar([0], [0], color="white", edgecolor=GREY, hatch="///", label="second-order")
    sparse_ticks(ax, [bucket_tick(b) for b in order])
    ax.grid(axis="x", visible=False)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: fmt_num(v)))
    ax.set_xlabel("GPUs in the job")
    ax.set_ylabel("lost GPU-hours")
    ax.set_title("Lost goodput by job size")
    legend(fig, 3)
    alt = (
        "Grouped bars of the GPU-hours lost to infrastructure failures by job size, one bar per cluster, the share from second-order preemptions hatched: "
        + "; ".join(
            f"{name} {fmt_num(f.lost_goodput.lost_gpu_hours)} GPU-hours, {fmt_num(f.lost_goodput.second_order_gpu_hours)} of them second-order"
            for name, f, _ in clusters
        )
    )
    return finish_chart("lost_goodput", fig, alt + ".", height)


LEMON_SIGNAL = "incident_hours"  # the lemon signal compared across clusters (the paper's Fig. 11 panel)


def lemon_signals_chart(period: Period) -> Chart | None:
    """The paper's Fig. 11 for one cluster, drawn for what a reader asks of it: which nodes stand
    out, on which signals, against which threshold. A panel per signal some node had, of how many
    nodes had each value (flows/report/lemon_panels.py); none when no node had any (the section
    says so instead) or the month did not measure its lemons."""
    lemons = period.figures.lemon_nodes
    distribution = lemons.signal_distribution
    signals = signals_shown(distribution)
    if lemons.not_measured or not lemons.fleet_nodes or not signals:
        return None
    candidates = lemons.candidates
    threshold = outlier_threshold(lemons, period.figures.parameters)
    named = candidates[: len(LETTERS)]
    shown = [c for c in candidates[len(LETTERS) :] if any((signal_value(c, s) or 0) > 0 for s in signals)]
    entries = 1 + len(named) + bool(shown) + (threshold is not None and LEMON_SIGNAL in signals)
    height = TITLE_PX + PANEL_PX * len(signals) + legend_rows(entries, 1)
    fig = new_figure(height)
    axes = fig.subplots(len(signals), 1, squeeze=False).ravel()
    letters = []
    for ax, signal in zip(axes, signals, strict=True):
        letters += signal_panel(ax, signal, nodes_by_value(distribution[signal], lemons.fleet_nodes), candidates)
        if signal == LEMON_SIGNAL and threshold is not None:
            threshold_line(ax, threshold, period.figures.parameters.lemon_p_value)
    legend_entries(axes[0], named, len(shown))
    fig.suptitle(f"Lemon signals over {fmt_num(lemons.window_days)} days: nodes by value")
    fig.legend(*legend_order(axes), loc="outside lower center", frameon=False, ncols=1)
    separate_letters(fig, letters)
    return finish_chart("lemon_signals", fig, lemon_alt(lemons, signals, threshold), height)


def lemon_signal_comparison_chart(period: Period) -> Chart | None:
    """The paper's Fig. 11 compared: the distribution (CDF) over each cluster's fleet of one lemon
    signal, each cluster a line (a month draws all its signals: lemon_signals_chart)."""
    clusters = [s for s in period.series if s.figures.lemon_nodes.signal_distribution.get(LEMON_SIGNAL)]
    if not clusters:
        return None
    height = 340 + legend_rows(len(clusters), 2)
    fig = new_figure(height)
    ax = fig.add_subplot()
    for name, figures, colour in clusters:
        lemons = figures.lemon_nodes
        points = lemons.signal_distribution[LEMON_SIGNAL]
        ax.step(
            [v for v, _ in points],
            [s for _, s in points],
            where="post",
            color=colour,
            linewidth=1.75,
            label=f"{shown_name(name)}: {len(lemons.candidates)} candidates",
        )
    ax.set_ylim(0, 1.02)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}%"))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"{SIGNAL_NAMES[LEMON_SIGNAL].lower()} per node")
    ax.set_ylabel("nodes at or below")
    window = clusters[0].figures.lemon_nodes
    ax.set_title(f"{SIGNAL_NAMES[LEMON_SIGNAL]} over {window.window_days} days to {window.window_end[:10]}")
    legend(fig, 2)
    alt = (
        f"Cumulative distribution over each cluster's fleet of {SIGNAL_NAMES[LEMON_SIGNAL].lower()} per node: "
        + "; ".join(
            f"{name} {fmt_num(f.lemon_nodes.fleet_nodes)} nodes up to {fmt_num(f.lemon_nodes.signal_distribution[LEMON_SIGNAL][-1][0])}, "
            f"{len(f.lemon_nodes.candidates)} candidates"
            for name, f, _ in clusters
        )
    )
    return finish_chart("lemon_signals", fig, alt + ".", height)
