"""The markdown artifact each flow run publishes: a month's summary, headline figures, delivery and
report path; a backfill's outcome per month. (Published to a real server: test_prefect_server.)"""

from pathlib import Path

import pytest
from saved_month import saved_metrics

from flows.core.outcome import MonthOutcome
from flows.figures.document import MonthDocument
from flows.report.artifact import artifact_key, backfill_markdown, month_markdown

METRICS = {
    "cluster": "rsc1",
    "month": "2026-10",
    "period": {"start": "2026-10-01T00:00:00", "end": "2026-11-01T00:00:00", "complete": True},
    "summary": {
        "text": "The node failure rate over all GPU jobs is 5.25 per 1000 node-days (12 infrastructure failures).",
        "trend": "unchanged",
        "data_quality": {
            "status": "warning",
            "reasons": ["3 input rows could not be read and were left out"],
            "evaluated": 62,
            "successful": 62,
        },
        "headline": [
            {
                "key": "r_f_paper",
                "label": "Node failure rate, jobs > 128 GPUs (paper)",
                "value": 6.126,
                "unit": "per 1000 node-days",
                "format": "dec",
                "previous": 5.0,
                "change": 0.225,
            },
            {
                "key": "infra_failures",
                "label": "Infrastructure failures",
                "value": 1234,
                "unit": "of 56,789 attempts",
                "format": "num",
            },
            {"key": "projected_mttf", "label": "Model MTTF", "value": None, "unit": "at r_f", "format": "duration"},
        ],
        "earlier_months": None,
        "coverage": [],
    },
}


def month(metrics: dict) -> MonthDocument:
    """The saved month's document with `metrics`' cluster, month, period and summary."""
    return MonthDocument.model_validate({**saved_metrics(), **metrics})


@pytest.mark.parametrize(
    ("parts", "key"),
    [
        (("reliability", "rsc1", "2026-10"), "reliability-rsc1-2026-10"),
        (("reliability", "RSC_1.east", "2026-10"), "reliability-rsc-1-east-2026-10"),
        (("backfill", "a..b", "2026-01", "to", "2026-03"), "backfill-a-b-2026-01-to-2026-03"),
    ],
)
def test_keys_keep_to_prefects_rule(parts, key):
    assert artifact_key(*parts) == key  # lowercase letters, digits and dashes only


def test_a_months_artifact_has_the_summary_headline_delivery_and_report():
    text = month_markdown(
        month(METRICS), Path("/srv/reports/rsc1/2026-10/report.html"), "report emailed to ops@example.org"
    )
    assert text.startswith("### Reliability report: rsc1, 2026-10 (October 2026)\n")
    assert METRICS["summary"]["text"] in text
    # the figures as the report formats them, with the change against the month before
    assert "| Node failure rate, jobs \\> 128 GPUs (paper) | 6.13 per 1000 node-days (+22% vs 5.00) |" in text
    assert "| Infrastructure failures | 1,234 of 56,789 attempts |" in text
    assert "| Model MTTF | – at r\\_f |" in text
    assert "**Data quality:** warning: 3 input rows could not be read and were left out" in text
    assert "**Delivery:** report emailed to ops@example.org" in text
    assert "**Report:** `/srv/reports/rsc1/2026-10/report.html`" in text
    assert "Partial" not in text


def test_a_partial_month_and_untrusted_text_in_the_artifact():
    metrics = {**METRICS, "period": {**METRICS["period"], "end": "2026-10-20T06:00:00", "complete": False}}
    hostile = "Lemon-node candidate: <img src=x onerror=alert(1)>|[x](javascript:1)\n# heading"
    metrics["summary"] = {**METRICS["summary"], "text": hostile}
    text = month_markdown(month(metrics), Path("/r/we`ird/report.html"), "archived only (no recipients configured)")
    assert "**Partial month: up to 2026-10-20 06:00 UTC, when its records were taken.**" in text
    assert "[x](" not in text and "\n# heading" not in text
    assert "\\<img src=x onerror=alert(1)\\>\\|\\[x\\](javascript:1) \\# heading" in text
    assert "`` /r/we`ird/report.html ``" in text  # CommonMark drops the spaces


def test_a_backfills_artifact_lists_each_months_outcome():
    outcomes = [
        MonthOutcome("2026-08", "built", "1,000 attempts, 3 infrastructure failures in 20 s; sent"),
        MonthOutcome("2026-09", "skipped", "report built and delivered already"),
        MonthOutcome("2026-10", "failed", "at stage dbt: RuntimeError: x | y", stage="dbt"),
    ]
    text = backfill_markdown("rsc1", "2026-08", "2026-10", outcomes)
    assert text.splitlines() == [
        "### Backfill of rsc1: 2026-08 to 2026-10",
        "",
        "1 built, 1 skipped, 1 failed.",
        "",
        "| month | outcome | detail |",
        "| --- | --- | --- |",
        "| 2026-08 | built | 1,000 attempts, 3 infrastructure failures in 20 s; sent |",
        "| 2026-09 | skipped | report built and delivered already |",
        "| 2026-10 | failed | at stage dbt: RuntimeError: x \\| y |",
    ]
