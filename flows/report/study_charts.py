"""The study's charts: PNGs drawn from the study's figures alone, in the monthly charts' style
(flows/report/charts.py: 560 CSS px wide, text at least 10 px at 343 px, Okabe-Ito colours, byte-identical
for identical figures), each cluster a series in its own colour (PALETTE in the clusters' order).
Each chart draws the rows as they are: stacked bars stack a mart's rows, nothing is summed here.
The figure, ticks and shown names are flows/report/charts.py's and flows/report/render.py's: both reports draw alike."""

from __future__ import annotations

import math
from collections.abc import Callable

from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

from flows.core.escape import printable
from flows.figures.summary import fmt_dec, fmt_duration, fmt_num, fmt_pct, label
from flows.report.charts import (
    GREY,
    PALETTE,
    VERMILLION,
    Chart,
    bucket_gpus,
    chart_text,
    draw_charts,
    finish_chart,
    gpu_tick,
    month_tick,
    new_figure,
)

LEMON_SIGNAL = "incident_hours"  # the lemon signal charted per cluster (the paper's Fig. 11 panel)
LINE_STYLES = ("-", "--", ":")  # the restart overheads u0, 2 u0, 4 u0 of the E[ETTR] grid
LEGEND_ROW_PX = 28  # a legend row at TEXT_PT


def _name(value: str) -> str:
    """A name from the logs or the site on a chart: no control characters, no math mode."""
    return chart_text(printable(value))


def _measure(measure: str) -> str:
    """A rate ratio's measure on a chart: r_f set as in the report, a cause's name as a label."""
    return "$r_f$" + _name(measure[3:]) if measure.startswith("r_f") else _name(label(measure))


def _clusters(study: dict) -> list[tuple[str, dict, str]]:
    """(name, figures, colour) of each cluster, in the study's order."""
    return [(name, figures, PALETTE[i % len(PALETTE)]) for i, (name, figures) in enumerate(study["clusters"].items())]


def _bucket_tick(size_bucket: str) -> str:
    """A size bucket's label, short: "1024" -> "1k", ">8192" -> ">8k"."""
    digits = size_bucket.lstrip(">")
    return size_bucket[: len(size_bucket) - len(digits)] + gpu_tick(int(digits)) if digits.isdigit() else size_bucket


def _sparse_ticks(ax: Axes, labels: list[str], most: int = 8) -> None:
    """Label categorical x positions, at most `most` of them (a phone-width chart fits 8)."""
    step = math.ceil(len(labels) / most)
    ticks = list(range(0, len(labels), step))
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels([labels[i] for i in ticks])


def _legend(fig, ncols: int) -> None:
    fig.legend(loc="outside lower center", frameon=False, ncols=ncols)


def _legend_rows(entries: int, ncols: int) -> int:
    return math.ceil(entries / ncols) * LEGEND_ROW_PX


