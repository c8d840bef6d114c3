"""The monthly report as people get it: the report directory (the contract flows/report/message.py and
delivery build on), its three renderings, the charts, untrusted strings, and odd months.

Two simulated months are built once per session by `built_months` (September: the first month;
October: with history, lemons and a quarantined row carrying HTML) and reused by
test_report_browser.py; both files are `slow`. The quick tier builds no month (tests/quick_tier.py):
test_message.py renders a month from saved metrics instead.
"""

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import session_directory

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.deployments import monthly_report
from flows.figures.document import figures_of
from flows.figures.models import expected_ettr_curves
from flows.figures.read import month_document
from flows.publish.archive import without_nav
from flows.report.render import NOTICE_PLACEHOLDER, build_report, render_charts, write_report
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

CLUSTER = "rpt"
SEPTEMBER, OCTOBER = Month.parse("2026-09"), Month.parse("2026-10")
HOSTILE = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
CHARTS = {"job_mix", "mttf", "failure_rate_trend", "causes", "expected_ettr", "lemon_signals", "repair"}
CID = re.compile(r"cid:([\w.-]+)\.png@reliability-report")


class Page(HTMLParser):
    """The elements and the text of an HTML document, as a browser's parser sees them."""

    def __init__(self, html: str):
        super().__init__()
        self.elements: list[tuple[str, dict]] = []
        self.texts: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.texts.append(data.replace("\xa0", " "))  # a number's no-break space before its unit, as a space

    def images(self) -> list[dict]:
        return [attrs for tag, attrs in self.elements if tag == "img"]

    def is_inert(self) -> bool:
        """No script element and no event-handler attribute anywhere."""
        return all(tag != "script" and not any(a.startswith("on") for a in attrs) for tag, attrs in self.elements)


def corrupt_field(sacct: Path, line: int, field: int, value: str) -> None:
    lines = sacct.read_text().splitlines()
    fields = lines[line].split("|")
    fields[field] = value
    lines[line] = "|".join(fields)
    sacct.write_text("\n".join(lines) + "\n")


def built_months(tmp_path_factory) -> dict:
    """September and October of a simulated 48-node cluster, built once per test session, by the
    first xdist worker to ask (the directory is shared by the report, message and browser tests,
    which only read it)."""
    with session_directory(tmp_path_factory, "report-months") as root:
        done = root / "built.json"
        if not done.exists():
            config = write_demo_config(root, CLUSTER, root / "reports")
            # a small cluster runs few jobs above the paper's 128 GPUs: lower the bar to have both rates
            config.write_text(config.read_text() + "\n[analysis]\npaper_min_gpus = 32\n")
            for month, seed in ((SEPTEMBER, 21), (OCTOBER, 22)):
                sim = root / "sim" / CLUSTER / str(month)
                simulate(SimParams(CLUSTER, month, nodes=48, seed=seed, r_f=25.0, lemon_fraction=0.1), sim)
                if month == OCTOBER:
                    corrupt_field(sim / "sacct.psv", 5, 13, HOSTILE)  # Elapsed: quarantined, quoted in the report
                monthly_report(cluster=CLUSTER, config=str(config), month=str(month))
            done.write_text(json.dumps({"config": str(config)}))
    return {month: root / "reports" / CLUSTER / str(month) for month in (str(SEPTEMBER), str(OCTOBER))}


@pytest.fixture(scope="module")
def months(tmp_path_factory) -> dict[str, Path]:
    return built_months(tmp_path_factory)


@pytest.fixture(scope="module")
def october(months) -> Path:
    return months[str(OCTOBER)]


def plain(html: str) -> str:
    """A page with its no-break spaces (a number's, before its unit) as spaces, to find its sentences."""
    return html.replace("&nbsp;", " ").replace("\xa0", " ")


def read(report_dir: Path) -> dict:
    return {
        "html": plain((report_dir / "report.html").read_text()),
        "email": plain((report_dir / "email.html").read_text()),
        "text": (report_dir / "report.txt").read_text(),
        "metrics": json.loads((report_dir / "metrics.json").read_text()),
    }


def headline_strings(metrics: dict) -> list[str]:
    rf = metrics["node_failure_rate"]
    return [
        f"{rf['paper']['value']:.2f}",
        f"{rf['all']['value']:.2f}",
        f"{rf['all']['lower']:.2f}",
        f"{rf['all']['upper']:.2f}",
        f"{metrics['totals']['infra_failures']:,}",
        f"{metrics['lost_goodput']['lost_gpu_hours']:,.0f}",
    ]


