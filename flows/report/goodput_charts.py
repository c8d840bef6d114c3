"""The charts of goodput and what costs it, each drawn once for a period (flows/report/charts.py):
the job mix, measured and expected ETTR, lost goodput, and the lemon nodes. Where the month and the
study show a figure in different forms they are different figures with their own names (the
month's job mix by outcome, the study's by outcome and size; the month's E[ETTR] curves at one
restart overhead, the study's grid at three; the month's every lemon signal, the study's one signal
compared across clusters)."""

from __future__ import annotations

from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from flows.figures.formats import fmt_dec, fmt_num, fmt_pct, label
from flows.report.charts import (
    GREY,
    PALETTE,
    Chart,
    Period,
    bucket_tick,
    chart_text,
    finish_chart,
    gpu_tick,
    legend,
    legend_rows,
    log_limits,
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

JOB_MIX_HEIGHT, ETTR_HEIGHT = 300, 460  # CSS px at WIDTH_PX
MIN_MIX_ATTEMPTS = 10  # the fewest GPU attempts whose shares by outcome are charted (the table counts fewer)
LINE_STYLES = ("-", "--", ":")  # the restart overheads u0, 2 u0, 4 u0 of the E[ETTR] grid


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


def expected_ettr_chart(period: Period) -> Chart | None:
    """A month's E[ETTR] against the checkpoint interval at each projection size, with each optimum
    (`expected_ettr`, as the study's grid of several restart overheads is)."""
    metrics = period.figures
    expected = metrics.expected_ettr
    curves = [c for c in expected.curves if c.points]
    if not curves:
        return None
    fig = new_figure(ETTR_HEIGHT)
    ax = fig.add_subplot()
    for colour, curve in zip(PALETTE, curves, strict=False):
        xs = [p.ckpt_minutes for p in curve.points]
        ys = [p.ettr for p in curve.points]
        ax.plot(xs, ys, "-", color=colour, linewidth=1.75, label=f"{fmt_num(curve.gpus)} GPUs")
        invalid = [(p.ckpt_minutes, p.ettr) for p in curve.points if not p.valid]
        valid = [(p.ckpt_minutes, p.ettr) for p in curve.points if p.valid]
        if valid:
            ax.plot(*zip(*valid, strict=True), "o", color=colour, markersize=5.25)
        if invalid:
            ax.plot(*zip(*invalid, strict=True), "o", color=colour, markerfacecolor="white", markersize=5.25)
        if curve.optimal_ckpt_minutes is not None:
            ax.axvline(curve.optimal_ckpt_minutes, color=colour, linestyle="--", linewidth=1.5)
            ax.annotate(f"optimum {fmt_dec(curve.optimal_ckpt_minutes, 1)} min", (curve.optimal_ckpt_minutes, 0),
                        xycoords=("data", "axes fraction"), xytext=(2, 3), textcoords="offset points",
                        rotation=90, color=colour)  # fmt: skip
    configured = metrics.parameters.ckpt_interval_minutes
    ax.axvline(configured, color=GREY, linestyle=":", linewidth=1.75, label=f"configured {fmt_num(configured)} min")
    ax.set_xscale("log")
    minutes = metrics.parameters.ettr_curve_minutes
    ax.xaxis.set_major_locator(FixedLocator(minutes))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(max(0.0, min(p.ettr for c in curves for p in c.points) - 0.02), 1.0)
    ax.set_xlabel("checkpoint interval (minutes)")
    ax.set_ylabel("expected ETTR")
    ax.set_title(f"Expected ETTR, $r_f$ {expected.r_f_definition} = {fmt_dec(expected.r_f)}")
    if any(not p.valid for c in curves for p in c.points):
        ax.plot([], [], "o", color=GREY, markerfacecolor="white", markersize=5.25, label="outside the model's range")
    fig.legend(loc="outside lower center", frameon=False, ncols=2)
    optima = [c for c in curves if c.optimal_ckpt_minutes is not None]
    alt = (
        f"Line chart of expected ETTR against checkpoint interval, {fmt_num(minutes[0])} to {fmt_num(minutes[-1])} min, "
        f"for r_f = {fmt_dec(expected.r_f)}: "
        + "; ".join(
            f"{fmt_num(c.gpus)} GPUs {fmt_dec(c.points[0].ettr, 3)} to {fmt_dec(c.points[-1].ettr, 3)}" for c in curves
        )
        + ". "
        + (
            "Optimal interval: "
            + ", ".join(f"{fmt_dec(c.optimal_ckpt_minutes, 1)} min at {fmt_num(c.gpus)} GPUs" for c in optima)
            + "."
            if optima
            else "No optimum without a checkpoint write time: shorter intervals are always better."
        )
    )
    return finish_chart("expected_ettr", fig, alt, ETTR_HEIGHT)


def measured_ettr_chart(period: Period) -> Chart | None:
    """The paper's Fig. 9: the highest-priority runs' measured mean ETTR by size (95% interval)
    against E[ETTR] at the runs' mean size, each cluster a colour."""
    clusters = [
        (name, rows, colour)
        for name, figures, colour in period.series
        # a row is drawn where it has a mean and a size on the log axis (CPU-only runs have none)
        if (rows := [r for r in figures.ettr_vs_expected.priority if r.mean_ettr is not None and (r.mean_gpus or 0) > 0])
    ]  # fmt: skip
    if not clusters:
        return None
    expected = {name: [(r.mean_gpus, r.expected_ettr) for r in rows if r.expected_ettr is not None] for name, rows, _ in clusters}  # fmt: skip
    height = 400 + legend_rows(len(clusters) + sum(bool(e) for e in expected.values()), 2)
    fig = new_figure(height)
    ax = fig.add_subplot()
    n = len(clusters)
    for i, (name, rows, colour) in enumerate(clusters):
        shift = 2 ** (0.1 * (i - (n - 1) / 2))
        low = [r.mean_ettr - r.mean_lower if r.mean_lower is not None else 0 for r in rows]
        high = [r.mean_upper - r.mean_ettr if r.mean_upper is not None else 0 for r in rows]
        ax.errorbar([r.mean_gpus * shift for r in rows], [r.mean_ettr for r in rows], yerr=[low, high], fmt="o",
                    color=colour, markersize=6, capsize=3, elinewidth=1.25, label=f"{shown_name(name)} measured, 95%")  # fmt: skip
        if expected[name]:
            ax.plot(*zip(*expected[name], strict=True), "--x", color=colour, markersize=7, linewidth=1.5,
                    label=f"{shown_name(name)} E[ETTR]")  # fmt: skip
    ax.set_xscale("log", base=2)
    log_limits(ax, "x", 2)
    ax.xaxis.set_major_formatter(FuncFormatter(gpu_tick))
    ax.set_ylim(top=1.0)
    ax.set_xlabel("mean GPUs of the job runs")
    ax.set_ylabel("ETTR")
    ax.set_title("Highest-priority runs: ETTR against E[ETTR]")
    legend(fig, 2)
    alt = (
        "Chart of the highest-priority long job runs' mean ETTR by size with 95% intervals, beside E[ETTR]: "
        + "; ".join(
            f"{name} "
            + ", ".join(
                f"{fmt_dec(r.mean_ettr, 3)} at {fmt_num(r.mean_gpus)} GPUs (expected {fmt_dec(r.expected_ettr, 3)})"
                for r in rows[-3:]
            )
            for name, rows, _ in clusters
        )
    )
    return finish_chart("ettr", fig, alt + ".", height)


def expected_ettr_grid_chart(period: Period) -> Chart | None:
    """The paper's Fig. 10: E[ETTR] of the projection sizes against the checkpoint interval at each
    restart overhead, one panel per cluster (colour: size; line: overhead)."""
    clusters = [s for s in period.series if any(c.points for c in s.figures.expected_ettr_grid.curves)]
    if not clusters:
        return None
    sizes = sorted({c.gpus for _, f, _ in clusters for c in f.expected_ettr_grid.curves})
    overheads = clusters[0].figures.expected_ettr_grid.restart_overheads_minutes
    height = 70 + 240 * len(clusters) + legend_rows(len(sizes) + len(overheads), 3)
    fig = new_figure(height)
    axes = fig.subplots(len(clusters), 1, sharex=True, squeeze=False).ravel()
    for ax, (name, figures, _) in zip(axes, clusters, strict=True):
        grid = figures.expected_ettr_grid
        for curve in grid.curves:
            if curve.points:
                style = LINE_STYLES[grid.restart_overheads_minutes.index(curve.restart_overhead_minutes) % 3]
                ax.plot([p.ckpt_minutes for p in curve.points], [p.ettr for p in curve.points], style,
                        color=PALETTE[sizes.index(curve.gpus) % len(PALETTE)], linewidth=1.75)  # fmt: skip
        ax.set_title(f"{shown_name(name)}: $r_f$ {grid.r_f_definition} {fmt_dec(grid.r_f)}", loc="left")
        ax.set_xscale("log")
        minutes = [p.ckpt_minutes for p in grid.curves[0].points] or [1]
        ax.xaxis.set_major_locator(FixedLocator(minutes))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_ylabel("E[ETTR]")
    for size in sizes:
        axes[0].plot(
            [], [], "-", color=PALETTE[sizes.index(size) % len(PALETTE)], linewidth=2.5, label=f"{fmt_num(size)} GPUs"
        )
    for style, u0 in zip(LINE_STYLES, overheads, strict=False):
        axes[0].plot([], [], style, color=GREY, linewidth=1.75, label=f"restart {fmt_dec(u0, 0)} min")
    axes[-1].set_xlabel("checkpoint interval (minutes)")
    fig.suptitle("Expected ETTR of large jobs")
    legend(fig, 3)
    alt = (
        "Line charts, one panel per cluster, of expected ETTR against the checkpoint interval for "
        + ", ".join(f"{fmt_num(s)}" for s in sizes)
        + " GPUs at restart overheads of "
        + ", ".join(fmt_dec(u, 0) for u in overheads)
        + " minutes: "
        + "; ".join(
            f"{name} at {fmt_num(c.gpus)} GPUs and {fmt_dec(c.restart_overhead_minutes, 0)} min "
            f"{fmt_dec(c.points[0].ettr, 3)} to {fmt_dec(c.points[-1].ettr, 3)}"
            for name, figures, _ in clusters
            for c in figures.expected_ettr_grid.curves[:1] + figures.expected_ettr_grid.curves[-1:]
            if c.points
        )
    )
    return finish_chart("expected_ettr", fig, alt + ".", height)


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
        ax.bar(xs, [b.second_order_gpu_hours for b in rows], width * 0.9, bottom=first, color="white",
               edgecolor=colour, hatch="///", linewidth=1.0)  # fmt: skip
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
        ax.step([v for v, _ in points], [s for _, s in points], where="post", color=colour, linewidth=1.75,
                label=f"{shown_name(name)}: {len(lemons.candidates)} candidates")  # fmt: skip
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