def job_mix_chart(study: dict) -> Chart | None:
    """The paper's Fig. 3: per size bucket, each cluster's share of the range's attempts and of its
    GPU-hours, stacked by outcome (one segment per row of the job mix)."""
    clusters = [(n, f, c) for n, f, c in _clusters(study) if f["job_mix"]]
    if not clusters:
        return None
    buckets = sorted({(r["bucket_order"], r["size_bucket"]) for _, f, _ in clusters for r in f["job_mix"]})
    position = {bucket: i for i, (_, bucket) in enumerate(buckets)}
    outcomes = sorted({r["outcome"] for _, f, _ in clusters for r in f["job_mix"]})
    colour = {o: PALETTE[i % len(PALETTE)] for i, o in enumerate(outcomes)}
    height = 90 + 200 * len(clusters) + _legend_rows(len(outcomes), 3)
    fig = new_figure(height)
    axes = fig.subplots(len(clusters), 1, sharex=True, squeeze=False).ravel()
    for ax, (name, figures, _) in zip(axes, clusters, strict=True):
        bottoms: dict[tuple[int, float], float] = {}
        rows = sorted(figures["job_mix"], key=lambda r: (outcomes.index(r["outcome"]), r["bucket_order"]))
        for row in rows:
            for offset, share in ((-0.21, row["attempt_share"]), (0.21, row["gpu_hours_share"])):
                x = position[row["size_bucket"]] + offset
                bottom = bottoms.get((position[row["size_bucket"]], offset), 0.0)
                ax.bar(x, share or 0, 0.4, bottom=bottom, color=colour[row["outcome"]], linewidth=0)
                bottoms[(position[row["size_bucket"]], offset)] = bottom + (share or 0)
        ax.set_title(_name(name), loc="left")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}%"))
        ax.grid(axis="x", visible=False)
    for outcome in outcomes:
        axes[0].bar([0], [0], color=colour[outcome], label=_name(label(outcome)))
    _sparse_ticks(axes[-1], [_bucket_tick(b) for _, b in buckets])
    axes[-1].set_xlabel("GPUs in the job (left bar attempts, right GPU-hours)")
    fig.suptitle("Share of the range's attempts and GPU-hours")
    _legend(fig, 3)
    alt = (
        "Stacked bars, one panel per cluster, of the share of the range's attempts (left bar) and GPU-hours "
        "(right bar) in each job-size bucket by outcome. "
        + " ".join(
            f"{name}: the most GPU-hours, {fmt_pct(top['gpu_hours_share'])}, in {top['outcome']} jobs of "
            f"{top['size_bucket']} GPUs; the most attempts, {fmt_pct(most['attempt_share'])}, {most['outcome']} "
            f"of {most['size_bucket']}."
            for name, figures, _ in clusters
            for top in [max(figures["job_mix"], key=lambda r: (r["gpu_hours_share"] or 0, r["bucket_order"]))]
            for most in [max(figures["job_mix"], key=lambda r: (r["attempt_share"] or 0, r["bucket_order"]))]
        )
    )
    return finish_chart("job_mix", fig, alt, height)


def _model_definition(figures: dict) -> str:
    return figures["ettr_vs_expected"]["r_f_definition"]


def mttf_chart(study: dict) -> Chart | None:
    """The paper's Fig. 7: observed MTTF by job size with its interval, and each cluster's model
    line through the projection sizes, log-log."""
    height = 460 + _legend_rows(2 * len(study["clusters"]) + 2, 2)
    fig = new_figure(height)
    ax = fig.add_subplot()
    drawn, alt_parts = False, []
    n = len(study["clusters"])
    for i, (name, figures, colour) in enumerate(_clusters(study)):
        shift = 2 ** (0.12 * (i - (n - 1) / 2))  # clusters side by side at each size
        definition = _model_definition(figures)
        rate = figures["node_failure_rate"][definition]["value"]
        buckets = [b for b in figures["mttf_by_size"] if bucket_gpus(b) > 0 and b["runtime_hours"] > 0]
        model = sorted(
            [(bucket_gpus(b), b["model_mttf_hours"][definition]) for b in figures["mttf_by_size"] if bucket_gpus(b) > 0]
            + [(p["gpus"], p[f"mttf_hours_{definition}"]) for p in figures["projections"]]
        )
        model = [(x, y) for x, y in model if y]
        if model:
            ax.plot(*zip(*model, strict=True), "--", color=colour, linewidth=1.5,
                    label=f"{_name(name)} model, $r_f$ {definition} {fmt_dec(rate)}")  # fmt: skip
            drawn = True
        shown = [
            (p["gpus"], p[f"mttf_hours_{definition}"]) for p in figures["projections"] if p[f"mttf_hours_{definition}"]
        ]
        if shown:
            ax.plot(*zip(*shown, strict=True), "s", color=colour, markerfacecolor="white", markersize=7)
        observed = [b for b in buckets if b["mttf_hours"] is not None]
        bounds = [b for b in buckets if b["mttf_hours"] is None and b["mttf_lower_hours"]]
        if observed:
            ax.errorbar(
                [bucket_gpus(b) * shift for b in observed],
                [b["mttf_hours"] for b in observed],
                yerr=[
                    [b["mttf_hours"] - b["mttf_lower_hours"] for b in observed],
                    [b["mttf_upper_hours"] - b["mttf_hours"] for b in observed],
                ],
                fmt="o", color=colour, markersize=6, capsize=3, elinewidth=1.25,
                label=f"{_name(name)} observed, 95%",
            )  # fmt: skip
            drawn = True
        if bounds:
            ax.plot([bucket_gpus(b) * shift for b in bounds], [b["mttf_lower_hours"] for b in bounds], "^", color=colour,
                    markerfacecolor="white", markersize=7)  # fmt: skip
        alt_parts.append(
            f"{name}: observed MTTF for {len(observed)} sizes"
            + (f", lower bounds for {len(bounds)} without failures" if bounds else "")
            + (
                f"; its model (r_f {definition} {fmt_dec(rate)}) projects "
                + ", ".join(f"{fmt_duration(y)} at {fmt_num(x)} GPUs" for x, y in shown)
                if shown
                else "; no model without a failure rate"
            )
        )
    if not drawn:
        return None
    ax.plot([], [], "s", color=GREY, markerfacecolor="white", markersize=7, label="projection")
    ax.plot([], [], "^", color=GREY, markerfacecolor="white", markersize=7, label="no failure: MTTF above")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(gpu_tick))
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("GPUs in the job")
    ax.set_ylabel("MTTF (hours)")
    ax.set_title("Mean time to failure by job size")
    _legend(fig, 2)
    alt = "Log-log chart of mean time to failure against job size, each cluster a colour. " + ". ".join(alt_parts)
    return finish_chart("mttf", fig, alt + ".", height)


