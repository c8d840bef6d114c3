"""The archive site: `<reports>/index.html`, every cluster's months newest first with their headline
figures and data-quality status, a trend of r_f across the months built, links to each report, its
text part and its files, and to every study; and in each month's report.html, links back to the
index and to the months before and after it (in a study's, to the index).

Static HTML only (no script, nothing fetched), with relative links, so it reads the same from
file:// or any web server. It is made from what the report directories hold (metrics.json, read
as its typed document by flows/figures/read.py; a month of a schema version too early to read
that way is left out with a warning naming the command that builds it again), never from the
warehouse: refresh_archive() after every run, backfill and study rewrites it, each file
atomically, and gives the same bytes for the same reports. Every name found on disk or in the
figures (a directory, a cluster, a node in the summary) is escaped by the template's autoescape
and put in links percent-encoded.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from flows.core.atomic import replace_file_atomically
from flows.core.months import MONTH_RE
from flows.figures.document import MonthDocument, StudyDocument
from flows.figures.figure_types import Rate
from flows.figures.formats import keep_units
from flows.figures.read import DocumentError, read_document

log = logging.getLogger("flows.progress")
INDEX = "index.html"
STUDIES = "studies"
# page.html.j2 writes these two markers with nothing between them; refresh_archive fills them in
NAV_START, NAV_END = "<!-- archive-nav -->", "<!-- /archive-nav -->"
NAV = re.compile(re.escape(NAV_START) + ".*?" + re.escape(NAV_END), re.S)
# the r_f chart's SVG user units (it scales to its box, 311 px wide on a 375 px phone: its text, 22
# units, is 12 px there, the page's smallest): the value axis's ticks left of TREND_LEFT, its name above
# TREND_TOP, the months below the zero line, each month's label centred on its tick (the right margin
# holds half of the newest one's)
TREND_WIDTH, TREND_HEIGHT, TREND_PAD = 560, 240, 50
TREND_LEFT, TREND_TOP, TREND_BOTTOM = 70, 54, 42
TREND_TEXT = 22
MONTH_LABEL_UNITS = 100  # room for one month's label ("2026-10", 81 units at TREND_TEXT) and a gap


def href(*parts: str) -> str:
    """A relative link to a path under the reports directory, each part percent-encoded."""
    return "/".join(quote(part, safe="") for part in parts)


@dataclass(frozen=True)
class MonthEntry:
    cluster: str  # the directory's name (as on disk)
    month: str
    document: MonthDocument  # its metrics.json
    files: tuple[str, ...]  # every file of the directory, relative (dotfiles left out)

    @property
    def link(self) -> str:
        return href(self.cluster, self.month)

    @property
    def file_links(self) -> list[tuple[str, str]]:
        return [(name, href(self.cluster, self.month, *name.split("/"))) for name in self.files]


@dataclass(frozen=True)
class TrendPoint:
    month: str
    value: float
    lower: float
    upper: float
    x: float
    y: float
    y_lower: float
    y_upper: float  # at the top of the chart when the interval is cut there
    clipped: str | None = None  # why its interval does not set the scale and is cut: "a partial month"


@dataclass(frozen=True)
class Trend:
    """r_f (all GPU jobs) over the months built, with its interval, in the SVG's coordinates: a value
    axis from 0 to `top` with its ticks, every month built on the month axis (labelled as many as fit),
    a line per run of consecutive months measured, a band per run of complete ones (a month alone, or
    partial or thin: a whisker). The scale is set by the values and by the intervals of complete
    months with enough exposure; a partial or thin month's interval is cut at the top, with a mark."""

    points: tuple[TrendPoint, ...]
    top: float  # the value at the top of the chart
    ticks: tuple[tuple[str, float], ...]  # the value axis: (label, y)
    months: tuple[tuple[str, float, bool], ...]  # every month built: (month, x, labelled)
    lines: tuple[str, ...]  # <polyline points> of each run of consecutive months measured
    bands: tuple[str, ...]  # <polygon points> of the intervals of each run of complete months measured
    whiskers: tuple[TrendPoint, ...]  # the months outside a band (alone, partial or thin): their interval as a line
    gap_labels: bool  # room to write "not measured" at a month not measured
    not_measured: tuple[tuple[str, str], ...]  # (month, why) of the months built without an r_f
    width: int = TREND_WIDTH
    height: int = TREND_HEIGHT
    left: int = TREND_LEFT
    right: int = TREND_WIDTH - TREND_PAD
    plot_top: int = TREND_TOP
    bottom: int = TREND_HEIGHT - TREND_BOTTOM  # the zero line
    text: int = TREND_TEXT  # the font size of its texts

    @property
    def clipped(self) -> list[TrendPoint]:
        return [p for p in self.points if p.clipped and p.upper > self.top]


