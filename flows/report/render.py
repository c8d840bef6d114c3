"""Render the monthly report from metrics.json and write the report directory atomically.

The directory (a contract: delivery builds the email from it, see flows/report/message.py):
- `report.html`: self-contained archive copy, charts as data: URIs;
- `email.html`: the same report with CSS inlined and charts as `cid:<name>.png@reliability-report`,
  a `<!-- notice -->` placeholder at the top of the body for a correction banner;
- `report.txt`: the plain-text alternative with the same headline figures;
- `charts/<name>.png`, `metrics.json` (with the `summary` block), `metrics.prom` (its figures as
  OpenMetrics, flows/report/openmetrics.py), and the month's fact tables as
  `<name>.parquet` and `<name>.csv` with `croissant.json` describing them (flows/report/exports.py).

Templates only format (autoescaped HTML; the text template neutralises control characters); they
receive the validated document (flows/figures/document.py `MonthDocument`, a study's
`StudyDocument`), the very object metrics.json is written from, and read its figures as attributes;
the summary comes from flows/figures/summary.py, the charts from flows/report/*_charts.py (which
read the document's figures as attributes too; flows/report/chart_lists.py says which a period
draws). One page template shows any period (templates/page.html.j2): `page_context` gives it the
document, the words of its period (`within`, `this_period`, `page_words`) and its sections (`sections_of`: decided by the document's data, each
figure's from flows/figures/registry.py); each section (templates/partials/) shows the period's
clusters (`period_clusters`); the study's own sections, comparing its clusters, are
partials/study_*. The plain text is one template too (templates/page.txt.j2, `text_sections_of`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from urllib.parse import quote

import css_inline
import pyarrow as pa

from flows.figures.document import MonthDocument, StudyDocument, write_document
from flows.figures.formats import (
    fmt_num,
    keep_units,
    month_name,
    partial_months_notice,
    partial_notice,
)
from flows.figures.read import month_document
from flows.figures.registry import page_sections
from flows.report.chart_lists import charts_of
from flows.report.charts import Chart, draw_charts, month_period, study_period
from flows.report.environment import environment
from flows.report.goodput_charts import MIN_MIX_ATTEMPTS
from flows.report.lemon_export import write_lemon_exports
from flows.report.openmetrics import month_exposition

CHARTS_DIR = "charts"
CID_DOMAIN = "reliability-report"
NOTICE_PLACEHOLDER = "<!-- notice -->"


def content_id(chart: str) -> str:
    """The Content-ID of a chart's MIME part, with angle brackets; email.html refers to it as cid:."""
    return f"<{chart}.png@{CID_DOMAIN}>"


# each kind of period's charts, in the order its page shows them
MONTH_CHARTS = charts_of("month")
STUDY_CHARTS = charts_of("study")

Document = MonthDocument | StudyDocument


def render_charts(document: Document) -> dict[str, Chart]:
    """The document's charts, from its validated figures: a month's one cluster over one month, a
    study's clusters over its range."""
    if isinstance(document, StudyDocument):
        return draw_charts(STUDY_CHARTS, study_period(document))
    return draw_charts(MONTH_CHARTS, month_period(document))


@dataclass(frozen=True)
class Report:
    html: str  # report.html
    email_html: str
    text: str
    charts: dict[str, Chart]
    document: Document  # the figures, validated: what the pages show and metrics.json is written from


def _chart_refs(charts: dict[str, Chart], src) -> dict[str, dict]:
    return {name: {"src": src(c), "alt": c.alt, "width": c.width, "height": c.height} for name, c in charts.items()}


@dataclass(frozen=True)
class Page:
    """The words of a page's period, decided by its document's data (templates/page.html.j2 shows them)."""

    title: str
    heading: str
    text_heading: str  # the plain text's first line
    span: str  # the period, in words
    method_note: str  # after the paper's citation
    notices: list[str]  # a partial month's or months'
    notes: list[str]  # the months a month's comparisons lack
    footer: str
    text_footer: list[str]  # its lines


# a study's page: the clusters side by side (a column or a colour each) over the range
STUDY_FOOTER = (
    "metrics.json beside this study holds every figure; exports/ the clusters' failures, node-days "
    "and job runs over the range as Parquet and CSV."
)
STUDY_TEXT_FOOTER = [
    "The HTML version has the charts and every table (job mix, causes month by month, MTTF and ETTR by size,",
    "E[ETTR] grid, lemon nodes, lost goodput by size, accounts and partitions); metrics.json holds every figure.",
    "Definitions: docs/methodology.md of cluster-reliability-report.",
]
MONTH_TEXT_FOOTER = [
    "The HTML version has the charts, the ETTR figures, data quality and the methodology;",
    "metrics.json holds every figure. Definitions: docs/methodology.md of cluster-reliability-report.",
]


