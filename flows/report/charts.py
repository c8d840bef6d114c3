"""The report's charts: PNGs drawn from metrics.json alone (never the warehouse), byte-identical for
identical metrics (no timestamp or version in the file, fixed fonts and sizes). Drawn for the width
they are shown at: 560 CSS px in a 600 px mail pane, scaled down to 343 px on a 375 px phone, with
text large enough to be at least 10 px there; drawn at 2x for sharp high-density screens and
reduced to a 64-colour palette (15-40 KB each). Each comes with alt text that states what it shows."""

from __future__ import annotations

import io
import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# matplotlib builds a font cache in MPLCONFIGDIR; HOME may be read-only (CI, services).
os.environ.setdefault("MPLCONFIGDIR", str(Path(tempfile.gettempdir()) / f"matplotlib-{os.getuid()}"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator  # noqa: E402
from PIL import Image  # noqa: E402

from flows.figures.summary import fmt_dec, fmt_duration, fmt_num, fmt_pct, label  # noqa: E402

WIDTH_PX = 560  # shown at this width in a 600 px pane (the page's padding takes the rest)
NARROWEST_PX = 343  # shown at this width on a 375 px phone
MIN_SHOWN_PX = 10  # the smallest text as displayed there
DPI = 144  # 2 PNG pixels per point: drawn at 2x, one point is one CSS px at WIDTH_PX
WIDTH_IN = WIDTH_PX / 72
# The smallest text: 16.5 pt, which is 16.5 px at 560 and 10.1 px at 343.
TEXT_PT = math.ceil(2 * MIN_SHOWN_PX * WIDTH_PX / NARROWEST_PX) / 2
# Heights in CSS px at WIDTH_PX; legends go below the plot, where they hide no data.
JOB_MIX_HEIGHT, MTTF_HEIGHT, TREND_HEIGHT, ETTR_HEIGHT = 300, 460, 340, 460
# Okabe-Ito: distinguishable with colour-blindness, and on white whatever the client's theme.
BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW, GREY = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#6b7280",
)  # fmt: skip
# Then three of Paul Tol's muted colours, for the job mix's up to 11 outcomes.
PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW, GREY, "#882255", "#44AA99", "#999933", "#332288")
STYLE = {
    "font.family": "DejaVu Sans",  # shipped with matplotlib: the same glyphs on every machine
    "font.size": TEXT_PT,  # every text on a chart is at least this size
    "axes.titlesize": TEXT_PT + 1.5,
    "axes.labelsize": TEXT_PT,
    "legend.fontsize": TEXT_PT,
    "xtick.labelsize": TEXT_PT,
    "ytick.labelsize": TEXT_PT,
    "legend.handlelength": 1.5,
    "legend.columnspacing": 1.0,
    "legend.borderaxespad": 0.2,
    "axes.edgecolor": "#9aa5b1",
    "axes.labelcolor": "#1f2933",
    "text.color": "#1f2933",
    "xtick.color": "#52606d",
    "ytick.color": "#52606d",
    "axes.grid": True,
    "grid.color": "#e4e7eb",
    "grid.linewidth": 0.8,
    "axes.linewidth": 1.2,
    "xtick.major.width": 1.2,
    "ytick.major.width": 1.2,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.facecolor": "white",  # opaque: readable when a client darkens the page around it
    "axes.facecolor": "white",
}


@dataclass(frozen=True)
class Chart:
    name: str
    png: bytes
    alt: str
    width: int  # display size in CSS pixels
    height: int
    min_text_px: float  # the smallest text's font size in the PNG's pixels


def chart_text(value: str) -> str:
    """Data shown in a chart: '$' would start matplotlib's math mode."""
    return str(value).replace("$", r"\$")


def new_figure(height_px: int) -> Figure:
    return Figure(figsize=(WIDTH_IN, height_px / 72), dpi=DPI, layout="constrained")


