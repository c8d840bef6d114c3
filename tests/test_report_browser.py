"""The report in a real browser: Debian's headless chromium (the Makefile installs it) driven by
playwright, at a mail pane's 600 px and a phone's 375 px. Screenshots are kept under
test-artifacts/report-browser/."""

import base64
import json
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright
from test_report import CHARTS, CID, OCTOBER, built_months, headline_strings

CHROMIUM = "/usr/bin/chromium"
# Chromium's sandbox cannot run as root, so it is off; and no background
# connections, which this machine's closed network refuses. playwright starts it with a fresh profile.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "report-browser"


@pytest.fixture(scope="module")
def october(tmp_path_factory) -> Path:
    return built_months(tmp_path_factory)[str(OCTOBER)]


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def pages(october) -> dict[str, Path]:
    """report.html as archived, and email.html as a mail client shows it: each cid: reference
    replaced by its MIME part's image (here, the PNG in charts/)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    email = CID.sub(
        lambda m: (
            "data:image/png;base64," + base64.b64encode((october / "charts" / f"{m[1]}.png").read_bytes()).decode()
        ),
        (october / "email.html").read_text(),
    )
    shown = ARTIFACTS / "email-as-shown.html"
    shown.write_text(email)
    return {"report": october / "report.html", "email": shown}


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
    text = page.inner_text("body")
    metrics = json.loads((october / "metrics.json").read_text())
    for figure in headline_strings(metrics):
        assert figure in text
    summary = page.locator("p.summary")
    assert summary.is_visible() and summary.inner_text() == metrics["summary"]["text"]
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