def test_report_directory_holds_the_contract(october, months):
    files = {p.relative_to(october).as_posix() for p in october.rglob("*") if p.is_file()}
    assert {"report.html", "email.html", "report.txt", "metrics.json"} <= files
    assert {f"charts/{name}.png" for name in CHARTS} <= files
    assert {"failures.parquet", "node_days.parquet", "job_runs_ettr.parquet"} <= files
    assert {"lemon_nodes.hostlist", "drain_lemon_nodes.sh"} <= files  # tests/test_lemon_export.py
    for name in CHARTS:
        png = (october / "charts" / f"{name}.png").read_bytes()
        # at most 60 kB per 600 CSS px of height (the PNG's 2 px per CSS px): the lemon chart grows a panel
        # per signal that singles out a node, and is taller than the others (972 px, 67 kB, in this month)
        height = int.from_bytes(png[20:24], "big") / 2
        assert png.startswith(b"\x89PNG") and 3_000 < len(png) < 60_000 * max(1.0, height / 600)
    metrics = read(october)["metrics"]
    assert metrics["summary"]["data_quality"]["status"] == "warning"  # the quarantined row
    assert metrics["reproduce"]["command"].startswith(f"reliability-report run --month {OCTOBER} --config ")
    # September is the first month built: no trend chart
    september = {p.stem for p in (months[str(SEPTEMBER)] / "charts").iterdir()}
    assert september == CHARTS - {"failure_rate_trend"}


def test_the_message_of_a_built_month_is_its_report(october):
    """The email of a month the pipeline built (the archive's links in report.html, the exports and
    lemon files beside): tests/test_message.py's checks, which the quick tier runs on a month
    rendered from saved metrics."""
    from test_message import assert_the_message_is_the_report  # which imports this module

    assert_the_message_is_the_report(october)


def test_email_html_is_email_safe(october):
    email = read(october)["email"]
    assert len(email.encode()) < 100_000  # Gmail clips larger bodies
    assert "<script" not in email and "<link" not in email and "javascript:" not in email
    assert not re.search(r"""(src|href)=["']?https?:|url\(""", email)  # nothing fetched from the web
    images = Page(email).images()
    assert {CID.fullmatch(img["src"])[1] for img in images} == CHARTS and len(images) == len(CHARTS)
    assert all(len(img["alt"]) > 40 and img["width"] == "560" for img in images)
    assert '<table role="presentation"' in email and 'width="600"' in email
    assert re.search(r'<h2 style="[^"]*font-size: 17px', email)  # CSS inlined
    assert "@media (prefers-color-scheme: dark)" in email  # kept for the clients that read it
    assert email.count(NOTICE_PLACEHOLDER) == 1


def test_report_html_is_self_contained(october):
    html = read(october)["html"]
    assert "cid:" not in html and "<script" not in html
    assert not re.search(r"""(src|href)=["']?https?:""", html)
    images = Page(html).images()
    assert len(images) == len(CHARTS) and all(img["src"].startswith("data:image/png;base64,") for img in images)
    charts = {(october / "charts" / f"{name}.png").read_bytes() for name in CHARTS}
    assert {base64.b64decode(img["src"].split(",", 1)[1]) for img in images} == charts


def test_headline_figures_are_in_all_three(october):
    report = read(october)
    metrics = report["metrics"]
    assert metrics["totals"]["infra_failures"] > 0 and metrics["month_over_month"]["previous"] is not None
    for figure in headline_strings(metrics):
        for name in ("html", "email", "text"):
            assert figure in report[name], (figure, name)
    summary = metrics["summary"]["text"]
    assert summary.startswith("The node failure rate over all GPU jobs is ") and "September 2026" in summary
    assert summary in report["text"]
    assert summary.replace("'", "&#39;") in report["html"]


def test_the_text_part_gives_each_cause_a_line_of_its_own(october):
    report = read(october)
    causes = report["metrics"]["failures_by_cause"]
    assert len(causes) > 1
    lines = report["text"].split("FAILURES BY CAUSE\n", 1)[1].splitlines()[: len(causes) + 1]
    assert [line.split(":")[0].strip() for line in lines[:-1]] == [c["category"].replace("_", " ") for c in causes]
    assert lines[-1] == ""  # a blank line before the next section


def test_rendering_the_saved_metrics_again_gives_identical_files(october, tmp_path):
    metrics = read(october)["metrics"]
    write_report(tmp_path / "again", metrics)
    for name in ("email.html", "report.txt", "metrics.json", "metrics.prom", *(f"charts/{c}.png" for c in CHARTS)):
        assert (tmp_path / "again" / name).read_bytes() == (october / name).read_bytes(), name
    # report.html as rendered, before the archive filled in its links to the index and September
    assert (tmp_path / "again" / "report.html").read_text() == without_nav((october / "report.html").read_text())


