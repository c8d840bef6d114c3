"""The archive page (reports/index.html) rendered from report directories that hold only a
metrics.json (the golden month's, edited): its r_f chart has a named value axis with its unit and
its months labelled, and a partial or thin month's interval does not set its scale; the month cards
give data-quality warnings in words; counts take the project's one plural rule. Quick: no month is
built, no browser (test_publish_archive.py shows the page in chromium)."""

from __future__ import annotations

import copy
import json
import re
from html import unescape
from pathlib import Path

import pytest

from flows.figures.document import MonthDocument
from flows.figures.summary import summarise
from flows.publish.archive import INDEX, refresh_archive, scan

GOLDEN = Path(__file__).resolve().parent / "data" / "golden" / "reports" / "month" / "metrics.json"
THIN = "12 GPU jobs on 9.2 GPU node-days this month: too little to measure a failure rate (100 needed)"
ROW_COUNT = {"expectation": "expect_table_row_count_to_be_between", "column": None, "observed": 0,
             "unexpected_count": None, "sample": None}  # fmt: skip


FINDING = (
    "xid_syslog: 3 of the 12 nodes it names are in no job record or Slurm node event (e.g. gpu-x (xid.log:7)), "
    "so their events attribute to no job; no simple rule (a domain suffix, case, a prefix) maps most of them"
)


def month(name: str, rate: dict | None = None, *, complete: bool = True, warnings: dict | None = None) -> dict:
    """The golden month as `name`, with r_f (all GPU jobs) `rate` (None: not measured, too little
    exposure), its period complete or not, and warnings {suite: failed expectation}."""
    metrics = copy.deepcopy(json.loads(GOLDEN.read_text()))
    metrics["month"] = name
    metrics["history"]["monthly"] = []
    if rate is None:
        metrics["node_failure_rate"]["all"] |= {
            "value": None, "lower": None, "upper": None, "failures": None, "node_days": 9.2, "not_measured": THIN
        }  # fmt: skip
        metrics["not_measured"] = {"node_failure_rate.all": THIN}
    else:
        metrics["node_failure_rate"]["all"] |= rate
    if not complete:
        metrics["period"] = {"start": f"{name}-01T00:00:00", "end": f"{name}-03T06:00:00", "complete": False}
    for suite in metrics["data_quality"]:
        suite["warnings"] = [(warnings or {})[suite["suite"]]] if suite["suite"] in (warnings or {}) else []
    metrics["summary"] = summarise(metrics)
    return metrics


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> Path:
    """rsc2: a complete month, a thin month measured before `not_measured` (its r_f over 9.2 node-days),
    a month not measured, a complete month with warnings, and a partial month (2 days)."""
    reports = tmp_path_factory.mktemp("archive-page") / "reports"
    months = {
        "2026-07": month("2026-07", {"value": 3.1, "lower": 1.2, "upper": 7.9, "node_days": 1650.0}),
        "2026-08": month("2026-08", {"value": 0.0, "lower": 0.0, "upper": 400.9, "node_days": 9.2, "failures": 0}),
        "2026-09": month("2026-09", None),
        "2026-10": month(
            "2026-10",
            {"value": 2.29, "lower": 0.62, "upper": 5.86, "node_days": 1748.7},
            warnings={
                "dim_nodes": ROW_COUNT,
                "node_names": {
                    "expectation": "expect_column_values_to_be_null",
                    "column": "source_nodes_unmatched",
                    "observed": None,
                    "unexpected_count": 1,
                    "sample": [FINDING],
                },
            },  # fmt: skip
        ),
        "2026-11": month("2026-11", {"value": 0.0, "lower": 0.0, "upper": 4274.9, "node_days": 250.0}, complete=False),
    }
    for name, metrics in months.items():
        (reports / "rsc2" / name).mkdir(parents=True)
        (reports / "rsc2" / name / "metrics.json").write_text(json.dumps(metrics))
    (reports / "rsc1" / "2026-10").mkdir(parents=True)  # one month of one file
    (reports / "rsc1" / "2026-10" / "metrics.json").write_text(json.dumps(months["2026-10"]))
    refresh_archive(reports)
    return reports


@pytest.fixture(scope="module")
def page(reports) -> str:
    return (reports / INDEX).read_text()


def svg_texts(page: str, cluster: int = 2) -> list[str]:
    """The chart's texts as read (a subscript's tspan joined to its text, no-break spaces as spaces)."""
    section = page[page.index(f'<section id="cluster-{cluster}">') :]
    svg = section[section.index("<svg") : section.index("</svg>")]
    texts = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return [unescape(re.sub(r"<[^>]+>", "", t)).replace("\xa0", " ") for t in texts]


