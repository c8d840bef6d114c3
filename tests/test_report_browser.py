"""The report in a real browser: Debian's headless chromium (the Makefile installs it) driven by
playwright, at a mail pane's 600 px and a phone's 375 px. Screenshots are kept under
test-artifacts/report-browser/."""

import base64
import json
from pathlib import Path

import pytest
from test_report import CHARTS, CID, OCTOBER, built_months, headline_strings

from flows.report.render import Report, build_report

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "report-browser"


@pytest.fixture(scope="module")
def october(tmp_path_factory) -> Path:
    return built_months(tmp_path_factory)[str(OCTOBER)]


@pytest.fixture(scope="module")
def pages(october) -> dict[str, Path]:
    """report.html as archived, and email.html as a mail client shows it: each cid: reference
    replaced by its MIME part's image (here, the PNG in charts/)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    email = email_as_shown(
        (october / "email.html").read_text(), lambda name: (october / "charts" / f"{name}.png").read_bytes()
    )
    shown = ARTIFACTS / "email-as-shown.html"
    shown.write_text(email)
    return {"report": october / "report.html", "email": shown}


def email_as_shown(email_html: str, png) -> str:
    """email.html as a mail client shows it: each cid: reference replaced by its MIME part's image."""
    return CID.sub(lambda m: "data:image/png;base64," + base64.b64encode(png(m[1])).decode(), email_html)


LEMONS = [f"rsc1-gpu-node-{n:04d}" for n in range(101, 121)]
JOB = "pretrain-llama3-70b-ablation-lr3e-4-seed17"


@pytest.fixture(scope="module")
def long_names(october) -> tuple[Report, list[str]]:
    """The October report with names as real sites have them: lemon nodes like rsc1-gpu-node-0101
    (in the summary and the lemon table), and a data-quality warning quoting node and job names;
    with the names to find in the page (and the reproduce command's options)."""
    metrics = json.loads((october / "metrics.json").read_text())
    for candidate, node in zip(metrics["lemon_nodes"]["candidates"], LEMONS, strict=False):
        candidate["node"] = node
    suite = next(q for q in metrics["data_quality"] if q["suite"] == "health_events_classified")
    suite["warnings"] = [
        {"expectation": "expect_column_values_to_be_unique", "column": "node", "observed": None,
         "unexpected_count": 2, "sample": LEMONS[:2]},
        {"expectation": "expect_column_values_to_not_be_null", "column": "job_name", "observed": None,
         "unexpected_count": 1, "sample": [JOB]},
    ]  # fmt: skip
    names = [c["node"] for c in metrics["lemon_nodes"]["candidates"]] + [suite["suite"], JOB, *metrics["inputs"]]
    # the reproduce command's options: a line breaks between its words, never after "--" (a path
    # longer than a phone's line breaks where it must)
    names += [word for word in metrics["reproduce"]["command"].split() if word.startswith("--")]
    return build_report(metrics), names


@pytest.fixture(scope="module")
def long_name_pages(long_names) -> dict[str, Path]:
    report, _ = long_names
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "long-names.html").write_text(report.html)
    email = email_as_shown(report.email_html, lambda name: report.charts[name].png)
    (ARTIFACTS / "long-names-email.html").write_text(email)
    return {"report": ARTIFACTS / "long-names.html", "email": ARTIFACTS / "long-names-email.html"}


def leave_nothing(route, requests: list[str]) -> None:
    """Nothing may be fetched from outside the file: record and refuse any such request."""
    if route.request.url.startswith(("file:", "data:")):
        route.continue_()
    else:
        requests.append(route.request.url)
        route.abort()


@pytest.mark.parametrize("width", [600, 375])
@pytest.mark.parametrize("name", ["report", "email"])
def test_the_report_reads_well_in_a_browser(browser, pages, october, name, width, capsys):
    context = browser.new_context(viewport={"width": width, "height": 900})
    requests, dialogs = [], []
    context.route("**/*", lambda route: leave_nothing(route, requests))
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(pages[name].as_uri(), wait_until="load")
    shot = ARTIFACTS / f"{name}-{width}px.png"
    page.screenshot(path=shot, full_page=True)
    with capsys.disabled():
        print(f"\nscreenshot: {shot}")

    assert page.evaluate("document.documentElement.scrollWidth") <= page.evaluate("innerWidth") == width
    images = page.evaluate(
        "[...document.images].map(i => ({alt: i.alt, loaded: i.complete && i.naturalWidth > 0,"
        " shown: i.getBoundingClientRect().width, right: i.getBoundingClientRect().right}))"
    )
    assert len(images) == len(CHARTS)
    assert all(i["loaded"] and i["alt"] and 0 < i["shown"] <= 562 and i["right"] <= width for i in images), images
    text = page.inner_text("body").replace("\xa0", " ")  # a number's no-break space before its unit
    metrics = json.loads((october / "metrics.json").read_text())
    for figure in headline_strings(metrics):
        assert figure in text
    summary = page.locator("p.summary")
    assert summary.is_visible() and summary.inner_text().replace("\xa0", " ") == metrics["summary"]["text"]
    assert page.get_by_text("Check before relying on these figures").is_visible()  # the quarantined row
    assert requests == [] and dialogs == []  # the quarantined row's onerror never ran
    context.close()