def test_untrusted_text_from_the_logs_is_escaped(october):
    report = read(october)
    assert any(HOSTILE in line for line in report["metrics"]["quarantine_sample"])
    for name in ("html", "email"):
        page = Page(report[name])
        assert page.is_inert() and any(HOSTILE in text for text in page.texts)  # text, not markup
    assert HOSTILE not in report["html"] and "&lt;img src=x onerror=alert(1)&gt;" in report["html"]


def hostile_metrics(metrics: dict) -> dict:
    """The month's metrics with markup, terminal escapes, a bidi override and matplotlib math in
    every string that comes from the logs or the site: cluster, node, cause, suite, sample."""
    metrics = json.loads(json.dumps(metrics))
    metrics["cluster"] = SCRIPT
    candidate = metrics["lemon_nodes"]["candidates"][0]
    candidate["node"] = HOSTILE + "\x1b[2J\u202e"
    cause, changes = metrics["failures_by_cause"][0], metrics["month_over_month_by_cause"]
    changes[SCRIPT + r" $\frac$"] = changes.pop(cause["category"])  # the cause's change, under its name
    cause["category"] = SCRIPT + r" $\frac$"
    metrics["job_mix"][0]["outcome"] = HOSTILE
    metrics["data_quality"][0]["warnings"] = [
        {"expectation": SCRIPT, "column": HOSTILE, "observed": None, "unexpected_count": 1, "sample": [HOSTILE]}
    ]
    metrics["quarantine_sample"] = [f"sacct.psv:3: field JobName={SCRIPT}"]
    return metrics


def test_untrusted_strings_in_the_metrics_are_escaped_everywhere(october):
    metrics = hostile_metrics(read(october)["metrics"])
    report = build_report(metrics)
    for html in (report.html, report.email_html):
        page = Page(html)
        assert page.is_inert() and "\x1b" not in html and "\u202e" not in html
        assert {attrs.get("class") for tag, attrs in page.elements if tag == "img"} == {"chart"}
        assert sum(SCRIPT in text for text in page.texts) >= 4
        assert any(f"{HOSTILE}\\x1b[2J\\u202e" in text for text in page.texts)
    assert "<script" not in report.html and "<img src=x" not in report.html
    assert "\x1b" not in report.text and "\u202e" not in report.text
    assert f"{HOSTILE}\\x1b[2J\\u202e" in report.text  # shown as text, inert
    assert report.charts["causes"].png.startswith(b"\x89PNG")  # '$' did not start math mode


def test_first_month_says_there_is_nothing_to_compare(months):
    report = read(months[str(SEPTEMBER)])
    summary = report["metrics"]["summary"]
    assert summary["trend"] == "none" and "there is no previous month to compare with" in summary["text"]
    assert "so no trend chart yet" in report["html"] and "no previous month" in report["text"]


def test_failed_data_quality_puts_a_banner_on_top(october):
    """The pipeline stops on a critical failure (the previous report stays), so this state is
    rendered from the metrics: the banner says not to trust the figures, and why."""
    metrics = read(october)["metrics"]
    metrics["data_quality"][0]["failures"] = [
        {"expectation": "expect_column_values_to_be_between", "column": "runtime_hours", "observed": None,
         "unexpected_count": 3, "sample": [-1.0]},
    ]  # fmt: skip
    report = build_report(metrics)
    suite = metrics["data_quality"][0]["suite"].replace("_", " ")
    reason = f"{suite}: runtime hours outside its expected range (3 rows)"
    assert figures_of(report.document)["summary"]["data_quality"]["status"] == "failed"
    html = plain(report.html)
    banner = html.index("do not trust the figures of this month")
    assert banner < html.index("<h2>") and reason in html[banner:]
    assert report.email_html.count("do not trust the figures of this month") == 1
    assert "DATA-QUALITY CHECKS FAILED" in report.text and reason in report.text
    assert figures_of(report.document)["summary"]["text"].startswith(
        "Data-quality checks failed: do not trust these figures."
    )


def test_a_warning_puts_a_milder_banner_on_top(october):
    html = read(october)["html"]
    banner = html.index("Check before relying on these figures")
    assert banner < html.index("<h2>") and "1 input row could not be read and was left out" in html[banner:]


def words(html: str) -> str:
    """The text of a page, tags and repeated white space left out (a no-break space as a space)."""
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", html, flags=re.S)).replace("&nbsp;", " ")
    return re.sub(r"\s+", " ", text)