def words(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_r_f_chart_names_its_value_axis_with_its_unit_and_labels_its_months(page):
    texts = svg_texts(page)
    assert "rf, per 1000 node-days" in texts and '<text class="trend-text trend-name" x="4" y="22">r<tspan' in page
    ticks = [t for t in texts if re.fullmatch(r"[\d,.]+", t)]
    assert len(ticks) >= 3 and float(ticks[0]) == 0.0  # a value axis from 0, a few ticks
    months = [t for t in texts if re.fullmatch(r"\d{4}-\d{2}", t)]
    assert months[-1] == "2026-11" and len(months) >= 3  # the newest month and others on the month axis


def test_a_partial_or_thin_months_interval_does_not_set_the_scale(reports, page):
    (cluster,) = [c for c in scan(reports).clusters if c.name == "rsc2"]
    t = cluster.trend
    assert 7.9 <= t.top <= 10  # the complete months' intervals (up to 7.9) set it, not 4,274.9 nor 400.9
    assert [(p.month, p.clipped) for p in t.clipped] == [
        ("2026-08", "too little GPU exposure"),
        ("2026-11", "a partial month"),
    ]
    assert all(p.y_upper == t.plot_top for p in t.clipped)  # cut at the top of the chart
    assert page.count('class="trend-clip"') == 2
    section = page[page.index('<section id="cluster-2">') :]
    caption = words(section[section.index("<figcaption>") : section.index("</figcaption>")])
    assert "November 2026: interval 0.00–4,274.90, cut at the top (a partial month: it does not set the scale)" in (
        caption
    )
    assert f"Not measured: September 2026 ({THIN})." in caption
    assert [p.month for p in t.points] == ["2026-07", "2026-08", "2026-10", "2026-11"]
    assert [m for m, _, _ in t.months] == ["2026-07", "2026-08", "2026-09", "2026-10", "2026-11"]
    assert len(t.lines) == 2  # no line drawn across the month not measured
    assert t.bands == () and [p.month for p in t.whiskers] == [p.month for p in t.points]  # no band beside a cut one
    assert page.count("trend-whisker trend-whisker-cut") == 2 and page.count("trend-point trend-point-open") == 2


def test_the_month_cards_give_data_quality_warnings_in_words(page):
    text = words(page)
    assert "no node ran a job this month" in text
    assert FINDING in text  # a source's nodes that no job record names, in the landing's words
    assert "expect" not in text.lower()  # no Great Expectations name
    assert "dim_nodes" not in text and "dim nodes" not in text


def test_the_not_measured_headline_stays(page):
    assert f"Node failure rate, all GPU jobs: not measured : {THIN}" in words(page)


def test_counts_take_the_plural_rule(page):
    text = words(page)
    assert "2 clusters, 6 monthly reports." in text
    assert (
        "rsc1 : 1 month, 2026-10 rsc2 : 5 months, 2026-07 to 2026-11" in text and "1 month built, October 2026." in text
    )
    assert "1 file " in text and "All 1 files" not in text and re.search(r"\b1 \w+s\b", text) is None


def test_complete_months_share_a_band_and_many_months_are_labelled_as_many_as_fit():
    from flows.publish.archive import MonthEntry, trend

    names = [f"{2025 + (i + 9) // 12}-{(i + 9) % 12 + 1:02d}" for i in range(14)]  # 2025-10 to 2026-11
    entries = [
        MonthEntry(
            "rsc3",
            name,
            MonthDocument.model_validate(month(name, {"value": 2.0 + i % 3, "lower": 1.0, "upper": 6.0 + i % 3})),
            (),
        )
        for i, name in enumerate(names)
    ]
    t = trend(list(reversed(entries)))  # newest first, as scan() lists them
    assert len(t.bands) == 1 and t.whiskers == () and t.top == 8
    labelled = [m for m, _, shown in t.months if shown]
    assert labelled[-1] == "2026-11" and 3 <= len(labelled) <= 6  # the newest, and as many as fit
    assert [label for label, _ in t.ticks] == ["0", "2", "4", "6", "8"]


def test_a_cards_warning_is_named_under_its_badge(page):
    """September's r_f was not measured (too little GPU exposure): its card's "data quality: warning"
    is followed by that warning, before the summary, not left for the reader to match with a
    report whose expectations were all met."""
    card = page[page.index('<a href="rsc2/2026-09/report.html">') :]
    card = card[: card.index("</article>")]
    badge, summary = card.index("data quality: warning"), card.index('<p class="summary">')
    reasons = card.index('<ul class="reasons">')
    assert badge < reasons < summary
    assert THIN in words(card[reasons:summary])
