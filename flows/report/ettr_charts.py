"""The charts of ETTR, drawn once for a period (flows/report/charts.py): a month's E[ETTR] curves
at one restart overhead, a study's grid at three, and the ETTR its long job runs measured by size."""

from __future__ import annotations

from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from flows.figures.formats import fmt_dec, fmt_num
from flows.report.charts import (
    GREY,
    PALETTE,
    Chart,
    Period,
    finish_chart,
    gpu_tick,
    legend,
    legend_rows,
    log_limits,
    new_figure,
    shown_name,
)

ETTR_HEIGHT = 460  # CSS px at WIDTH_PX
LINE_STYLES = ("-", "--", ":")  # the restart overheads u0, 2 u0, 4 u0 of the E[ETTR] grid


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
            ax.annotate(
                f"optimum {fmt_dec(curve.optimal_ckpt_minutes, 1)} min",
                (curve.optimal_ckpt_minutes, 0),
                xycoords=("data", "axes fraction"),
                xytext=(2, 3),
                textcoords="offset points",
                rotation=90,
                color=colour,
            )
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
        if (
            rows := [r for r in figures.ettr_vs_expected.priority if r.mean_ettr is not None and (r.mean_gpus or 0) > 0]
        )
    ]
    if not clusters:
        return None
    expected = {
        name: [(r.mean_gpus, r.expected_ettr) for r in rows if r.expected_ettr is not None]
        for name, rows, _ in clusters
    }
    height = 400 + legend_rows(len(clusters) + sum(bool(e) for e in expected.values()), 2)
    fig = new_figure(height)
    ax = fig.add_subplot()
    n = len(clusters)
    for i, (name, rows, colour) in enumerate(clusters):
        shift = 2 ** (0.1 * (i - (n - 1) / 2))
        low = [r.mean_ettr - r.mean_lower if r.mean_lower is not None else 0 for r in rows]
        high = [r.mean_upper - r.mean_ettr if r.mean_upper is not None else 0 for r in rows]
        ax.errorbar(
            [r.mean_gpus * shift for r in rows],
            [r.mean_ettr for r in rows],
            yerr=[low, high],
            fmt="o",
            color=colour,
            markersize=6,
            capsize=3,
            elinewidth=1.25,
            label=f"{shown_name(name)} measured, 95%",
        )
        if expected[name]:
            ax.plot(
                *zip(*expected[name], strict=True),
                "--x",
                color=colour,
                markersize=7,
                linewidth=1.5,
                label=f"{shown_name(name)} E[ETTR]",
            )
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
                ax.plot(
                    [p.ckpt_minutes for p in curve.points],
                    [p.ettr for p in curve.points],
                    style,
                    color=PALETTE[sizes.index(curve.gpus) % len(PALETTE)],
                    linewidth=1.75,
                )
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
