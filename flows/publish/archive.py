"""The archive site: `<reports>/index.html`, every cluster's months newest first with their headline
figures and data-quality status, a trend of r_f across the months built, links to each report, its
text part and its files, and to every study; and in each month's report.html, links back to the
index and to the months before and after it (in a study's, to the index).

Static HTML only (no script, nothing fetched), with relative links, so it reads the same from
file:// or any web server. It is made from what the report directories hold (metrics.json), never
from the warehouse: refresh_archive() after every run, backfill and study rewrites it, each file
atomically, and gives the same bytes for the same reports. Every name found on disk or in the
figures (a directory, a cluster, a node in the summary) is escaped by the template's autoescape
and put in links percent-encoded.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from flows.core.atomic import replace_file_atomically
from flows.core.months import MONTH_RE

log = logging.getLogger("flows.progress")
INDEX = "index.html"
STUDIES = "studies"
# report.html.j2 writes these two markers with nothing between them; refresh_archive fills them in
NAV_START, NAV_END = "<!-- archive-nav -->", "<!-- /archive-nav -->"
NAV = re.compile(re.escape(NAV_START) + ".*?" + re.escape(NAV_END), re.S)
TREND_WIDTH, TREND_HEIGHT, TREND_PAD = 560, 150, 28  # the r_f chart's SVG user units (it scales to its box)


def href(*parts: str) -> str:
    """A relative link to a path under the reports directory, each part percent-encoded."""
    return "/".join(quote(part, safe="") for part in parts)


@dataclass(frozen=True)
class MonthEntry:
    cluster: str  # the directory's name (as on disk)
    month: str
    metrics: dict  # its metrics.json
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
    y_upper: float


@dataclass(frozen=True)
class Trend:
    """r_f (all GPU jobs) over the months built, with its interval, in the SVG's coordinates."""

    points: tuple[TrendPoint, ...]
    top: float  # the value at the top of the chart
    line: str  # <polyline points>
    band: str  # <polygon points> of the interval
    width: int = TREND_WIDTH
    height: int = TREND_HEIGHT
    left: int = TREND_PAD
    right: int = TREND_WIDTH - TREND_PAD
    bottom: int = TREND_HEIGHT - TREND_PAD  # the zero line


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


def _files(directory: Path) -> tuple[str, ...]:
    return tuple(
        sorted(
            p.relative_to(directory).as_posix()
            for p in directory.rglob("*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(directory).parts)
        )
    )


def _read_metrics(path: Path) -> dict | None:
    """A report's metrics.json, or None (with a warning) when it cannot be read or has no summary."""
    try:
        metrics = json.loads(path.read_text())
    except (OSError, ValueError) as error:  # a report being replaced, or damaged: left out this time
        log.warning("archive: %s left out: %s", path, error)
        return None
    if not (isinstance(metrics, dict) and isinstance(metrics.get("summary"), dict)):
        log.warning("archive: %s left out: no summary (a report of an older version: build the month again)", path)
        return None
    return metrics


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
                if (metrics := _read_metrics(month_dir / "metrics.json")) is not None:
                    months.append(MonthEntry(directory.name, month_dir.name, metrics, _files(month_dir)))
        if months:
            archive.clusters.append(ClusterEntry(directory.name, tuple(months), trend(months)))
    studies = reports_dir / STUDIES
    if studies.is_dir():
        for directory in sorted(p for p in studies.iterdir() if (p / "report.html").is_file()):
            metrics = _read_metrics(directory / "metrics.json") or {"summary": {}}
            archive.studies.append(StudyEntry(directory.name, metrics["summary"].get("text", ""), _files(directory)))
    return archive


def trend(months: list[MonthEntry]) -> Trend | None:
    """The chart of r_f (all GPU jobs) and its interval, oldest month on the left; None without a
    month that has exposure. A month whose r_f was not measured (too little GPU exposure: its value
    is null, flows/figures/measured.py) is no point of it."""
    rates = [
        (m.month, rate)
        for m in reversed(months)
        if isinstance(rate := m.metrics.get("node_failure_rate", {}).get("all"), dict) and rate.get("value") is not None
    ]
    if not rates:
        return None
    top = max(rate["upper"] for _, rate in rates) or 1.0
    width, height = TREND_WIDTH - 2 * TREND_PAD, TREND_HEIGHT - 2 * TREND_PAD
    step = width / (len(rates) - 1) if len(rates) > 1 else 0.0

    def y(value: float) -> float:
        return round(TREND_PAD + height * (1 - value / top), 1)

    points = tuple(
        TrendPoint(
            month=month,
            value=rate["value"],
            lower=rate["lower"],
            upper=rate["upper"],
            x=round(TREND_PAD + (i * step if len(rates) > 1 else width / 2), 1),
            y=y(rate["value"]),
            y_lower=y(rate["lower"]),
            y_upper=y(rate["upper"]),
        )
        for i, (month, rate) in enumerate(rates)
    )
    band = [f"{p.x},{p.y_upper}" for p in points] + [f"{p.x},{p.y_lower}" for p in reversed(points)]
    return Trend(points, top, " ".join(f"{p.x},{p.y}" for p in points), " ".join(band))


def nav(older: MonthEntry | None = None, newer: MonthEntry | None = None) -> str:
    """A report's links, between the markers: the index, and the reports of the months before and
    after it that are built (a study: the index only). Both sit two levels below the index."""
    from flows.report.render import environment

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
    from flows.report.render import environment

    return environment().get_template("archive_index.html.j2").render(archive=archive, href=href)


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