def test_dark_mode_recolours_the_page(browser, pages):
    context = browser.new_context(viewport={"width": 375, "height": 900}, color_scheme="dark")
    page = context.new_page()
    page.goto(pages["email"].as_uri())
    page.screenshot(path=ARTIFACTS / "email-375px-dark.png", full_page=True)
    background = page.evaluate("getComputedStyle(document.querySelector('td.page')).backgroundColor")
    heading = page.evaluate("getComputedStyle(document.querySelector('h1')).color")
    assert background == "rgb(17, 24, 39)" and heading == "rgb(249, 250, 251)"
    context.close()


def open_page(browser, path: Path, width: int):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(path.as_uri(), wait_until="load")
    return context, page


@pytest.mark.parametrize("width", [600, 375])
@pytest.mark.parametrize("name", ["report", "email"])
def test_chart_text_is_at_least_10px_as_displayed(browser, long_names, long_name_pages, name, width):
    """Each chart's smallest text, scaled as the browser scales the PNG to fit the page."""
    report, _ = long_names
    context, page = open_page(browser, long_name_pages[name], width)
    images = page.evaluate("[...document.images].map(i => [i.alt, i.clientWidth, i.naturalWidth])")
    by_alt = {chart.alt: chart for chart in report.charts.values()}
    shown = {by_alt[alt].name: by_alt[alt].min_text_px * client / natural for alt, client, natural in images}
    assert set(shown) == CHARTS
    assert min(shown.values()) >= 10, ", ".join(f"{n} {px:.1f} px" for n, px in shown.items())
    context.close()


# Every occurrence of each name as a Range: a name broken across lines has rects on two lines.
BROKEN_NAMES = """names => {
  const found = {}, broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const name of names) {
      for (let i = node.data.indexOf(name); i >= 0; i = node.data.indexOf(name, i + 1)) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + name.length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size) found[name] = (found[name] || 0) + 1;
        if (tops.size > 1) broken.push(`${name} in <${node.parentElement.localName} class="${node.parentElement.className}">`);
      }
    }
  }
  return {found, broken};
}"""


@pytest.mark.parametrize("width", [600, 375])
@pytest.mark.parametrize("name", ["report", "email"])
def test_names_are_never_broken_mid_word(browser, long_names, long_name_pages, name, width):
    """Node, job, suite and input names stay on one line wherever they appear, and the page
    still fits the screen: nothing scrolls sideways."""
    _, names = long_names
    context, page = open_page(browser, long_name_pages[name], width)
    page.screenshot(path=ARTIFACTS / f"long-names-{name}-{width}px.png", full_page=True)
    result = page.evaluate(BROKEN_NAMES, names)
    assert set(result["found"]) == set(names)
    assert not result["broken"], "broken across lines: " + "; ".join(result["broken"])
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    context.close()


@pytest.mark.parametrize("width", [600, 375])
def test_the_explanation_pages_read_well_in_a_browser(browser, october, width):
    """The month's archive explains its lemon-node candidates and its large jobs' infrastructure
    failures (flows/explain/pages.py): the report links the index, the index each page; each page
    fits a phone's width and a mail pane's, with nothing fetched from outside."""
    index = october / "explained.html"
    assert 'href="explained.html"' in (october / "report.html").read_text()
    nodes, jobs = sorted((october / "nodes").glob("*.html")), sorted((october / "jobs").glob("*.html"))
    metrics = json.loads((october / "metrics.json").read_text())
    assert {p.stem for p in nodes} == {c["node"] for c in metrics["lemon_nodes"]["candidates"]} | {
        c["node"] for c in (metrics["lemon_nodes"]["trailing"] or {}).get("candidates", [])
    }
    assert nodes and jobs  # the month has candidates and failures of jobs of 128 GPUs or more
    context = browser.new_context(viewport={"width": width, "height": 900})
    requests: list[str] = []
    context.route("**/*", lambda route: leave_nothing(route, requests))
    page = context.new_page()
    for name, path in (("index", index), ("node", nodes[0]), ("job", jobs[0])):
        page.goto(path.as_uri(), wait_until="load")
        page.screenshot(path=ARTIFACTS / f"explained-{name}-{width}px.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, name
        text = page.inner_text("body")
        assert {"index": "Lemon-node candidates", "node": "Lemon signals" if False else "fault", "job": "Evidence"}[
            name
        ] in text
    assert page.evaluate("document.querySelectorAll('h2[id]').length") >= 1  # the index links each attempt
    assert not requests