@dataclass(frozen=True)
class ClusterEntry:
    name: str
    months: tuple[MonthEntry, ...]  # newest first
    trend: Trend | None


@dataclass(frozen=True)
class StudyEntry:
    name: str
    summary: str
    files: tuple[str, ...]

    @property
    def link(self) -> str:
        return href(STUDIES, self.name)

    @property
    def file_links(self) -> list[tuple[str, str]]:
        return [(name, href(STUDIES, self.name, *name.split("/"))) for name in self.files]


@dataclass
class Archive:
    clusters: list[ClusterEntry] = field(default_factory=list)
    studies: list[StudyEntry] = field(default_factory=list)

    @property
    def monthly_reports(self) -> int:
        """The monthly reports of every cluster (the index counts them at the top)."""
        return sum(len(c.months) for c in self.clusters)


def _files(directory: Path) -> tuple[str, ...]:
    return tuple(
        sorted(
            p.relative_to(directory).as_posix()
            for p in directory.rglob("*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(directory).parts)
        )
    )


def _read_document(path: Path) -> MonthDocument | StudyDocument | None:
    """A report's document, or None (with a warning) when it cannot be read as one: a report being
    replaced or damaged, or one of a schema version too early (the warning names the command that
    builds it again)."""
    try:
        return read_document(path)
    except DocumentError as error:  # left out this time
        log.warning("archive: %s left out: %s", path, error)
        return None


def scan(reports_dir: Path) -> Archive:
    """Every cluster directory with at least one month's report (`<cluster>/<YYYY-MM>/metrics.json`),
    and every study (`studies/<name>/report.html`), in name order."""
    archive = Archive()
    if not reports_dir.is_dir():
        return archive
    for directory in sorted(p for p in reports_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if directory.name == STUDIES:
            continue
        months = []
        for month_dir in sorted(directory.iterdir(), reverse=True):
            if MONTH_RE.fullmatch(month_dir.name) and (month_dir / "metrics.json").is_file():
                document = _read_document(month_dir / "metrics.json")
                if isinstance(document, MonthDocument):
                    months.append(MonthEntry(directory.name, month_dir.name, document, _files(month_dir)))
        if months:
            archive.clusters.append(ClusterEntry(directory.name, tuple(months), trend(months)))
    studies = reports_dir / STUDIES
    if studies.is_dir():
        for directory in sorted(p for p in studies.iterdir() if (p / "report.html").is_file()):
            document = _read_document(directory / "metrics.json")
            summary = document.summary.text if document is not None else ""
            archive.studies.append(StudyEntry(directory.name, summary, _files(directory)))
    return archive


def _thin(document: MonthDocument, rate: Rate) -> bool:
    """r_f measured on fewer GPU node-days than [analysis] min_gpu_node_days (a report of before
    `not_measured`; a report since then has no value there, flows/figures/measured.py)."""
    return rate.node_days is not None and rate.node_days < document.parameters.min_gpu_node_days


def _ticks(top: float) -> list[float]:
    """0 to at least `top` in 3 to 5 round steps (1, 2, 2.5 or 5 times a power of ten)."""
    top = top if top > 0 else 1.0
    magnitude = 10 ** math.floor(math.log10(top / 4))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude * 4 >= top)
    return [round(i * step, 10) for i in range(math.ceil(top / step - 1e-9) + 1)]


def _tick_label(value: float, step: float) -> str:
    digits = next(d for d in range(6) if abs(round(step, d) - step) < 1e-9)
    return f"{value:,.{digits}f}"


def trend(months: list[MonthEntry]) -> Trend | None:
    """The chart of r_f (all GPU jobs) and its interval, oldest month on the left; None without a
    month that has exposure. A month whose r_f was not measured (too little GPU exposure: its value
    is null, flows/figures/measured.py) is no point of it, its month is on the month axis."""
    built = list(reversed(months))
    rates: dict[str, tuple[Rate, str | None]] = {}
    gaps = []
    for m in built:
        rate = m.document.node_failure_rate.all
        if rate.value is not None:
            partial = not m.document.period.complete
            thin = _thin(m.document, rate)
            rates[m.month] = (rate, "a partial month" if partial else "too little GPU exposure" if thin else None)
        else:
            why = rate.not_measured or m.document.not_measured.get("node_failure_rate.all")
            gaps.append((m.month, why or "no GPU exposure"))
    if not rates:
        return None
    scale = [r.value for r, _ in rates.values()] + [r.upper for r, why in rates.values() if why is None]
    ticks = _ticks(max(scale))
    top = ticks[-1]
    left, right, plot_top, bottom = TREND_LEFT, TREND_WIDTH - TREND_PAD, TREND_TOP, TREND_HEIGHT - TREND_BOTTOM
    step = (right - left) / (len(built) - 1) if len(built) > 1 else 0.0
    every = math.ceil(MONTH_LABEL_UNITS / step) if step else 1
    xs = {m.month: round(left + (i * step if len(built) > 1 else (right - left) / 2), 1) for i, m in enumerate(built)}

    def y(value: float) -> float:
        return round(bottom - (bottom - plot_top) * min(value, top) / top, 1)

    points = tuple(
        TrendPoint(
            month=month,
            value=rate.value,
            lower=rate.lower,
            upper=rate.upper,
            x=xs[month],
            y=y(rate.value),
            y_lower=y(rate.lower),
            y_upper=y(rate.upper),
            clipped=why,
        )
        for month, (rate, why) in rates.items()
    )
    runs: list[list[TrendPoint]] = []  # consecutive months built, each measured
    order = [m.month for m in built]
    for p in points:
        if runs and order.index(p.month) == order.index(runs[-1][-1].month) + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    steady: list[list[TrendPoint]] = []  # runs of consecutive months whose interval sets the scale: a band
    for run in runs:
        current: list[TrendPoint] = []
        for p in [*run, None]:
            if p is not None and p.clipped is None:
                current.append(p)
            elif current:
                steady.append(current)
                current = []
    return Trend(
        points=points,
        top=top,
        ticks=tuple((_tick_label(t, ticks[1] - ticks[0] if len(ticks) > 1 else t), y(t)) for t in ticks),
        months=tuple((month, x, (len(built) - 1 - i) % every == 0) for i, (month, x) in enumerate(xs.items())),
        lines=tuple(" ".join(f"{p.x},{p.y}" for p in run) for run in runs if len(run) > 1),
        bands=tuple(
            " ".join([f"{p.x},{p.y_upper}" for p in run] + [f"{p.x},{p.y_lower}" for p in reversed(run)])
            for run in steady
            if len(run) > 1
        ),
        whiskers=tuple(p for p in points if not any(p in run for run in steady if len(run) > 1)),
        gap_labels=step >= MONTH_LABEL_UNITS * 1.5,  # "not measured" is wider than a month's label
        not_measured=tuple(gaps),
    )


def nav(older: MonthEntry | None = None, newer: MonthEntry | None = None) -> str:
    """A report's links, between the markers: the index, and the reports of the months before and
    after it that are built (a study: the index only). Both sit two levels below the index."""
    from flows.report.environment import environment

    html = environment().get_template("partials/archive_nav.html.j2").render(older=older, newer=newer, href=href)
    return NAV_START + html.strip() + NAV_END


def _fill_nav(page: Path, links: str) -> None:
    try:
        html = page.read_text()
    except OSError:
        return
    if not (found := NAV.search(html)):  # a report rendered before the archive existed
        return
    filled = html[: found.start()] + links + html[found.end() :]
    if filled != html:
        replace_file_atomically(page, filled.encode())


def _fill_navs(cluster_dir: Path, cluster: ClusterEntry) -> None:
    months = cluster.months  # newest first
    for i, entry in enumerate(months):
        older = months[i + 1] if i + 1 < len(months) else None
        _fill_nav(cluster_dir / entry.month / "report.html", nav(older, months[i - 1] if i > 0 else None))


def without_nav(html: str) -> str:
    """A report.html as rendered, before refresh_archive filled in its links."""
    return NAV.sub(NAV_START + NAV_END, html, count=1)


def render_index(archive: Archive) -> str:
    from flows.report.environment import environment

    return keep_units(environment().get_template("archive_index.html.j2").render(archive=archive, href=href))


def refresh_archive(reports_dir: Path, cluster: str | None = None) -> None:
    """Rewrite `<reports_dir>/index.html` and the links in the report.html of `cluster`'s months
    (every cluster's with None). A failure here is a warning, never the run's: the reports are in
    place, and the next run writes the archive again."""
    try:
        archive = scan(reports_dir)
        for entry in archive.clusters:
            if cluster is None or entry.name == cluster:
                _fill_navs(reports_dir / entry.name, entry)
        for study in archive.studies:
            _fill_nav(reports_dir / STUDIES / study.name / "report.html", nav())
        if archive.clusters or archive.studies:
            replace_file_atomically(reports_dir / INDEX, render_index(archive).encode())
    except Exception as error:  # noqa: BLE001 - the month's report is delivered; the archive can wait
        log.warning(
            "archive %s not refreshed (%s: %s); the next run writes it again", reports_dir, type(error).__name__, error
        )
