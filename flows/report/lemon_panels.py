"""The parts of the month's lemon-signals chart (flows/report/goodput_charts.py lemon_signals_chart):
each signal in words, the threshold a rule sets on it, and one signal's panel: how many of the
fleet's nodes had each value (log scale, so that the one node far out shows beside the hundreds at
zero), the candidates' values in vermillion, lettered A, B, ... as the legend names them.

Drawn from metrics.json alone: the outlier threshold in hours is the fleet fit the month's rules
used (`lemon_nodes.fleet_mean_incident_hours` and `fleet_incident_dispersion`, flows/figures/lemons.py)
at the month's `lemon_p_value`; the repeat-offender rule counts failure incidents within
`lemon_repeat_days`, which no charted signal is, so the section's note states its threshold."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Annotation
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from flows.figures.figure_types import LemonCandidate, LemonWindow, Parameters
from flows.figures.formats import fmt_num, fmt_pct, label
from flows.figures.lemons import FleetFit
from flows.report.charts import BLUE, DPI, GREY, VERMILLION, chart_text, shown_name

# The signals charted (the paper's Fig. 11), in the order of the panels, as a reader names them
SIGNAL_NAMES = {
    "incident_hours": "Hours in incidents",
    "xid_cnt": "Hardware Xid errors",
    "out_count": "Drains and downs",
    "tickets": "Repair tickets",
    "multi_node_node_fails": "Multi-node job failures it caused",
    "single_node_node_fails": "Single-node job failures it caused",
    "single_node_node_failure_rate": "Share of its single-node jobs that failed",
}
RATES = {"single_node_node_failure_rate"}  # shown as percentages
LETTERS = "ABCDEF"  # the candidates named in the legend; any more are marked, not named
NAME_CHARS = 24  # a node's name in the legend, at most (a legend row is the chart's width)
PANEL_PX, TITLE_PX = 120, 56  # CSS px: one signal's panel; the figure's title


def signals_shown(distribution: dict[str, list[list[float]]]) -> list[str]:
    """The signals some node had (a value above 0): a signal every node is at 0 on has nothing to show."""
    return [s for s in SIGNAL_NAMES if any(value > 0 for value, _ in distribution.get(s) or [])]


def outlier_threshold(lemons: LemonWindow, parameters: Parameters) -> int | None:
    """The fewest incident hours the outlier rule lists a node at: at least lemon_min_incidents, and
    a tail under lemon_p_value in the fleet fit (none when no count up to 10,000 is that rare)."""
    mean, dispersion = lemons.fleet_mean_incident_hours, lemons.fleet_incident_dispersion
    if mean is None or dispersion is None:
        return None
    fit, p = FleetFit(mean, dispersion), parameters.lemon_p_value
    return next((k for k in range(parameters.lemon_min_incidents, 10_001) if fit.tail(k) < p), None)


def signal_value(candidate: LemonCandidate, signal: str) -> float | None:
    """A candidate's value of a signal of SIGNAL_NAMES (each a field of its row)."""
    return getattr(candidate, signal)


def nodes_by_value(points: list[list[float]], fleet: int) -> dict[float, int]:
    """value -> the nodes with it, from the fleet's distribution (value, share at or below)."""
    shares = [share for _, share in points]
    return {
        value: max(1, round(fleet * (share - before)))
        for (value, share), before in zip(points, [0.0, *shares[:-1]], strict=True)
    }


def candidate_entry(candidate: LemonCandidate) -> str:
    """A candidate in the legend (its letter is the entry's mark): its name and the rules that list it."""
    return f"{printable_name(candidate.node)}: " + ", ".join(label(r) for r in candidate.rules)


def shown_value(signal: str, value: float) -> str:
    return fmt_pct(value, 0) if signal in RATES else fmt_num(value)


