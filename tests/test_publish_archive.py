"""The archive site (reports/index.html) as people open it: from file:// and from a web server, in
Debian's headless chromium (playwright) at a phone's 375 px, a mail pane's 600 px and a desktop's
1280 px; every link leads to a file, each report links back to the index and to its neighbours,
and hostile cluster and job names stay text. Screenshots go to test-artifacts/publish-archive/."""

from __future__ import annotations

import functools
import json
import re
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from itertools import combinations
from pathlib import Path
from urllib.parse import unquote

import pytest
from publish_history import CLUSTER, MONTHS, built_history, month_metrics

from flows.core.months import Month
from flows.figures.formats import month_name
from flows.publish.archive import refresh_archive

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "publish-archive"
HOSTILE_CLUSTER = '<img src=x onerror=alert(1)> "rack 7"'
HOSTILE_JOB = "<script>alert(2)</script>-pretrain"


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> dict:
    return built_history(tmp_path_factory)


@pytest.fixture(scope="module")
def site(history, tmp_path_factory) -> Path:
    """A copy of the history's reports with a second cluster of hostile name whose newest month's
    summary quotes a hostile job name; its index written again."""
    reports = tmp_path_factory.mktemp("archive") / "reports"
    shutil.copytree(history["reports"], reports)
    shutil.copytree(reports / CLUSTER, reports / HOSTILE_CLUSTER)
    newest = reports / HOSTILE_CLUSTER / MONTHS[-1] / "metrics.json"
    metrics = json.loads(newest.read_text())
    metrics["cluster"] = HOSTILE_CLUSTER
    metrics["summary"]["text"] = f"Job {HOSTILE_JOB} failed twice."
    metrics["summary"]["data_quality"] |= {"status": "warning", "reasons": [f"1 quarantined row: {HOSTILE_JOB}"]}
    newest.write_text(json.dumps(metrics))
    refresh_archive(reports)
    return reports


def leave_nothing(route, requests: list[str]) -> None:
    if route.request.url.startswith(("file:", "data:")):
        route.continue_()
    else:
        requests.append(route.request.url)
        route.abort()


def test_the_pipeline_wrote_the_index_of_the_months_it_built(history):
    index = (history["reports"] / "index.html").read_text()
    assert all(f'href="{CLUSTER}/{month}/report.html"' in index for month in MONTHS)
    newest = (history["reports"] / CLUSTER / MONTHS[-1] / "report.html").read_text()
    assert 'href="../../index.html"' in newest and f'href="../{MONTHS[-2]}/report.html" rel="prev"' in newest


@pytest.mark.parametrize("width", [375, 600, 1280])
def test_the_archive_reads_well_in_a_browser(browser, site, width, capsys):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": 900})
    requests, dialogs = [], []
    context.route("**/*", lambda route: leave_nothing(route, requests))
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto((site / "index.html").as_uri(), wait_until="load")
    shot = ARTIFACTS / f"index-{width}px.png"
    page.screenshot(path=shot, full_page=True)
    with capsys.disabled():
        print(f"\nscreenshot: {shot}")

    assert page.evaluate("document.documentElement.scrollWidth") <= page.evaluate("innerWidth") == width
    assert page.evaluate("document.scripts.length") == 0
    headings = page.locator("h2").all_inner_texts()
    assert headings == sorted([CLUSTER, HOSTILE_CLUSTER])  # names as text, never markup
    text = page.inner_text("body")
    assert f"Job {HOSTILE_JOB} failed twice." in text
    for month in MONTHS:  # every month, newest first, with its headline r_f
        metrics = month_metrics(site, month)
        assert month_name(month) in text and f"{metrics['node_failure_rate']['all']['value']:.2f}" in text
    months = page.locator(f"#cluster-{sorted([CLUSTER, HOSTILE_CLUSTER]).index(CLUSTER) + 1} h3 a").all_inner_texts()
    assert months == [month_name(m) for m in reversed(MONTHS)]
    trend = page.locator("figure svg").first.bounding_box()
    assert trend["width"] > 200 and trend["x"] + trend["width"] <= width  # the r_f trend fits the screen
    labels = page.eval_on_selector_all("figure svg text", "ts => ts.map(t => t.getBoundingClientRect().height)")
    assert labels and min(labels) >= 10, labels  # its text readable as shown, on a phone too
    assert requests == [] and dialogs == []
    context.close()