def _smallest_text_px(fig: Figure) -> float:
    """The font size of the smallest text drawn on the figure (titles, labels, ticks, legend,
    annotations), in the PNG's pixels; call after drawing, which creates the tick labels."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes) * DPI / 72


def _png(fig: Figure) -> bytes:
    # the pixels savefig would encode as PNG, taken from the canvas without the encode and decode
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    drawn = Image.frombuffer("RGBA", canvas.get_width_height(physical=True), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    image = drawn.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)  # Pillow writes no time or version chunk
    return out.getvalue()


def bucket_gpus(bucket: dict) -> int:
    """Where a size bucket sits on the GPU axis: its upper end (its lower end when open)."""
    return bucket["max_gpus"] if bucket["max_gpus"] < 2**31 - 1 else bucket["min_gpus"]


def gpu_tick(value: float, _pos=None) -> str:
    n = int(round(value))
    return f"{n // 1024}k" if n >= 1024 else str(n)


def mttf_chart(metrics: dict) -> Chart | None:
    buckets = [b for b in metrics["mttf_by_size"] if bucket_gpus(b) > 0 and b["runtime_hours"] > 0]
    if not buckets:
        return None
    fig = new_figure(MTTF_HEIGHT)
    ax = fig.add_subplot()
    observed = [b for b in buckets if b["mttf_hours"] is not None]
    bounds = [b for b in buckets if b["mttf_hours"] is None and b["mttf_lower_hours"]]
    rf = metrics["node_failure_rate"]
    projections = metrics["projections"]
    for definition, colour, style in (("paper", BLUE, "-"), ("all", GREY, "--")):
        points = sorted(
            [(bucket_gpus(b), b["model_mttf_hours"][definition]) for b in metrics["mttf_by_size"] if bucket_gpus(b) > 0]
            + [(p["gpus"], p[f"mttf_hours_{definition}"]) for p in projections]
        )
        points = [(x, y) for x, y in points if y]
        if points:
            ax.plot(
                *zip(*points, strict=True),
                style,
                color=colour,
                linewidth=1.75,
                label=f"model, $r_f$ {definition} = {fmt_dec(rf[definition]['value'])}",
            )
    definition = metrics["expected_ettr"]["r_f_definition"]
    shown = [(p["gpus"], p[f"mttf_hours_{definition}"]) for p in projections if p[f"mttf_hours_{definition}"]]
    if shown:
        ax.plot(*zip(*shown, strict=True), "s", color=BLUE, markerfacecolor="white", markersize=7, label="projection")
        for x, y in shown:
            ax.annotate(fmt_duration(y), (x, y), textcoords="offset points", xytext=(4, 4), color=BLUE)
    if observed:
        xs = [bucket_gpus(b) for b in observed]
        ys = [b["mttf_hours"] for b in observed]
        err = [
            [b["mttf_hours"] - b["mttf_lower_hours"] for b in observed],
            [b["mttf_upper_hours"] - b["mttf_hours"] for b in observed],
        ]
        ax.errorbar(xs, ys, yerr=err, fmt="o", color=VERMILLION, markersize=7, capsize=3.5, elinewidth=1.5,
                    label="observed, 95% interval")  # fmt: skip
    if bounds:
        ax.plot(
            [bucket_gpus(b) for b in bounds],
            [b["mttf_lower_hours"] for b in bounds],
            "^",
            color=GREEN,
            markerfacecolor="white",
            markersize=8,
            label="no failure: MTTF above",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(gpu_tick))
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("GPUs in the job")
    ax.set_ylabel("MTTF (hours)")
    ax.set_title("Mean time to failure by job size")
    fig.legend(loc="outside lower center", frameon=False, ncols=2)
    alt = (
        f"Log-log chart of mean time to failure against job size. Observed MTTF with 95% intervals for "
        f"{len(observed)} size{'s' if len(observed) != 1 else ''} with failures"
        + (", lower bounds for " + f"{len(bounds)} without" if bounds else "")
        + "."
    )
    if shown:
        alt += (
            f" The model line for r_f {definition} = {fmt_dec(rf[definition]['value'])} projects "
            + ", ".join(f"{fmt_duration(y)} at {fmt_num(x)} GPUs" for x, y in shown)
            + "."
        )
    return finish_chart("mttf", fig, alt, MTTF_HEIGHT)


def month_tick(month: str) -> str:
    year, number = month.split("-")
    return f"{('Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec')[int(number) - 1]}\n{year}"


def trend_chart(metrics: dict) -> Chart | None:
    series = metrics["history"]["monthly"]
    if len(series) < 2:
        return None
    fig = new_figure(TREND_HEIGHT)
    ax = fig.add_subplot()
    for offset, (definition, colour, name) in zip(
        (-0.08, 0.08),
        (
            ("paper", BLUE, f"jobs > {metrics['parameters']['paper_min_gpus']} GPUs (paper)"),
            ("all", ORANGE, "all GPU jobs"),
        ),
        strict=True,
    ):
        points = [(i + offset, row[definition]) for i, row in enumerate(series) if row[definition]["value"] is not None]
        if not points:
            continue
        ax.errorbar(
            [x for x, _ in points],
            [r["value"] for _, r in points],
            yerr=[[r["value"] - r["lower"] for _, r in points], [r["upper"] - r["value"] for _, r in points]],
            fmt="-o",
            color=colour,
            markersize=6,
            linewidth=1.75,
            capsize=3.5,
            elinewidth=1.25,
            label=name,
        )
    step = math.ceil(len(series) / 7)  # at most 7 month labels: each needs 1/7 of a phone-width chart
    ticks = range(len(series) - 1, -1, -step)[::-1]  # the latest month always labelled
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels([month_tick(series[i]["month"]) for i in ticks])
    ax.set_ylim(bottom=0)
    ax.set_ylabel("failures per 1000 node-days")
    ax.set_title("Node failure rate $r_f$ by month, 95% intervals")
    fig.legend(loc="outside lower center", frameon=False, ncols=2)
    first, last = series[0], series[-1]
    alt = (
        f"Line chart of the node failure rate per month from {first['month']} to {last['month']}, both definitions "
        f"with 95% intervals: all GPU jobs {fmt_dec(first['all']['value'])} then {fmt_dec(last['all']['value'])}, "
        f"paper definition {fmt_dec(first['paper']['value'])} then {fmt_dec(last['paper']['value'])} "
        "failures per 1000 node-days."
    )
    return finish_chart("failure_rate_trend", fig, alt, TREND_HEIGHT)


def causes_chart(metrics: dict) -> Chart | None:
    causes = metrics["failures_by_cause"]
    if not causes:
        return None
    window = max(metrics["history"]["trailing"], key=lambda w: w["months"], default=None)
    previous = {}
    if window and window["months_available"] > 1:
        previous = {c["category"]: c for c in window["by_cause"]}
    height = 150 + 30 * len(causes)
    fig = new_figure(height)
    ax = fig.add_subplot()
    ys = list(range(len(causes)))[::-1]
    values = [c["rate_value"] or 0 for c in causes]
    ax.barh(
        ys,
        values,
        xerr=[
            [v - (c["rate_lower"] or 0) for v, c in zip(values, causes, strict=True)],
            [(c["rate_upper"] or 0) - v for v, c in zip(values, causes, strict=True)],
        ],  # fmt: skip
        color=BLUE,
        height=0.6,
        error_kw={"elinewidth": 1.25, "capsize": 3.5, "ecolor": "#52606d"},
        label="this month, 95% interval",
    )
    for y, c in zip(ys, causes, strict=True):
        ax.annotate(fmt_num(c["failures"]), (0, y), xytext=(3, 0), textcoords="offset points", va="center",
                    color="white")  # fmt: skip
    if previous:
        marked = [
            (y, previous[c["category"]]["value"]) for y, c in zip(ys, causes, strict=True) if c["category"] in previous
        ]
        if marked:
            ax.plot([v for _, v in marked], [y for y, _ in marked], "D", color=ORANGE, markersize=6,
                    label=f"last {window['months_available']} months")  # fmt: skip
    ax.set_yticks(ys)
    ax.set_yticklabels([chart_text(label(c["category"])) for c in causes])
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("failures per 1000 node-days (count on the bar)")
    ax.set_title("Infrastructure failures by cause")
    fig.legend(loc="outside lower center", frameon=False, ncols=2)
    alt = "Bar chart of this month's failure rate by cause: " + "; ".join(
        f"{label(c['category'])} {fmt_dec(c['rate_value'])} per 1000 node-days ({fmt_num(c['failures'])} failures)"
        for c in causes[:6]
    )
    alt += f"; and {len(causes) - 6} more." if len(causes) > 6 else "."
    return finish_chart("causes", fig, alt, height)


def ettr_chart(metrics: dict) -> Chart | None:
    expected = metrics["expected_ettr"]
    curves = [c for c in expected["curves"] if c["points"]]
    if not curves:
        return None
    fig = new_figure(ETTR_HEIGHT)
    ax = fig.add_subplot()
    for colour, curve in zip(PALETTE, curves, strict=False):
        xs = [p["ckpt_minutes"] for p in curve["points"]]
        ys = [p["ettr"] for p in curve["points"]]
        ax.plot(xs, ys, "-", color=colour, linewidth=1.75, label=f"{fmt_num(curve['gpus'])} GPUs")
        invalid = [(p["ckpt_minutes"], p["ettr"]) for p in curve["points"] if not p["valid"]]
        valid = [(p["ckpt_minutes"], p["ettr"]) for p in curve["points"] if p["valid"]]
        if valid:
            ax.plot(*zip(*valid, strict=True), "o", color=colour, markersize=5.25)
        if invalid:
            ax.plot(*zip(*invalid, strict=True), "o", color=colour, markerfacecolor="white", markersize=5.25)
        if curve["optimal_ckpt_minutes"] is not None:
            ax.axvline(curve["optimal_ckpt_minutes"], color=colour, linestyle="--", linewidth=1.5)
            ax.annotate(f"optimum {fmt_dec(curve['optimal_ckpt_minutes'], 1)} min", (curve["optimal_ckpt_minutes"], 0),
                        xycoords=("data", "axes fraction"), xytext=(2, 3), textcoords="offset points",
                        rotation=90, color=colour)  # fmt: skip
    configured = metrics["parameters"]["ckpt_interval_minutes"]
    ax.axvline(configured, color=GREY, linestyle=":", linewidth=1.75, label=f"configured {fmt_num(configured)} min")
    ax.set_xscale("log")
    minutes = metrics["parameters"]["ettr_curve_minutes"]
    ax.xaxis.set_major_locator(FixedLocator(minutes))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(max(0.0, min(p["ettr"] for c in curves for p in c["points"]) - 0.02), 1.0)
    ax.set_xlabel("checkpoint interval (minutes)")
    ax.set_ylabel("expected ETTR")
    ax.set_title(f"Expected ETTR, $r_f$ {expected['r_f_definition']} = {fmt_dec(expected['r_f'])}")
    if any(not p["valid"] for c in curves for p in c["points"]):
        ax.plot([], [], "o", color=GREY, markerfacecolor="white", markersize=5.25, label="outside the model's range")
    fig.legend(loc="outside lower center", frameon=False, ncols=2)
    optima = [c for c in curves if c["optimal_ckpt_minutes"] is not None]
    alt = (
        f"Line chart of expected ETTR against checkpoint interval, {fmt_num(minutes[0])} to {fmt_num(minutes[-1])} min, "
        f"for r_f = {fmt_dec(expected['r_f'])}: "
        + "; ".join(
            f"{fmt_num(c['gpus'])} GPUs {fmt_dec(c['points'][0]['ettr'], 3)} to {fmt_dec(c['points'][-1]['ettr'], 3)}"
            for c in curves
        )
        + ". "
        + (
            "Optimal interval: "
            + ", ".join(f"{fmt_dec(c['optimal_ckpt_minutes'], 1)} min at {fmt_num(c['gpus'])} GPUs" for c in optima)
            + "."
            if optima
            else "No optimum without a checkpoint write time: shorter intervals are always better."
        )
    )
    return finish_chart("ettr", fig, alt, ETTR_HEIGHT)


def job_mix_chart(metrics: dict) -> Chart | None:
    mix = metrics["job_mix"]
    if not mix or not metrics["totals"]["attempts"]:
        return None
    fig = new_figure(JOB_MIX_HEIGHT)
    ax = fig.add_subplot()
    left = [0.0, 0.0]
    for colour, row in zip(PALETTE, mix, strict=False):  # 12 colours, 11 outcomes
        shares = [row["attempt_share"] or 0, row["gpu_hours_share"] or 0]
        ax.barh([1, 0], shares, left=left, color=colour, height=0.6, label=chart_text(label(row["outcome"])))
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_yticks([1, 0])
    ax.set_yticklabels(["attempts", "GPU-hours"])
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}%"))
    ax.grid(visible=False)
    fig.legend(loc="outside lower center", frameon=False, ncols=4)
    ax.set_title("Job mix by outcome")
    alt = "Stacked bars of the share of attempts and of GPU-hours by outcome: " + "; ".join(
        f"{label(r['outcome'])} {fmt_pct(r['attempt_share'])} of attempts, {fmt_pct(r['gpu_hours_share'])} of GPU-hours"
        for r in mix
    )
    return finish_chart("job_mix", fig, alt + ".", JOB_MIX_HEIGHT)


# The lemon signals charted (the paper's Fig. 11), in the order of the panels
LEMON_SIGNALS = (
    "xid_cnt",
    "out_count",
    "tickets",
    "incident_hours",
    "multi_node_node_fails",
    "single_node_node_fails",
    "single_node_node_failure_rate",
)
LEMON_HEIGHT = 460


def lemon_signals_chart(metrics: dict) -> Chart | None:
    """The fleet's distribution (CDF) of each lemon signal over the window, candidates marked."""
    lemons = metrics["lemon_nodes"]
    distribution = lemons.get("signal_distribution") or {}
    signals = [s for s in LEMON_SIGNALS if distribution.get(s)]
    if not signals:
        return None
    fig = new_figure(LEMON_HEIGHT)
    axes = fig.subplots(2, (len(signals) + 1) // 2, squeeze=False).ravel()
    for ax, signal in zip(axes, signals, strict=False):
        points = distribution[signal]
        ax.step([v for v, _ in points], [share for _, share in points], where="post", color=PALETTE[0])
        for candidate in lemons["candidates"]:
            if candidate.get(signal) is not None:
                ax.axvline(candidate[signal], color=PALETTE[3], linewidth=0.6, alpha=0.6)
        ax.set_title(chart_text(signal))
        ax.set_ylim(0, 1.02)
    for ax in axes[len(signals) :]:
        ax.set_visible(False)
    fig.suptitle(f"Lemon signals over {lemons.get('window_days', '')} days: share of nodes at or below")
    alt = (
        "Cumulative distributions over the fleet of the lemon signals "
        + ", ".join(signals)
        + f"; the {len(lemons['candidates'])} candidates' values marked."
    )
    return finish_chart("lemon_signals", fig, alt, LEMON_HEIGHT)


def finish_chart(name: str, fig: Figure, alt: str, height: int) -> Chart:
    png = _png(fig)
    return Chart(name=name, png=png, alt=alt, width=WIDTH_PX, height=height, min_text_px=_smallest_text_px(fig))


CHARTS: tuple[Callable[[dict], Chart | None], ...] = (
    job_mix_chart,
    mttf_chart,
    trend_chart,
    causes_chart,
    ettr_chart,
    lemon_signals_chart,
)


def draw_charts(draws: tuple[Callable[[dict], Chart | None], ...], figures: dict) -> dict[str, Chart]:
    """Every chart of `draws` that `figures` support, by name (a chart without data is left out)."""
    with matplotlib.rc_context(STYLE):
        drawn = [draw(figures) for draw in draws]
    return {chart.name: chart for chart in drawn if chart is not None}


def render_charts(metrics: dict) -> dict[str, Chart]:
    """The month's charts."""
    return draw_charts(CHARTS, metrics)