def printable_name(node: str) -> str:
    name = shown_name(node)
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def signal_panel(ax: Axes, signal: str, counts: dict[float, int], candidates: list[LemonCandidate]) -> list[Annotation]:
    """One signal's panel: a stem per value to the nodes with it; each value a candidate has (above 0)
    in vermillion with the candidates' letters above it. The letters, for separate_letters."""
    values = sorted(counts)
    ax.vlines(values, 0.5, [counts[v] for v in values], color=BLUE, linewidth=2)
    ax.plot(values, [counts[v] for v in values], "o", color=BLUE, markersize=5)
    marked: dict[float, list[str]] = {}
    for i, candidate in enumerate(candidates):
        value = signal_value(candidate, signal)
        if value is not None and value > 0:
            marked.setdefault(value, []).extend(LETTERS[i : i + 1])
    letters = []
    for value, named in sorted(marked.items()):
        ax.plot([value], [counts.get(value, 1)], "o", color=VERMILLION, markersize=8)
        if named:
            text = ax.annotate(
                " ".join(named),
                (value, counts.get(value, 1)),
                xytext=(0, 6),
                textcoords="offset points",
                ha="center",
                va="bottom",
                color=VERMILLION,
                fontweight="bold",
            )
            text.set_in_layout(False)
            letters.append(text)
    ax.set_title(SIGNAL_NAMES[signal], loc="left")
    ax.set_yscale("log")
    ax.set_ylim(0.5, max(counts.values()) * 6)
    ax.yaxis.set_major_locator(FixedLocator([10**e for e in range(len(str(max(counts.values()) * 6)))]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: fmt_num(v)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_ylabel("nodes")
    top = max([*values, *marked])
    ax.set_xlim(-0.05 * top, 1.06 * top)
    if signal in RATES:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}%"))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: fmt_num(v)))
    ax.grid(axis="x", visible=False)
    return letters


def threshold_line(ax: Axes, threshold: int, p_value: float) -> None:
    ax.axvline(
        threshold,
        color=GREY,
        linestyle="--",
        linewidth=1.75,
        label=chart_text(f"outlier threshold: {fmt_num(threshold)} hours (p < {p_value:g})"),
    )
    left, right = ax.get_xlim()
    ax.set_xlim(left, max(right, 1.06 * threshold))


def legend_entries(ax: Axes, candidates: list[LemonCandidate], unnamed: int) -> None:
    """The legend's entries besides the threshold: the fleet's stems, each named candidate by its
    letter, and the candidates marked but not named."""
    ax.plot([], [], "o-", color=BLUE, markersize=5, linewidth=2, label="nodes with the value")
    for letter, candidate in zip(LETTERS, candidates, strict=False):
        ax.add_line(
            Line2D(
                [],
                [],
                marker=f"${letter}$",
                linestyle="none",
                color=VERMILLION,
                markersize=11,
                label=candidate_entry(candidate),
            )
        )
    if unnamed:
        ax.plot([], [], "o", color=VERMILLION, markersize=8, label=f"{fmt_num(unnamed)} more candidates, not lettered")


def separate_letters(fig: Figure, letters: list[Annotation]) -> None:
    """Lift a panel's letters that would overlap the ones left of them, after the layout places the panels."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw_without_rendering()
    placed = []
    for text in sorted(letters, key=lambda t: (id(t.axes), t.xy[0])):
        for _ in range(4):
            box = text.get_window_extent(renderer)
            clash = [p for p in placed if p.axes is text.axes and p.get_window_extent(renderer).overlaps(box)]
            if not clash:
                break
            x, y = text.xyann
            text.xyann = (x, y + (box.height + 2) * 72 / DPI)
        placed.append(text)


def legend_order(axes: list[Axes]) -> tuple[list, list]:
    """The legend's handles and labels: the fleet's stems, the threshold, then the candidates."""
    handles, labels = [], []
    for ax in axes:
        for handle, text in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.append(handle)
            labels.append(text)
    order = sorted(
        range(len(labels)), key=lambda i: (labels[i] != "nodes with the value", not labels[i].startswith("outlier"), i)
    )
    return [handles[i] for i in order], [labels[i] for i in order]


def lemon_alt(lemons: LemonWindow, signals: list[str], threshold: int | None) -> str:
    distribution, candidates = lemons.signal_distribution, lemons.candidates
    quiet = [SIGNAL_NAMES[s].lower() for s in SIGNAL_NAMES if s not in signals and s in distribution]
    return (
        f"Dot charts, one per lemon signal, of how many of the fleet's {fmt_num(lemons.fleet_nodes)} nodes had "
        f"each value over the {fmt_num(lemons.window_days)} days to {lemons.window_end[:10]}, on a log scale: "
        + "; ".join(f"{SIGNAL_NAMES[s].lower()} 0 to {shown_value(s, distribution[s][-1][0])}" for s in signals)
        + (f". Outlier threshold {fmt_num(threshold)} hours in incidents" if threshold is not None else "")
        + (
            ". Candidates: "
            + "; ".join(
                f"{LETTERS[i] + ' ' if i < len(LETTERS) else ''}{c.node} ({', '.join(label(r) for r in c.rules)}): "
                + ", ".join(
                    f"{shown_value(s, value)} {SIGNAL_NAMES[s].lower()}"
                    for s in signals
                    if (value := signal_value(c, s) or 0) > 0
                )
                for i, c in enumerate(candidates)
            )
            if candidates
            else ". No candidate"
        )
        + (f". No node had {' or '.join(quiet)}." if quiet else ".")
    )