def page_words(document: Document) -> Page:
    """The title, heading and notes of the document's page: one cluster's month, or a study's range."""
    if isinstance(document, StudyDocument):
        clusters = list(document.clusters)
        return Page(
            title=f"Reliability study · {' · '.join(clusters)} · {document.from_month} to {document.to_month}",
            heading=f"Cluster reliability study: {', '.join(clusters)}",
            text_heading=f"Cluster reliability study: {', '.join(clusters)}, {document.from_month} to "
            f"{document.to_month} ({fmt_num(document.months)} months, UTC)",
            span=f"{month_name(document.from_month)} to {month_name(document.to_month)} "
            f"({fmt_num(document.months)} months, UTC)",
            method_note="; each cluster a column or a colour",
            notices=[n] if (n := partial_months_notice(document.clusters)) else [],
            notes=[],
            footer=STUDY_FOOTER,
            text_footer=STUDY_TEXT_FOOTER,
        )
    return Page(
        title=f"Reliability report · {document.cluster} · {document.month}",
        heading=f"Cluster reliability: {document.cluster}, {document.month}",
        text_heading=f"Cluster reliability: {document.cluster}, {document.month} ({month_name(document.month)}, UTC)",
        span=f"{month_name(document.month)} (UTC)",
        method_note="",
        notices=[n] if (n := partial_notice(document.period)) else [],
        notes=[document.summary.earlier_months] if document.summary.earlier_months else [],
        footer="metrics.json and the Parquet tables beside this report hold every figure. Generated by "
        f"cluster-reliability-report {document.reproduce.tool_version}.",
        text_footer=MONTH_TEXT_FOOTER,
    )


def sections_of(document: Document) -> list[str]:
    """The sections of the document's page, in order, as its data decides: the data-quality banner and
    checks where it carries them (a month's), the comparison of its clusters where it has one (a
    study's), the trend and every figure's section (flows/figures/registry.py) unless the operator
    declared the month empty, then the method and how to reproduce it."""
    month = isinstance(document, MonthDocument)
    checked = ["data_quality_banner"] if month else []
    compared = [] if month else ["study_overview", "study_comparison"]
    figures = ["job_mix", *(["failure_rate"] if month else []), "trend", *page_sections()]
    if month and document.no_jobs_declared:  # the summary says no job ran, in place of figures
        figures = []
    return [*checked, "headline", *compared, *figures, *(["data_quality"] if month else []), "methodology", "reproduce"]


def text_sections_of(document: Document) -> list[str]:
    """The sections of the document's plain text, in order (templates/partials/<name>.txt.j2), as its
    data decides, like the page's (`sections_of`): a month's data quality, the headline, the
    fleet's faults where the page shows them alone (a month's), a study's clusters in brief, every
    figure's section (flows/figures/registry.py), a study's comparison."""
    month = isinstance(document, MonthDocument)
    if month and document.no_jobs_declared:  # the summary says no job ran, in place of figures
        return ["data_quality_banner"]
    head = ["data_quality_banner", "headline", "failure_rate"] if month else ["headline", "study_overview"]
    return [*head, *page_sections(), *([] if month else ["study_comparison"])]


def page_context(document: Document) -> dict:
    """What a page's templates receive of its document: the document, also as `metrics` (a month's)
    or `study` (a study's), `period_clusters` (the clusters its period shows, each with its figures:
    a study's several, a month's one; the sections that show each cluster alike iterate over them),
    the words of its period and its sections, of the HTML page and of the text."""
    if isinstance(document, StudyDocument):
        shown = {"study": document, "period_clusters": list(document.clusters.items())}
        words = {"within": "in the range", "this_period": "the study", "period_name": "range"}
    else:
        shown = {"metrics": document, "period_clusters": [(document.cluster, document)]}
        words = {"within": "this month", "this_period": "this month", "period_name": "month"}
    sections = {"sections": sections_of(document), "text_sections": text_sections_of(document)}
    return {
        **shown,
        **words,
        "document": document,
        "page": page_words(document),
        "min_mix_attempts": MIN_MIX_ATTEMPTS,  # below it the job mix has no chart of shares
        **sections,
    }


