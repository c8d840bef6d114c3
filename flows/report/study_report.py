"""Write a study's directory in the report directory's layout (flows/report/render.py), so that delivery
sends it like a month's report: `report.html` (charts as data: URIs), `email.html` (CSS inlined,
charts as cid:), `report.txt`, `charts/<name>.png`, `metrics.json` (the study's figures with their
`summary`), and the clusters' fact tables over the range as Parquet and CSV with `croissant.json`."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa

from flows.figures.read import study_document
from flows.report.exports import write_exports
from flows.report.render import Report, render_document, write_pages


def render_study(study: dict) -> Report:
    """The study's pages, plain text and charts, and its validated document."""
    return render_document(study_document(study))


def write_study(out: Path, study: dict, tables: dict[str, pa.Table], published: date) -> dict[str, Path]:
    """Write the study into `out` (a staged directory); returns the paths of its main files."""
    report = render_study(study)
    document = report.document
    write_pages(out, report)
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
