"""The charts' canvas: the style, size and encoding every chart shares, and the period a chart draws.

PNGs drawn from the validated document alone (flows/figures/document.py, what metrics.json is
written from; never the warehouse), byte-identical for identical metrics (no timestamp or version
in the file, fixed fonts and sizes). Drawn for the width they are shown at:
560 CSS px in a 600 px mail pane, scaled down to 343 px on a 375 px phone, with text large enough
to be at least 10 px there; drawn at 2x for sharp high-density screens and reduced to a 64-colour
palette (15-40 KB each). Each comes with alt text that states what it shows.

Each figure is drawn by one function (flows/report/*_charts.py) for a
`Period`: the clusters a period shows (a month's one, a study's several) over its months, their
figures read as the document's typed attributes."""

from __future__ import annotations

import io
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

# matplotlib builds a font cache in MPLCONFIGDIR; HOME may be read-only (CI, services).
os.environ.setdefault("MPLCONFIGDIR", str(Path(tempfile.gettempdir()) / f"matplotlib-{os.getuid()}"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import FixedLocator  # noqa: E402
from PIL import Image  # noqa: E402

from flows.core.escape import printable  # noqa: E402
from flows.core.months import Month, month_range  # noqa: E402
from flows.figures.document import MonthDocument, StudyCluster, StudyDocument  # noqa: E402
from flows.figures.figure_types import MonthRates  # noqa: E402

WIDTH_PX = 560  # shown at this width in a 600 px pane (the page's padding takes the rest)
NARROWEST_PX = 343  # shown at this width on a 375 px phone
MIN_SHOWN_PX = 10  # the smallest text as displayed there
DPI = 144  # 2 PNG pixels per point: drawn at 2x, one point is one CSS px at WIDTH_PX
WIDTH_IN = WIDTH_PX / 72
# The smallest text: 16.5 pt, which is 16.5 px at 560 and 10.1 px at 343.
TEXT_PT = math.ceil(2 * MIN_SHOWN_PX * WIDTH_PX / NARROWEST_PX) / 2
TITLE_PT = TEXT_PT + 1.5  # a chart's title (a plot's, or the figure's where the plot sits off centre)
LEGEND_ROW_PX = 28  # a legend row at TEXT_PT; legends go below the plot, where they hide no data
# Okabe-Ito: distinguishable with colour-blindness, and on white whatever the client's theme.
BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW, GREY = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#6b7280",
)
# Then three of Paul Tol's muted colours, for the job mix's up to 11 outcomes.
PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW, GREY, "#882255", "#44AA99", "#999933", "#332288")
STYLE = {
    "font.family": "DejaVu Sans",  # shipped with matplotlib: the same glyphs on every machine
    "font.size": TEXT_PT,  # every text on a chart is at least this size
    "axes.titlesize": TITLE_PT,
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


def shown_name(value: str) -> str:
    """A name from the logs or the site on a chart: no control characters, no math mode."""
    return chart_text(printable(value))


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


def gpu_tick(value: float, _pos=None) -> str:
    n = int(round(value))
    return f"{n // 1024}k" if n >= 1024 else str(n)


def bucket_tick(size_bucket: str) -> str:
    """A size bucket's label, short: "1024" -> "1k", ">8192" -> ">8k"."""
    digits = size_bucket.lstrip(">")
    return size_bucket[: len(size_bucket) - len(digits)] + gpu_tick(int(digits)) if digits.isdigit() else size_bucket


MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def month_tick(month: str, first: bool = True, letters: int = 3) -> str:
    """A month's label: its name (`letters` of it), with the year below on the first month and on
    January (below the others a blank line, so that every name sits on the same line)."""
    year, number = month.split("-")
    return f"{MONTH_NAMES[int(number) - 1][:letters]}\n{year if first or number == '01' else ' '}"


def months_between(first: str, last: str) -> list[str]:
    """Every month from `first` to `last` (YYYY-MM), both included (flows/core/months.py month_range)."""
    return [str(month) for month in month_range(Month.parse(first), Month.parse(last))]


def month_axis(ax: Axes, months: Sequence[str]) -> None:
    """A tick for every month of an x axis, each labelled: by its name's first three letters up to 12
    months (a phone-width chart fits 12), by its first letter up to 24, beyond that every k-th month
    by name (the latest always, the others ticked), the year below the first month and each January."""
    letters, step = (3, 1) if len(months) <= 12 else (1, 1) if len(months) <= 24 else (3, math.ceil(len(months) / 12))
    labelled = range(len(months) - 1, -1, -step)[::-1]
    ax.xaxis.set_major_locator(FixedLocator(labelled))
    ax.set_xticklabels([month_tick(months[i], i == labelled[0], letters) for i in labelled])
    ax.xaxis.set_minor_locator(FixedLocator(range(len(months))))
    ax.set_xlim(-0.6, len(months) - 0.4)


def log_limits(ax: Axes, which: str, base: float = 10) -> None:
    """Widen a log axis to the powers of `base` around its data when fewer than two fall inside it
    (a month's sizes all near 256 GPUs, MTTF bounds between 137 and 448 hours): an axis is read by
    two labelled values at least."""
    get, put = (ax.get_xlim, ax.set_xlim) if which == "x" else (ax.get_ylim, ax.set_ylim)
    low, high = get()
    below, above = math.log(low, base), math.log(high, base)
    if math.floor(above + 1e-9) - math.ceil(below - 1e-9) < 1:
        put(min(low, base ** math.floor(below + 1e-9)), max(high, base ** math.ceil(above - 1e-9)))


def sparse_ticks(ax: Axes, labels: list[str], most: int = 8) -> None:
    """Label categorical x positions, at most `most` of them (a phone-width chart fits 8)."""
    step = math.ceil(len(labels) / most)
    ticks = list(range(0, len(labels), step))
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels([labels[i] for i in ticks])


def legend(fig: Figure, ncols: int) -> None:
    fig.legend(loc="outside lower center", frameon=False, ncols=ncols)


def legend_rows(entries: int, ncols: int) -> int:
    """The height a legend of `entries` in `ncols` columns adds below a plot."""
    return math.ceil(entries / ncols) * LEGEND_ROW_PX


def finish_chart(name: str, fig: Figure, alt: str, height: int) -> Chart:
    png = _png(fig)
    return Chart(name=name, png=png, alt=alt, width=WIDTH_PX, height=height, min_text_px=_smallest_text_px(fig))


@dataclass(frozen=True)
class Marks:
    """The sizes of a figure's marks: one cluster alone is marked larger than several side by side
    (errorbar's markersize, capsize and elinewidth; the line width)."""

    markersize: float
    capsize: float
    elinewidth: float
    linewidth: float = 1.75


class Series(NamedTuple):
    """One cluster's figures over the period, in the colour the period gives it."""

    name: str
    figures: MonthDocument | StudyCluster  # a month's cluster: the month's document
    colour: str


@dataclass(frozen=True)
class Period:
    """What a chart draws: the clusters a period shows (a month's one, a study's several), each a
    series in its own colour, over the period's months.

    How a chart draws them is decided by how many there are: one series alone has room for its
    kinds of marks each in a colour, larger, labelled; several stand side by side in their colours
    with smaller marks (`side_by_side`)."""

    figures: MonthDocument | StudyDocument  # the month's document, or the whole study's (its comparison)
    series: tuple[Series, ...]
    months: tuple[str, ...]  # every month a trend's axis spans, oldest first
    causes: tuple[str, ...]  # the causes in the order the charts list them
    rates_by_month: dict[str, list[MonthRates]]  # cluster -> its r_f month by month
    span: str  # the period in words: "this month", "the range"

    @property
    def side_by_side(self) -> bool:
        """Several clusters drawn side by side (each a colour) rather than one alone."""
        return len(self.series) > 1


def month_period(document: MonthDocument) -> Period:
    """The month's cluster over its history's months, its causes in the month's order."""
    history = document.history.monthly
    return Period(
        figures=document,
        series=(Series(document.cluster, document, PALETTE[0]),),
        months=tuple(months_between(history[0].month, history[-1].month) if history else ()),
        causes=tuple(c.category for c in document.failures_by_cause),
        rates_by_month={document.cluster: history},
        span="this month",
    )


def study_period(document: StudyDocument) -> Period:
    """The study's clusters in its order, each a colour of PALETTE, over its range."""
    clusters = document.clusters
    return Period(
        figures=document,
        series=tuple(
            Series(name, figures, PALETTE[i % len(PALETTE)]) for i, (name, figures) in enumerate(clusters.items())
        ),
        months=tuple(months_between(document.from_month, document.to_month)),
        causes=tuple(document.causes),
        rates_by_month={name: figures.monthly for name, figures in clusters.items()},
        span="the range",
    )


ChartDraw = Callable[[Period], Chart | None]


def draw_charts(draws: Sequence[ChartDraw], period: Period) -> dict[str, Chart]:
    """Every chart of `draws` that the period's figures support, by name (a chart without data is left out)."""
    with matplotlib.rc_context(STYLE):
        drawn = [draw(period) for draw in draws]
    return {chart.name: chart for chart in drawn if chart is not None}