def explained_bases(document: Document, archive_url: str = "") -> tuple[str | None, str | None]:
    """Where the month's explanation pages (flows/explain/pages.py) are, as report.html links them
    (beside it) and as the email does ([paths] archive_url's month directory; None: not linked).
    A study has none."""
    if not isinstance(document, MonthDocument):
        return None, None
    month_url = f"{archive_url.rstrip('/')}/{quote(document.cluster, safe='')}/{document.month}/"
    return "", month_url if archive_url else None


def render_pages(charts: dict[str, Chart], document: Document, archive_url: str = "") -> tuple[str, str, str]:
    """A report's pages from the one page template, the one text template and its validated document:
    the archived HTML (charts as data: URIs), the email's HTML (CSS inlined, charts as cid:
    references) and the plain text."""
    env = environment()
    context = page_context(document)
    page = env.get_template("page.html.j2")
    page_base, email_base = explained_bases(document, archive_url)
    html = keep_units(
        page.render(
            **context,
            explained_base=page_base,
            charts=_chart_refs(charts, lambda c: "data:image/png;base64," + base64.b64encode(c.png).decode()),
        )
    )
    email_html = css_inline.CSSInliner(keep_style_tags=True, load_remote_stylesheets=False).inline(
        keep_units(
            page.render(
                **context,
                explained_base=email_base,
                charts=_chart_refs(charts, lambda c: "cid:" + content_id(c.name)[1:-1]),
            )
        )
    )
    # the text is the email's plain part too: the archive's URL where there is one
    text_base = email_base or page_base
    return html, email_html, env.get_template("page.txt.j2").render(**context, explained_base=text_base, charts=charts)


def render_document(document: Document, charts: dict[str, Chart] | None = None, archive_url: str = "") -> Report:
    """A report of a month or a study: its pages, plain text and charts (`charts`: drawn already,
    flows/report/drawing.py), and its validated document."""
    charts = render_charts(document) if charts is None else charts
    html, email_html, text = render_pages(charts, document, archive_url)
    return Report(html=html, email_html=email_html, text=text, charts=charts, document=document)


def build_report(metrics: dict, charts: dict[str, Chart] | None = None, archive_url: str = "") -> Report:
    """Everything the report directory holds besides the tables, from the month's full metrics."""
    return render_document(month_document(metrics), charts, archive_url)


def write_pages(out: Path, report: Report) -> None:
    """What every report directory holds, a month's or a study's: its pages (report.html, email.html,
    report.txt), its charts (charts/<name>.png) and metrics.json (docs/metrics.md)."""
    (out / CHARTS_DIR).mkdir(parents=True, exist_ok=True)
    (out / "report.html").write_text(report.html)
    (out / "email.html").write_text(report.email_html)
    (out / "report.txt").write_text(report.text)
    for chart in report.charts.values():
        (out / CHARTS_DIR / f"{chart.name}.png").write_bytes(chart.png)
    write_document(out / "metrics.json", report.document)


def notice_html(notice: str) -> str:
    """The banner that replaces NOTICE_PLACEHOLDER in email.html (styles inline: it goes in after inlining)."""
    return environment().get_template("partials/notice.html.j2").render(notice=notice)


def write_report(
    report_dir: Path,
    metrics: dict,
    tables: dict[str, pa.Table] | None = None,
    charts: dict[str, Chart] | None = None,
    archive_url: str = "",
) -> dict[str, Path]:
    """Write the report's files into `report_dir` (the pipeline gives a staged directory that replaces
    the month's only once delivery is decided: flows/core/atomic.py staged_replacement). Returns their
    paths. `charts`: drawn already (flows/report/drawing.py), else drawn here."""
    report = build_report(metrics, charts, archive_url)
    document = report.document
    write_pages(report_dir, report)
    (report_dir / "metrics.prom").write_bytes(month_exposition(document))  # flows/report/openmetrics.py
    if tables:
        from flows.report.exports import write_exports  # mlcroissant takes seconds to import: only when writing

        write_exports(
            tables,
            report_dir,
            name=f"{document.cluster} {document.month} reliability facts",
            description=f"The month's figures row by row for cluster {document.cluster}, {document.month}: "
            "each infrastructure failure with its cause, each node-day, each long job run with its ETTR.",
            published=date.fromisoformat(document.period.end[:10]),
        )
    write_lemon_exports(report_dir, document)
    return report_paths(report_dir)


def report_paths(report_dir: Path) -> dict[str, Path]:
    """The paths of a month's report directory's main files, by name."""
    return {
        "dir": report_dir,
        "report": report_dir / "report.html",
        "email": report_dir / "email.html",
        "text": report_dir / "report.txt",
        "metrics": report_dir / "metrics.json",
    }
