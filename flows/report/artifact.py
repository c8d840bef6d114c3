"""The markdown artifact a flow run publishes in Prefect: what a month's run produced (summary line,
headline figures, delivery, report path), or each month's outcome of a backfill.

The text is built by plain functions from the month's document (its metrics.json read by
flows/figures/read.py; the figures formatted as the report formats them); publishing is the only
call to Prefect.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from flows.core.escape import escaped_logger
from flows.core.outcome import MonthOutcome
from flows.figures.document import MonthDocument
from flows.figures.formats import month_name, partial_notice
from flows.figures.read import read_document
from flows.figures.summary import headline_figure

log = escaped_logger(__name__)
OUTCOMES = ("built", "skipped", "failed")  # a backfill month's outcome, as flows/backfill.py names them


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key from `parts`: lowercase letters, digits and dashes only (Prefect's rule)."""
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def _text(value: object) -> str:
    """Text from the logs or the metrics as inert markdown on one line: no HTML, links, emphasis or
    table breaks (node names and causes come from the cluster's logs)."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join(str(value).split()))


def _code(text: str) -> str:
    """`text` as a code span, its fence longer than any run of backticks in it."""
    fence = "`" * (max(map(len, re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{text}{fence}" if fence == "`" else f"{fence} {text} {fence}"


def month_markdown(document: MonthDocument, report: Path, delivery: str) -> str:
    """A month's artifact from its document (with the `summary` block), its report and what delivery did."""
    summary = document.summary
    lines = [f"### Reliability report: {_text(document.cluster)}, {document.month} ({month_name(document.month)})"]
    if notice := partial_notice(document.period):
        lines += ["", f"**{_text(notice)}**"]
    lines += ["", _text(summary.text), "", "| headline figure | value |", "| --- | --- |"]
    lines += [f"| {_text(item.label)} | {_text(headline_figure(item))} |" for item in summary.headline]
    quality = summary.data_quality
    reasons = "; ".join(_text(reason) for reason in quality.reasons)
    lines += [
        "",
        f"**Data quality:** {quality.status}" + (f": {reasons}" if reasons else ""),
        "",
        f"**Delivery:** {_text(delivery)}",
        "",
        f"**Report:** {_code(str(report))}",
    ]
    return "\n".join(lines) + "\n"


def backfill_markdown(cluster: str, first: str, last: str, outcomes: list[MonthOutcome]) -> str:
    """A backfill's artifact: how many months were built, skipped and failed, and each month's detail."""
    counts = Counter(o.outcome for o in outcomes)
    lines = [
        f"### Backfill of {_text(cluster)}: {first} to {last}",
        "",
        ", ".join(f"{counts[outcome]} {outcome}" for outcome in OUTCOMES) + ".",
        "",
        "| month | outcome | detail |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {o.month} | {o.outcome} | {_text(o.detail)} |" for o in outcomes]
    return "\n".join(lines) + "\n"


def _publish(markdown: str, key: str, description: str) -> None:
    from prefect.artifacts import create_markdown_artifact  # ~2 s of imports: only where one is published

    try:
        create_markdown_artifact(markdown=markdown, key=key, description=description)
    except Exception as exc:  # the report is written and delivered: a missing artifact must not fail the run
        log.warning("artifact %s not published: %s: %s", key, type(exc).__name__, exc)


def publish_month_artifact(metrics_path: Path, report: Path, delivery: str) -> None:
    """Publish a month run's artifact, key `reliability-<cluster>-<YYYY-MM>`, from its metrics.json."""
    document = read_document(metrics_path)
    if not isinstance(document, MonthDocument):  # a month's run writes a month's document
        raise TypeError(f"{metrics_path}: a study's figures, not a month's")
    key = artifact_key("reliability", document.cluster, document.month)
    description = f"Reliability report of {document.cluster}, {document.month}"
    _publish(month_markdown(document, report, delivery), key, description)


def publish_backfill_artifact(cluster: str, first: str, last: str, outcomes: list[MonthOutcome]) -> None:
    """Publish a backfill run's artifact, key `backfill-<cluster>-<first>-to-<last>`."""
    key = artifact_key("backfill", cluster, first, "to", last)
    _publish(backfill_markdown(cluster, first, last, outcomes), key, f"Backfill of {cluster}, {first} to {last}")