def causes_chart(study: dict) -> Chart | None:
    """The paper's Fig. 4: each cause's failure rate in each cluster with its interval (grouped bars)."""
    causes = study["causes"]
    if not causes:
        return None
    clusters = _clusters(study)
    band = 12 + 16 * len(clusters)
    height = 130 + band * len(causes) + _legend_rows(len(clusters), 3)
    fig = new_figure(height)
    ax = fig.add_subplot()
    width = 0.8 / len(clusters)
    for i, (name, figures, colour) in enumerate(clusters):
        rows = {c["cause_category"]: c for c in figures["failures_by_cause"]}
        ys = [len(causes) - 1 - causes.index(c) + 0.4 - width * (i + 0.5) for c in rows]
        values = [r["rate_value"] or 0 for r in rows.values()]
        ax.barh(
            ys,
            values,
            height=width * 0.9,
            xerr=[
                [v - (r["rate_lower"] or 0) for v, r in zip(values, rows.values(), strict=True)],
                [(r["rate_upper"] or 0) - v for v, r in zip(values, rows.values(), strict=True)],
            ],
            color=colour,
            error_kw={"elinewidth": 1.0, "capsize": 2.5, "ecolor": "#52606d"},
            label=_name(name),
        )
    ax.set_yticks(range(len(causes)))
    ax.set_yticklabels([_name(label(c)) for c in causes[::-1]])
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("failures per 1000 node-days, 95% interval")
    ax.set_title("Infrastructure failures by cause")
    _legend(fig, 3)
    alt = "Grouped bar chart of each cause's failure rate per 1000 node-days, one bar per cluster: " + "; ".join(
        f"{name}: "
        + ", ".join(
            f"{label(c['cause_category'])} {fmt_dec(c['rate_value'])}" for c in figures["failures_by_cause"][:4]
        )
        + (f" and {len(figures['failures_by_cause']) - 4} more" if len(figures["failures_by_cause"]) > 4 else "")
        for name, figures, _ in clusters
    )
    return finish_chart("causes", fig, alt + ".", height)


