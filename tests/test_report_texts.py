"""Text a reader trips on (issue 42, item 8), rendered from the golden month's metrics.json: no
month is built. English in the fleet-rate note, trailing windows that count the same built months
shown once, lost goodput told apart from the job mix's "infra failed", an empty parameter as
"(none)", and one plural rule (flows/core/words.py) for "1 source", "1 recipient"."""

import re
from html import unescape
from types import SimpleNamespace

import pytest
from saved_month import saved_metrics

from flows.core.words import counted, plural
from flows.figures.compare import distinct_windows
from flows.figures.document import figures_of
from flows.figures.month_metrics import MonthFigures
from flows.figures.read import month_document
from flows.report.charts import month_period
from flows.report.goodput_charts import job_mix_chart
from flows.report.render import build_report
from flows.stages import stage_counts

pytestmark = pytest.mark.usefixtures("without_charts")


@pytest.fixture(scope="module")
def report():
    return build_report(saved_metrics())


def test_the_fleet_rate_note_is_english(report):
    assert "the figure published fleets report" not in report.html
    assert (
        "fleet counts node faults" in report.html
        and "the figure that published studies of whole fleets report" in report.html
    )


def test_windows_that_count_the_same_built_months_are_shown_once():
    """Three months built: the 3-, 6- and 12-month windows printed as three identical rows."""
    metrics = saved_metrics()
    for window in metrics["history"]["trailing"]:
        window.update(months_available=3, paper=metrics["history"]["trailing"][0]["paper"])
        window["all"] = metrics["history"]["trailing"][0]["all"]
    html = plain(build_report(metrics).html)
    trend = html[html.index("<h2>Trend</h2>") :]
    trend = trend[: trend.index("<h2>", 5)]
    assert trend.count("<tr>") == 2  # the header and one window
    assert "3 months" in trend and "6 months" not in trend.split("Not shown")[0]
    assert (
        "Not shown: the 6- and 12-month windows, which would count the same built months as a shorter one (3 months built)."
        in trend
    )
    assert distinct_windows([(w["months"], w["months_available"]) for w in metrics["history"]["trailing"]]) == [3]


def test_a_window_the_built_months_do_not_fill_says_so():
    metrics = saved_metrics()
    three, six, twelve = sorted(metrics["history"]["trailing"], key=lambda w: w["months"])
    six["months_available"], twelve["months_available"] = 5, 5
    html = plain(build_report(metrics).html)
    assert '6 months<span class="small">only 5 built</span>' in html and "<td>12 months<span" not in html
    assert distinct_windows([(w["months"], w["months_available"]) for w in (three, six, twelve)]) == [3, 6]


def test_lost_goodput_says_how_it_differs_from_infra_failed(report):
    """ "infra failed 3.0% of GPU-hours" beside "lost goodput 0.1%", with no word on how they differ."""
    assert "Not the same as the job mix's \"infra failed\" (3.0% of the month's GPU-hours)" in report.html
    assert "lost goodput (0.1%) is only the work they lost, since their last checkpoint" in report.html
    assert "the attempts infrastructure failures ended ran 3.0% of the GPU-hours" in report.text


def test_an_empty_parameter_reads_none(report):
    assert "ettr_priority_qos = ;" not in report.html
    assert "ettr_priority_qos = (none);" in report.html and "ettr_priority_partition = (none);" in report.html


def test_one_plural_rule():
    assert [counted(n, "source") for n in (0, 1, 2)] == ["0 sources", "1 source", "2 sources"]
    assert counted(3858, "attempt") == "3,858 attempts" and plural(1, "window") == "window"
    assert counted(1, "child", "children") == "1 child" and counted(2, "child", "children") == "2 children"


def test_a_stage_with_one_source_says_source():
    """The progress line said "1 records from 1 sources"."""
    landed = SimpleNamespace(sources={"sacct_psv": SimpleNamespace(records=1)})  # the landing's Manifest
    assert stage_counts("land", landed) == "1 record from 1 source"
    metrics = {"totals": {"attempts": 1, "infra_failures": 1}}
    assert stage_counts("metrics", MonthFigures(metrics, {})) == "1 attempt, 1 infrastructure failure"


def test_counts_of_one_are_singular_in_the_report():
    """ "4 from 1 preemptions made for restarts" (the golden month), "1 suites"."""
    metrics = saved_metrics()
    metrics["lost_goodput"]["infra_failures"] = 1
    metrics["data_quality"] = metrics["data_quality"][:1]
    html = plain(build_report(metrics).html)
    assert "from 1 preemption made for restarts" in html and "1 preemptions" not in html
    assert "from 1 infrastructure failure and" in html
    assert "<p>1 suite checked " in html


def plain(html: str) -> str:
    """The page's HTML with its no-break spaces (between a number and its unit) as spaces."""
    return html.replace("&nbsp;", " ").replace("\xa0", " ")


def page_text(html: str) -> str:
    """A page's text as a reader sees it: no style, tags or entities, no-break spaces as spaces."""
    html = re.sub(r"<style.*?</style>", "", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace("\xa0", " ").split())


def test_a_number_and_its_unit_never_part(report):
    """In the page and the email a no-break space joins every number to the word after it ("1,258.7 d",
    "12 months"), and the reproduce command breaks only between its words (never after "--")."""
    for html in (report.html, report.email_html):
        text = unescape(re.sub(r"<[^>]+>", "", re.sub(r"<style.*?</style>", "", html, flags=re.S)))
        assert re.findall(r"\d [a-z]\w*", text) == []  # a no-break space between them, never a space
    command = figures_of(report.document)["reproduce"]["command"]
    assert '<span class="unbroken">--config</span>' in report.html
    assert page_text(report.html).count(command) == 1


def test_a_month_of_one_gpu_attempt_has_no_job_mix_chart():
    """One GPU attempt, still open: its shares (100% "open") are no chart; the table counts it."""
    metrics = saved_metrics()
    metrics["job_mix"] = [
        {"outcome": "open", "attempts": 1, "attempt_share": 1.0, "gpu_hours": 12.0, "gpu_hours_share": 1.0}
    ]
    metrics["totals"] |= {"gpu_attempts": 1, "cpu_only_attempts": metrics["totals"]["attempts"] - 1}
    assert job_mix_chart(month_period(month_document(metrics))) is None
    text = page_text(build_report(metrics).html)
    assert "Too few GPU attempts this month to chart their shares: the table counts them." in text


def test_attempts_still_open_say_whether_cpu_jobs_are_counted():
    metrics = saved_metrics()
    open_gpu = next(r["attempts"] for r in metrics["job_mix"] if r["outcome"] == "open")
    metrics["totals"] |= {"open_attempts": open_gpu + 55, "cpu_only_attempts": 900}
    text = page_text(build_report(metrics).html)
    assert (
        f"Attempts still open at the month's end: {open_gpu + 55}, CPU-only and GPU attempts ({open_gpu} GPU)" in text
    )
    metrics["totals"] |= {"open_attempts": open_gpu, "cpu_only_attempts": 0}
    assert f"Attempts still open at the month's end: {open_gpu}, all GPU attempts" in page_text(
        build_report(metrics).html
    )
