"""The report as an email: the MIME tree flows/report/message.py builds from a report directory.

The quick tier builds no month (docs/testing.md): the directory here is rendered (write_report,
as the pipeline does) from a real month's saved metrics, the month tests/test_study.py builds with
the monthly pipeline (tests/data/golden/reports/month/metrics.json, written again with the golden
outputs). The message of a month the pipeline built itself: tests/test_report.py (slow).
"""

import json
import shutil
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from test_report import CID, Page, headline_strings

from flows.report.message import build_message
from flows.report.render import NOTICE_PLACEHOLDER, write_report

SAVED_MONTH = Path(__file__).resolve().parent / "data" / "golden" / "reports" / "month" / "metrics.json"


@pytest.fixture(scope="module")
def october(tmp_path_factory) -> Path:
    """A month's report directory: report.html, email.html, report.txt, metrics.json and charts/."""
    report_dir = tmp_path_factory.mktemp("report") / "2026-10"
    write_report(report_dir, json.loads(SAVED_MONTH.read_text()))
    return report_dir


def charts_shown(report_dir: Path) -> list[str]:
    """The charts email.html shows, in order: each must be in the message."""
    return [CID.fullmatch(img["src"])[1] for img in Page((report_dir / "email.html").read_text()).images()]


def message(report_dir, notice=None):
    return build_message(
        report_dir,
        sender="reports@example.org",
        recipients=["lead@example.org", "oncall@example.org"],
        subject=f"Cluster reliability, {month_of(report_dir)}",
        notice=notice,
    )


def month_of(report_dir: Path) -> str:
    return json.loads((report_dir / "metrics.json").read_text())["month"]


def tree(part) -> list:
    if part.is_multipart():
        return [part.get_content_type(), [tree(p) for p in part.iter_parts()]]
    return part.get_content_type()


def assert_the_message_is_the_report(report_dir: Path) -> None:
    """The message of a report directory, parsed back from the bytes a mail server would get: its
    text part is report.txt, its HTML part email.html, and each chart that shows is a related part."""
    msg = message_from_bytes(message(report_dir).as_bytes(), policy=policy.default)
    month = month_of(report_dir)
    assert msg["To"] == "lead@example.org, oncall@example.org" and msg["Subject"] == f"Cluster reliability, {month}"
    charts = {p.stem for p in (report_dir / "charts").iterdir()}
    assert len(charts) >= 2 and set(charts_shown(report_dir)) == charts  # every chart drawn is shown
    assert tree(msg) == [
        "multipart/alternative",
        ["text/plain", ["multipart/related", ["text/html", *["image/png"] * len(charts)]]],
    ]
    text_part, related = msg.get_payload()
    html_part, *images = related.get_payload()
    html = html_part.get_content()
    assert html.rstrip("\n") == (report_dir / "email.html").read_text().rstrip("\n")  # MIME ends lines
    referenced = {CID.fullmatch(img["src"])[1] for img in Page(html).images()}
    attached = {}
    for image in images:
        cid = image["Content-ID"]
        assert cid.startswith("<") and cid.endswith(".png@reliability-report>")
        assert image.get_content_disposition() == "inline"
        attached[CID.fullmatch("cid:" + cid[1:-1])[1]] = image.get_content()
    assert set(attached) == referenced == charts  # every reference has its part, and every part a reference
    assert all(png == (report_dir / "charts" / f"{name}.png").read_bytes() for name, png in attached.items())
    text = text_part.get_content()
    assert text == (report_dir / "report.txt").read_text()
    metrics = json.loads((report_dir / "metrics.json").read_text())
    assert all(figure in text for figure in headline_strings(metrics))
    assert metrics["summary"]["text"] in text


def test_the_message_is_alternative_text_and_related_html_with_its_charts(october):
    assert_the_message_is_the_report(october)


def test_content_ids_are_the_same_every_time(october):
    ids = [[p["Content-ID"] for p in message(october).walk() if p["Content-ID"]] for _ in range(2)]
    assert ids[0] == ids[1] == [f"<{name}.png@reliability-report>" for name in charts_shown(october)]


def test_a_notice_is_an_escaped_banner_on_top_of_both_parts(october):
    notice = "Correction: this replaces the report sent on 2026-11-02 <b>onmouseover=alert(1)</b>"
    msg = message(october, notice=notice)
    html = msg.get_body(("html",)).get_content()
    text = msg.get_body(("plain",)).get_content()
    assert NOTICE_PLACEHOLDER not in html
    escaped = "Correction: this replaces the report sent on 2026-11-02 &lt;b&gt;onmouseover=alert(1)&lt;/b&gt;"
    assert escaped in html and html.index(escaped) < html.index("<h1")
    assert Page(html).is_inert() and "<b>onmouseover" not in html
    assert text.startswith(notice + "\n") and text.endswith((october / "report.txt").read_text())


def test_a_chart_the_html_shows_must_be_there(october, tmp_path):
    copy = tmp_path / "report"
    shutil.copytree(october, copy)
    (copy / "charts" / "mttf.png").unlink()
    with pytest.raises(FileNotFoundError, match="shows chart 'mttf'"):
        message(copy)