def _month_axis(ax: Axes, months: list[str]) -> None:
    step = math.ceil(len(months) / 7)  # at most 7 month labels, the latest always labelled
    ticks = range(len(months) - 1, -1, -step)[::-1]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels([month_tick(months[i]) for i in ticks])


def trend_chart(study: dict) -> Chart | None:
    """r_f (all GPU jobs) month by month, each cluster a line with its intervals."""
    clusters = [(n, f, c) for n, f, c in _clusters(study) if len(f["monthly"]) > 1]
    if not clusters:
        return None
    height = 340 + _legend_rows(len(clusters), 3)
    fig = new_figure(height)
    ax = fig.add_subplot()
    months = [row["month"] for row in clusters[0][1]["monthly"]]
    n = len(clusters)
    for i, (name, figures, colour) in enumerate(clusters):
        offset = 0.12 * (i - (n - 1) / 2)
        points = [
            (months.index(r["month"]) + offset, r["all"]) for r in figures["monthly"] if r["all"]["value"] is not None
        ]
        if not points:
            continue
        ax.errorbar(
            [x for x, _ in points],
            [r["value"] for _, r in points],
            yerr=[[r["value"] - r["lower"] for _, r in points], [r["upper"] - r["value"] for _, r in points]],
            fmt="-o", color=colour, markersize=5, linewidth=1.75, capsize=3, elinewidth=1.1, label=_name(name),
        )  # fmt: skip
    _month_axis(ax, months)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("failures per 1000 node-days")
    ax.set_title("$r_f$ (all GPU jobs) by month, 95% intervals")
    _legend(fig, 3)
    alt = (
        f"Line chart of the node failure rate over all GPU jobs per month, {months[0]} to {months[-1]}, one line per "
        "cluster with 95% intervals: "
        + "; ".join(
            f"{name} {fmt_dec(f['monthly'][0]['all']['value'])} in {f['monthly'][0]['month']}, "
            f"{fmt_dec(f['monthly'][-1]['all']['value'])} in {f['monthly'][-1]['month']}"
            for name, f, _ in clusters
        )
        + " failures per 1000 node-days."
    )
    return finish_chart("failure_rate_trend", fig, alt, height)


def causes_by_month_chart(study: dict) -> Chart | None:
    """The paper's Fig. 5: each cause's failure rate month by month, one panel per cluster (stacked bars)."""
    causes = study["causes"]
    clusters = [(n, f, c) for n, f, c in _clusters(study) if f["monthly"]]
    if not causes or not clusters:
        return None
    colour = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(causes)}
    height = 70 + 190 * len(clusters) + _legend_rows(len(causes), 2)
    fig = new_figure(height)
    axes = fig.subplots(len(clusters), 1, sharex=True, squeeze=False).ravel()
    months = [row["month"] for row in clusters[0][1]["monthly"]]
    for ax, (name, figures, _) in zip(axes, clusters, strict=True):
        for row in figures["monthly"]:
            bottom = 0.0
            for cause in causes:  # the same order in every month: a cause keeps its place in the stack
                if cause in row["by_cause"]:
                    value = row["by_cause"][cause]["per_1000_node_days"] or 0
                    ax.bar(months.index(row["month"]), value, 0.7, bottom=bottom, color=colour[cause], linewidth=0)
                    bottom += value
        ax.set_title(_name(name), loc="left")
        ax.grid(axis="x", visible=False)
        ax.set_ylabel("per 1000 node-days")
    for cause in causes:
        axes[0].bar([0], [0], color=colour[cause], label=_name(label(cause)))
    _month_axis(axes[-1], months)
    fig.suptitle("Failure rate by cause, month by month")
    _legend(fig, 2)
    alt = (
        f"Stacked bars of each cause's failures per 1000 node-days in each month, {months[0]} to {months[-1]}, one "
        "panel per cluster. Causes: " + ", ".join(label(c) for c in causes) + "."
    )
    return finish_chart("causes_by_month", fig, alt, height)