# Each text of the archive's r_f chart and each mark it draws (a point, an interval's whisker, a cut
# interval's triangle), as shown: its box, and a text's font size as displayed (its size in the
# SVG's units times the SVG's scale).
CHART_BOXES = """svg => {
  const scale = svg.getScreenCTM().a;
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {
    texts: [...svg.querySelectorAll("text, tspan")].map(t => ({text: t.textContent, box: box(t),
      px: parseFloat(getComputedStyle(t).fontSize) * scale})),
    marks: [...svg.querySelectorAll("circle, line.trend-whisker, polygon.trend-clip")].map(m =>
      ({mark: m.outerHTML.slice(0, 60), box: box(m)})),
  };
}"""


def overlap(a: list[float], b: list[float], tolerance: float = 1.0) -> bool:
    """Two boxes (left, top, right, bottom) share more than `tolerance` px both ways."""
    return min(a[2], b[2]) - max(a[0], b[0]) > tolerance and min(a[3], b[3]) - max(a[1], b[1]) > tolerance


@pytest.fixture(scope="module")
def year(history, tmp_path_factory) -> Path:
    """The history's six months and six more before them (copies of its metrics.json, renamed): a
    year, whose months the chart labels every other or third one, as the demo's."""
    reports = tmp_path_factory.mktemp("archive-year") / "reports"
    shutil.copytree(history["reports"], reports)
    for month in MONTHS:
        earlier = Month.parse(month)
        for _ in MONTHS:
            earlier = earlier.previous()
        earlier = str(earlier)
        metrics = month_metrics(reports, month) | {"month": earlier}
        (reports / CLUSTER / earlier).mkdir()
        (reports / CLUSTER / earlier / "metrics.json").write_text(json.dumps(metrics))
    refresh_archive(reports)
    return reports


@pytest.mark.parametrize("width", [375, 600, 1280])
@pytest.mark.parametrize("span", ["six months", "a year"])
def test_the_archive_chart_keeps_its_texts_apart_and_off_its_marks(browser, site, year, span, width):
    """The r_f chart of six months and of a year (a month's label centred on its tick, never pushed
    onto its neighbour's: "2026-08" was over "2026-10"): no text over another text, a point, a
    whisker or a cut interval's mark; every text at least 10 px as displayed and the axis's texts
    12 px on a phone; r typeset with a subscript f."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(((site if span == "six months" else year) / "index.html").as_uri(), wait_until="load")
    for svg in page.locator("figure svg").all():
        drawn = svg.evaluate(CHART_BOXES)
        texts = [t for t in drawn["texts"] if t["text"].strip()]
        whole = [t for t in texts if not t["text"] == "f"]  # the subscript is inside its text's box
        assert [t["text"] for t in texts if re.fullmatch(r"\d{4}-\d{2}", t["text"])][-1] == MONTHS[-1]
        clashes = [(a["text"], b["text"]) for a, b in combinations(whole, 2) if overlap(a["box"], b["box"])]
        clashes += [(t["text"], m["mark"]) for t in whole for m in drawn["marks"] if overlap(t["box"], m["box"], 0)]
        assert clashes == []
        assert min(t["px"] for t in texts) >= 10, texts
        assert min(t["px"] for t in whole) >= 12, texts
        assert "r_f" not in svg.text_content() and svg.locator("text.trend-name tspan").text_content() == "f"
    context.close()


def test_every_link_leads_to_a_file_and_each_report_to_its_neighbours(browser, site):
    context = browser.new_context(viewport={"width": 600, "height": 900})
    page = context.new_page()
    page.goto((site / "index.html").as_uri())
    links = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    files = [unquote(link.removeprefix("file://")) for link in links if not link.split("#")[0].endswith("index.html")]
    assert files and all(Path(f).is_file() for f in files), [f for f in files if not Path(f).is_file()]
    page.goto((site / CLUSTER / MONTHS[2] / "report.html").as_uri())  # a month in the middle
    page.click("a[rel=prev]")
    assert page.url.endswith(f"/{CLUSTER}/{MONTHS[1]}/report.html")
    page.click("a[rel=next]")
    page.click("a[rel=next]")
    assert page.url.endswith(f"/{CLUSTER}/{MONTHS[3]}/report.html")
    page.click("text=All reports")
    assert page.url.endswith("/index.html") and page.locator("h1").inner_text() == "Cluster reliability reports"
    context.close()


def test_the_archive_reads_from_a_web_server(browser, site):
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(site))
    http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        assert page.goto(f"http://127.0.0.1:{http.server_address[1]}/index.html").status == 200
        with page.expect_navigation():
            page.click(f"h3 a:has-text('{month_name(MONTHS[-1])}') >> nth=0")
        assert page.url.endswith(f"/{MONTHS[-1]}/report.html") and "Cluster reliability:" in page.inner_text("h1")
        context.close()
    finally:
        http.shutdown()
