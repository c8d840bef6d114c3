"""Write a study's directory in the report directory's layout (flows/report/render.py), so that delivery
sends it like a month's report: `report.html` (charts as data: URIs), `email.html` (CSS inlined,
charts as cid:), `report.txt`, `charts/<name>.png`, `metrics.json` (the study's figures with their
`summary`), and the clusters' fact tables over the range as Parquet and CSV with `croissant.json`."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa

from flows.figures.document import StudyDocument, write_document
from flows.figures.read import study_document
from flows.report.chart_lists import charts_of
from flows.report.charts import Chart, draw_charts, study_period
from flows.report.exports import write_exports
from flows.report.render import CHARTS_DIR, Report, render_pages

# the study's charts, in the order it shows them: the same figures as a month's where it has them
STUDY_CHARTS = charts_of("study")


def render_study_charts(document: StudyDocument) -> dict[str, Chart]:
    """The study's charts: its clusters over its range of months, from its validated document."""
    return draw_charts(STUDY_CHARTS, study_period(document))


def render_study(study: dict) -> Report:
    """The study's pages, plain text and charts, and its validated document."""
    document = study_document(study)
    charts = render_study_charts(document)
    html, email_html, text = render_pages(charts, document)
    return Report(html=html, email_html=email_html, text=text, charts=charts, document=document)


def write_study(out: Path, study: dict, tables: dict[str, pa.Table], published: date) -> dict[str, Path]:
    """Write the study into `out` (a staged directory); returns the paths of its main files."""
    report = render_study(study)
    document, charts = report.document, report.charts
    (out / CHARTS_DIR).mkdir(parents=True, exist_ok=True)
    (out / "report.html").write_text(report.html)
    (out / "email.html").write_text(report.email_html)
    (out / "report.txt").write_text(report.text)
    for chart in charts.values():
        (out / CHARTS_DIR / f"{chart.name}.png").write_bytes(chart.png)
    write_document(out / "metrics.json", document)  # docs/metrics.md
    clusters = " and ".join(document.clusters)
    write_exports(
        tables,
        out / "exports",
        name=f"{clusters} reliability facts {document.from_month} to {document.to_month}",
        description=f"Each infrastructure failure with its cause, each node-day and each job run with its ETTR, "
        f"of {clusters}, {document.from_month} to {document.to_month}.",
        published=published,
    )
    return {"dir": out, "report": out / "report.html", "metrics": out / "metrics.json"}