def ettr_chart(study: dict) -> Chart | None:
    """The paper's Fig. 9: the highest-priority runs' measured mean ETTR by size (95% interval)
    against E[ETTR] at the runs' mean size, each cluster a colour."""
    clusters = [(n, f, c) for n, f, c in _clusters(study) if f["ettr_vs_expected"]["priority"]]
    if not clusters:
        return None
    height = 400 + _legend_rows(2 * len(clusters), 2)
    fig = new_figure(height)
    ax = fig.add_subplot()
    n = len(clusters)
    for i, (name, figures, colour) in enumerate(clusters):
        shift = 2 ** (0.1 * (i - (n - 1) / 2))
        rows = figures["ettr_vs_expected"]["priority"]
        low = [r["mean_ettr"] - r["mean_lower"] if r["mean_lower"] is not None else 0 for r in rows]
        high = [r["mean_upper"] - r["mean_ettr"] if r["mean_upper"] is not None else 0 for r in rows]
        ax.errorbar([r["mean_gpus"] * shift for r in rows], [r["mean_ettr"] for r in rows], yerr=[low, high], fmt="o",
                    color=colour, markersize=6, capsize=3, elinewidth=1.25, label=f"{_name(name)} measured, 95%")  # fmt: skip
        expected = [(r["mean_gpus"], r["expected_ettr"]) for r in rows if r["expected_ettr"] is not None]
        if expected:
            ax.plot(*zip(*expected, strict=True), "--x", color=colour, markersize=7, linewidth=1.5,
                    label=f"{_name(name)} E[ETTR]")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(gpu_tick))
    ax.set_ylim(top=1.0)
    ax.set_xlabel("mean GPUs of the job runs")
    ax.set_ylabel("ETTR")
    ax.set_title("Highest-priority runs: ETTR against E[ETTR]")
    _legend(fig, 2)
    alt = (
        "Chart of the highest-priority long job runs' mean ETTR by size with 95% intervals, beside E[ETTR]: "
        + "; ".join(
            f"{name} "
            + ", ".join(
                f"{fmt_dec(r['mean_ettr'], 3)} at {fmt_num(r['mean_gpus'])} GPUs (expected {fmt_dec(r['expected_ettr'], 3)})"
                for r in figures["ettr_vs_expected"]["priority"][-3:]
            )
            for name, figures, _ in clusters
        )
    )
    return finish_chart("ettr", fig, alt + ".", height)


def expected_ettr_chart(study: dict) -> Chart | None:
    """The paper's Fig. 10: E[ETTR] of the projection sizes against the checkpoint interval at each
    restart overhead, one panel per cluster (colour: size; line: overhead)."""
    clusters = [
        (n, f, c) for n, f, c in _clusters(study) if any(c["points"] for c in f["expected_ettr_grid"]["curves"])
    ]
    if not clusters:
        return None
    sizes = sorted({c["gpus"] for _, f, _ in clusters for c in f["expected_ettr_grid"]["curves"]})
    overheads = clusters[0][1]["expected_ettr_grid"]["restart_overheads_minutes"]
    height = 70 + 240 * len(clusters) + _legend_rows(len(sizes) + len(overheads), 3)
    fig = new_figure(height)
    axes = fig.subplots(len(clusters), 1, sharex=True, squeeze=False).ravel()
    for ax, (name, figures, _) in zip(axes, clusters, strict=True):
        grid = figures["expected_ettr_grid"]
        for curve in grid["curves"]:
            if curve["points"]:
                style = LINE_STYLES[grid["restart_overheads_minutes"].index(curve["restart_overhead_minutes"]) % 3]
                ax.plot([p["ckpt_minutes"] for p in curve["points"]], [p["ettr"] for p in curve["points"]], style,
                        color=PALETTE[sizes.index(curve["gpus"]) % len(PALETTE)], linewidth=1.75)  # fmt: skip
        ax.set_title(f"{_name(name)}: $r_f$ {grid['r_f_definition']} {fmt_dec(grid['r_f'])}", loc="left")
        ax.set_xscale("log")
        minutes = [p["ckpt_minutes"] for p in grid["curves"][0]["points"]] or [1]
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
    _legend(fig, 3)
    alt = (
        "Line charts, one panel per cluster, of expected ETTR against the checkpoint interval for "
        + ", ".join(f"{fmt_num(s)}" for s in sizes)
        + " GPUs at restart overheads of "
        + ", ".join(fmt_dec(u, 0) for u in overheads)
        + " minutes: "
        + "; ".join(
            f"{name} at {fmt_num(c['gpus'])} GPUs and {fmt_dec(c['restart_overhead_minutes'], 0)} min "
            f"{fmt_dec(c['points'][0]['ettr'], 3)} to {fmt_dec(c['points'][-1]['ettr'], 3)}"
            for name, figures, _ in clusters
            for c in figures["expected_ettr_grid"]["curves"][:1] + figures["expected_ettr_grid"]["curves"][-1:]
            if c["points"]
        )
    )
    return finish_chart("expected_ettr", fig, alt + ".", height)