def simulated_month(tmp_path: Path, fresh_warehouse, name: str, strip_gpus: bool = False) -> dict:
    config = write_demo_config(tmp_path, name, tmp_path / "reports")
    fresh_warehouse(config)
    sim = tmp_path / "sim" / name / str(OCTOBER)
    simulate(SimParams(name, OCTOBER, nodes=8, seed=3, r_f=0.0, lemon_fraction=0.0), sim)
    if strip_gpus:
        sacct = sim / "sacct.psv"
        sacct.write_text(re.sub(r",gres/gpu(:\w+)?=\d+", "", sacct.read_text()))
    summary = monthly_report(cluster=name, config=str(config), month=str(OCTOBER))
    return read(Path(summary.report).parent) | {"dir": Path(summary.report).parent}


def test_a_month_without_failures_shows_lower_bounds(tmp_path, fresh_warehouse):
    report = simulated_month(tmp_path, fresh_warehouse, "calm")
    metrics = report["metrics"]
    assert metrics["totals"]["infra_failures"] == 0 and metrics["node_failure_rate"]["all"]["node_days"] > 0
    upper = metrics["node_failure_rate"]["all"]["upper"]
    assert metrics["summary"]["text"].startswith(
        f"No infrastructure failures this month: the node failure rate is below {upper:.2f}"
    )
    gpu_buckets = [b for b in metrics["mttf_by_size"] if b["max_gpus"] > 0]
    assert gpu_buckets and all(b["mttf_hours"] is None for b in gpu_buckets)
    assert report["html"].count("no failure: lower bound") == len([b for b in gpu_buckets if b["runtime_hours"]])
    assert "No infrastructure failures this month." in report["html"] and "No infrastructure failures" in report["text"]
    # the lemon signals are health events and failures: a month without failures still has them
    # (here two of the 8 nodes logged a hardware Xid; a month where no node had a signal draws no chart,
    # tests/test_first_month_texts.py)
    # (and node outages: their repair times)
    charts = {"job_mix.png", "mttf.png", "lemon_signals.png", "repair.png"}
    assert {p.name for p in (report["dir"] / "charts").iterdir()} == charts
    (mttf,) = [img for img in Page(report["email"]).images() if "mttf" in img["src"]]
    assert "lower bounds for" in mttf["alt"]


def test_a_cluster_without_gpus_has_no_rate(tmp_path, fresh_warehouse):
    report = simulated_month(tmp_path, fresh_warehouse, "cpuonly", strip_gpus=True)
    metrics = report["metrics"]
    assert metrics["totals"]["gpu_hours"] == 0 and metrics["node_failure_rate"]["all"]["value"] is None
    # not measured (flows/figures/measured.py), and said so in place of each GPU figure
    assert metrics["not_measured"]["node_failure_rate.all"] == "no GPU job ran this month"
    assert metrics["summary"]["text"] == (
        "No GPU job ran this month: the node failure rate, MTTF and ETTR are not measured."
    )
    assert "<b>Not measured:</b> no GPU job ran this month." in report["html"]
    assert "no GPU job ran this month, so the model has no failure rate to project from" in report["html"]
    # the job mix is of GPU attempts: none, so no chart and a sentence in its place; the lemon signals are
    # the nodes' (health events: two of the 8 logged a hardware Xid), drawn as in any month
    assert {p.name for p in (report["dir"] / "charts").iterdir()} == {"lemon_signals.png", "repair.png"}
    assert (
        "No GPU job attempt this month: the job mix is of GPU attempts, and the month's 13,973 attempts were CPU-only."
        in words(report["html"])
    )
    assert "None" not in report["text"] and "nan" not in report["text"]


def test_charts_are_deterministic_and_drawn_from_the_metrics(october):
    metrics = read(october)["metrics"]
    first, second = render_charts(month_document(metrics)), render_charts(month_document(metrics))
    assert set(first) == CHARTS
    assert {n: c.png for n, c in first.items()} == {n: c.png for n, c in second.items()}
    assert all(c.png == (october / "charts" / f"{n}.png").read_bytes() for n, c in first.items())
    assert b"tEXt" not in first["mttf"].png and b"tIME" not in first["mttf"].png  # no version or date
    assert "No optimum without a checkpoint write time" in first["expected_ettr"].alt
    # with a checkpoint write time the model has a Young-Daly optimum, and the chart marks it
    params = AnalysisConfig(ckpt_write_minutes=1.0)
    with_write = {**metrics, "expected_ettr": expected_ettr_curves(metrics["node_failure_rate"], params)}
    optimum = with_write["expected_ettr"]["curves"][0]["optimal_ckpt_minutes"]
    chart = render_charts(month_document(with_write))["expected_ettr"]
    assert f"Optimal interval: {optimum:.1f} min at 1,024 GPUs" in chart.alt and chart.png != first["expected_ettr"].png