def lemon_signals_chart(study: dict) -> Chart | None:
    """The paper's Fig. 11: the fleet's distribution (CDF) of a lemon signal, each cluster a line."""
    clusters = [(n, f, c) for n, f, c in _clusters(study) if f["lemon_nodes"]["signal_distribution"].get(LEMON_SIGNAL)]
    if not clusters:
        return None
    height = 340 + _legend_rows(len(clusters), 2)
    fig = new_figure(height)
    ax = fig.add_subplot()
    for name, figures, colour in clusters:
        lemons = figures["lemon_nodes"]
        points = lemons["signal_distribution"][LEMON_SIGNAL]
        ax.step([v for v, _ in points], [s for _, s in points], where="post", color=colour, linewidth=1.75,
                label=f"{_name(name)}: {len(lemons['candidates'])} candidates")  # fmt: skip
    ax.set_ylim(0, 1.02)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}%"))
    ax.set_xlabel(f"{label(LEMON_SIGNAL)} per node")
    ax.set_ylabel("nodes at or below")
    window = clusters[0][1]["lemon_nodes"]
    ax.set_title(f"Lemon signal over {window['window_days']} days to {window['window_end'][:10]}")
    _legend(fig, 2)
    alt = f"Cumulative distribution over each cluster's fleet of {label(LEMON_SIGNAL)} per node: " + "; ".join(
        f"{name} {fmt_num(f['lemon_nodes']['fleet_nodes'])} nodes up to {fmt_num(f['lemon_nodes']['signal_distribution'][LEMON_SIGNAL][-1][0])}, "
        f"{len(f['lemon_nodes']['candidates'])} candidates"
        for name, f, _ in clusters
    )
    return finish_chart("lemon_signals", fig, alt + ".", height)


def lost_goodput_chart(study: dict) -> Chart | None:
    """Lost goodput by job size, each cluster a bar: first-order (the failed jobs' work) solid,
    second-order (jobs preempted for their restarts) hatched on top."""
    clusters = _clusters(study)
    buckets = sorted(
        {
            (b["bucket_order"], b["size_bucket"])
            for _, f, _ in clusters
            for b in f["lost_goodput_by_size"]
            if b["lost_gpu_hours"]
        }
    )
    if not buckets:
        return None
    order = [b for _, b in buckets]
    height = 360 + _legend_rows(len(clusters) + 1, 3)
    fig = new_figure(height)
    ax = fig.add_subplot()
    width = 0.8 / len(clusters)
    for i, (name, figures, colour) in enumerate(clusters):
        rows = [b for b in figures["lost_goodput_by_size"] if b["size_bucket"] in order]
        xs = [order.index(b["size_bucket"]) - 0.4 + width * (i + 0.5) for b in rows]
        first = [b["first_order_gpu_hours"] for b in rows]
        ax.bar(xs, first, width * 0.9, color=colour, linewidth=0, label=_name(name))
        ax.bar(xs, [b["second_order_gpu_hours"] for b in rows], width * 0.9, bottom=first, color="white",
               edgecolor=colour, hatch="///", linewidth=1.0)  # fmt: skip
    ax.bar([0], [0], color="white", edgecolor=GREY, hatch="///", label="second-order")
    _sparse_ticks(ax, [_bucket_tick(b) for b in order])
    ax.grid(axis="x", visible=False)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: fmt_num(v)))
    ax.set_xlabel("GPUs in the job")
    ax.set_ylabel("lost GPU-hours")
    ax.set_title("Lost goodput by job size")
    _legend(fig, 3)
    alt = (
        "Grouped bars of the GPU-hours lost to infrastructure failures by job size, one bar per cluster, the share from second-order preemptions hatched: "
        + "; ".join(
            f"{name} {fmt_num(f['totals']['lost_gpu_hours'])} GPU-hours, {fmt_num(f['totals']['second_order_gpu_hours'])} of them second-order"
            for name, f, _ in clusters
        )
    )
    return finish_chart("lost_goodput", fig, alt + ".", height)


def rate_ratio_chart(study: dict) -> Chart | None:
    """Whether the clusters differ: each pair's rate ratios (r_f and each cause) with their
    intervals on a log scale, those that differ after Holm's correction in vermillion."""
    pairs = [(p, [r for r in p["ratios"] if None not in (r["ratio"], r["lower"], r["upper"]) and r["ratio"] > 0])
             for p in study["comparison"]]  # fmt: skip
    pairs = [(p, rows) for p, rows in pairs if rows]
    if not pairs:
        return None
    height = 90 + sum(60 + 26 * len(rows) for _, rows in pairs) + _legend_rows(2, 2)
    fig = new_figure(height)
    axes = fig.subplots(len(pairs), 1, squeeze=False, height_ratios=[len(r) + 2 for _, r in pairs]).ravel()
    for ax, (pair, rows) in zip(axes, pairs, strict=True):
        ys = list(range(len(rows)))[::-1]
        for y, r in zip(ys, rows, strict=True):
            colour = VERMILLION if r["flagged"] else PALETTE[0]
            ax.errorbar([r["ratio"]], [y], xerr=[[r["ratio"] - max(r["lower"], 1e-3)], [min(r["upper"], 1e3) - r["ratio"]]],
                        fmt="o", color=colour, markersize=6, capsize=3, elinewidth=1.25)  # fmt: skip
        ax.axvline(1, color=GREY, linewidth=1.25)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_yticks(ys)
        ax.set_yticklabels([_measure(r["measure"]) for r in rows])
        ax.grid(axis="y", visible=False)
        ax.set_title(f"{_name(pair['a'])} / {_name(pair['b'])}", loc="left")
    axes[0].plot([], [], "o", color=VERMILLION, label="differ (Holm)")
    axes[0].plot([], [], "o", color=PALETTE[0], label="within chance")
    axes[-1].set_xlabel("rate ratio, 95% interval")
    _legend(fig, 2)
    alt = "Rate ratios between the clusters with 95% intervals on a log scale: " + "; ".join(
        f"{p['a']} / {p['b']} "
        + ", ".join(f"{r['measure']} {fmt_dec(r['ratio'])}{' (differ)' if r['flagged'] else ''}" for r in rows[:5])
        + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
        for p, rows in pairs
    )
    return finish_chart("rate_ratios", fig, alt + ".", height)


# in the order the study shows them
CHARTS: tuple[Callable[[dict], Chart | None], ...] = (
    rate_ratio_chart,
    job_mix_chart,
    causes_chart,
    trend_chart,
    causes_by_month_chart,
    mttf_chart,
    ettr_chart,
    expected_ettr_chart,
    lemon_signals_chart,
    lost_goodput_chart,
)


def render_study_charts(study: dict) -> dict[str, Chart]:
    """The study's charts."""
    return draw_charts(CHARTS, study)
