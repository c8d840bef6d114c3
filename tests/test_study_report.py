"""The study as people get it (flows/report/study_report.py): its HTML page, the email's HTML, the plain
text and the charts, from a synthetic but consistent study built below in flows/study.py's structure
(two clusters over 12 months, every figure derived from its counts as flows/study.py derives it);
and the pages in a real browser (Debian's headless chromium via playwright, as
test_report_browser.py) at a mail pane's 600 px and a phone's 375 px. Screenshots are kept under
test-artifacts/study-browser/."""

import base64
import json
import re
from dataclasses import asdict
from pathlib import Path

import pytest
from conftest import DATA_DIR
from test_report import CID, Page
from test_report_browser import email_as_shown, leave_nothing

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month, month_range
from flows.figures.document import figures_of
from flows.figures.models import expected_ettr_grid, model_mttf_hours, projections
from flows.figures.period import fleet_rate
from flows.figures.rates import CONFIDENCE, failure_rate, mttf_interval
from flows.figures.read import study_document
from flows.figures.registry import FIGURES as DECLARED
from flows.figures.repair import repair_summary
from flows.figures.study_metrics import assemble_study
from flows.report.charts import NARROWEST_PX, WIDTH_PX
from flows.report.render import NOTICE_PLACEHOLDER, Report, render_charts
from flows.report.study_report import render_study

# --- the synthetic study --------------------------------------------------------------------

FIRST, LAST = Month.parse("2025-11"), Month.parse("2026-10")
# every bucket of the seed job_size_buckets (the study's per-size marts have a row for each)
SEED = (
    [("0", 0, 0, 0), ("1", 1, 1, 1), ("2", 2, 2, 2), ("4", 3, 3, 4)]
    + [(str(2**k), k + 1, 2 ** (k - 1) + 1, 2**k) for k in range(3, 14)]
    + [(">8192", 15, 8193, 2**31 - 1)]
)
BUCKETS = [b for b in SEED if 1 <= b[3] <= 1024]  # where jobs ran
OUTCOMES = ("completed", "failed", "infra_failed", "cancelled", "preempted")
CAUSES = (("gpu_memory", "hardware"), ("infiniband_link", "hardware"), ("filesystem_mount", "system_software"),
          ("node_unresponsive", "unknown"), ("gpu_driver_firmware", "system_software"), ("pcie", "hardware"),
          ("main_memory", "hardware"), ("unattributed_node_failure", "unknown"))  # fmt: skip
# a declared figure not made below is the golden month's: a new figure is in the study unasked
GOLDEN_MONTH = json.loads((DATA_DIR / "golden" / "reports" / "month" / "metrics.json").read_text())


def cluster(name: str, scale: float, nodes: int, account: str = "ml-research") -> dict:
    """One cluster's figures: `scale` multiplies its failures (the second cluster fails more)."""
    params = AnalysisConfig(paper_min_gpus=32)
    months = month_range(FIRST, LAST)
    node_days = nodes * 30.4
    monthly, causes = [], {}
    for i, month in enumerate(months):
        by_cause = {}
        for j, (cause, _) in enumerate(CAUSES):
            failures = int(max(scale * (4 - j), 0) + (i + j) % 3)
            if failures:
                by_cause[cause] = {"failures": failures, "per_1000_node_days": failures * 1000 / node_days}
                causes[cause] = causes.get(cause, 0) + failures
        all_failures = sum(c["failures"] for c in by_cause.values())
        monthly.append(
            {
                "month": str(month),
                "paper": failure_rate(all_failures // 2, node_days / 3),
                "all": failure_rate(all_failures, node_days),
                "by_cause": by_cause,
            }
        )
    total_days = node_days * len(months)
    all_failures = sum(causes.values())
    r_f = {"paper": failure_rate(all_failures // 2, total_days / 3), "all": failure_rate(all_failures, total_days)}
    failures_by_cause = [
        {
            "category": cause,
            "failure_domain": domain,
            "failures": causes[cause],
            "node_days": total_days,
            "per_1000_node_days": causes[cause] * 1000 / total_days,
            "per_million_gpu_hours": causes[cause] * 1e6 / (total_days * 192),
            "node_fail": causes[cause],
            "failed": 0,
            "requeued": 0,
            **{f"per_1000_node_days_{k}": failure_rate(causes[cause], total_days)[k] for k in ("lower", "upper")},
        }
        for cause, domain in sorted(CAUSES, key=lambda c: (-causes[c[0]], c[0]))
    ]
    mttf, lost, mix = [], [], []
    for bucket, order, low, high in SEED:
        ran = (bucket, order, low, high) in BUCKETS
        k = BUCKETS.index((bucket, order, low, high)) if ran else 0
        runtime = 20000.0 / (k + 1) if ran else 0.0
        failures = int(scale * k * 3) if ran else 0
        representative = high if high < 2**31 - 1 else low
        mttf.append(
            {
                "size_bucket": bucket, "bucket_order": order, "min_gpus": low, "max_gpus": high,
                "attempts": 4000 // (k + 1) if ran else 0, "ended_attempts": 4000 // (k + 1) if ran else 0,
                "runtime_hours": runtime, "gpu_hours": runtime * high,
                "gpu_node_days": runtime * max(high // 8, 1) / 24, "infra_failures": failures,
                "mttf_hours": runtime / failures if failures else None, **mttf_interval(runtime, failures),
                "model_mttf_hours": {d: model_mttf_hours(max(representative, 1), v["value"], 8) for d, v in r_f.items()},
            }
        )  # fmt: skip
        first, second = failures * 0.5 * high, (failures // 2) * 0.25 * high
        lost.append(
            {
                "size_bucket": bucket, "bucket_order": order, "infra_failures": failures,
                "first_order_gpu_hours": first, "second_order_preemptions": failures // 2,
                "second_order_gpu_hours": second, "lost_gpu_hours": first + second,
                "gpu_hours": runtime * high if ran else 0.0, "share_of_gpu_hours": (first + second) / (runtime * high) if ran else None,
            }
        )  # fmt: skip
        for m, outcome in enumerate(OUTCOMES if ran else ()):
            mix.append(
                {
                    "outcome": outcome, "size_bucket": bucket, "bucket_order": order,
                    "attempts": (4000 // (k + 1)) // (m + 1), "gpu_hours": runtime * high / (m + 2),
                    "attempt_share": 0.2 / (k + 1) / (m + 1), "gpu_hours_share": 0.04 * (k + 1) / (m + 1),
                }
            )  # fmt: skip
    rate = r_f["paper"]["value"]
    ettr_rows = {
        run_set: [
            {
                "size_bucket": bucket, "bucket_order": order, "min_gpus": low, "max_gpus": high, "runs": 6 - k,
                "mean_gpus": float(high), "mean_ettr": 0.95 - 0.03 * k * scale, "stddev_ettr": 0.02,
                "median_ettr": 0.96 - 0.03 * k, "min_ettr": 0.8 - 0.05 * k,
                "mean_lower": 0.93 - 0.03 * k * scale, "mean_upper": min(0.97 - 0.03 * k * scale, 1.0),
                "expected_ettr": 1 - high / 8 * rate / 1000 * (5 + 30) / 1440, "model_applies": high >= 64,
                "runs_from_earlier_months": 1, "formula_valid": True,
            }
            for k, (bucket, order, low, high) in enumerate(BUCKETS[6 if run_set == "priority" else 3 :])
        ]
        for run_set in ("all", "priority")
    }  # fmt: skip
    lemon_nodes = {
        "window_start": "2026-10-04T00:00:00", "window_end": "2026-11-01T00:00:00", "window_days": 28,
        "fleet_nodes": nodes, "fleet_mean_incident_hours": 1.2, "fleet_incident_dispersion": 2.5,
        "fleet_mean_failure_incidents": 0.3, "fleet_failure_dispersion": 1.4, "repeat_threshold": 3,
        "candidates": [
            {
                "node": f"{name}-gpu-node-{n:04d}", "rules": ["outlier"], "p_value": 1e-5 * (n + 1),
                "incident_p_value": 1e-5 * (n + 1), "repeat_p_value": 0.5, "incident_hours": 30 - n,
                "xid_cnt": 12, "out_count": 3, "tickets": 1, "failure_incidents": 2,
                "most_incidents_within_repeat_days": 2, "multi_node_node_fails": 1, "single_node_node_fails": 1,
                "single_node_node_failure_rate": 0.5, "failures": ["2026-10-12T04:00:00"],
            }
            for n in range(int(2 * scale))
        ],
        "signal_distribution": {
            "incident_hours": [[0.0, 0.7 / scale], [1.0, 0.8 / scale], [3.0 * scale, 0.9], [8.0 * scale, 0.97],
                               [30.0, 1.0]],
            "xid_cnt": [[0.0, 0.8], [12.0, 1.0]],
        },
    }  # fmt: skip
    breakdown_rows = {
        dimension: [
            {
                "key": key, "rank": rank, "infra_failures": 40 // rank,
                "lost_gpu_hours": 9000.0 / rank, "gpu_hours": 200000.0 / rank, "ettr_runs": 5 - rank,
                "mean_ettr": 0.9 if rank < 4 else None,
            }
            for rank, key in enumerate(keys, start=1)
        ]
        for dimension, keys in (
            ("account", [account, "vision", "speech", "=cmd|' /C calc'!A0", "robotics", "nlp-pretraining"]),
            ("partition", ["learn", "dev", "scavenge", "hipri"]),
        )
    }  # fmt: skip
    gpu_hours = sum(b["gpu_hours"] for b in mttf)
    lost_total = sum(b["lost_gpu_hours"] for b in lost)
    second = sum(b["second_order_gpu_hours"] for b in lost)
    return {figure.key: GOLDEN_MONTH[figure.key] for figure in DECLARED} | {
        "parameters": {**asdict(params), "breakdown_top": 5, "confidence": CONFIDENCE},
        "totals": {
            "months_built": len(months),
            "attempts": sum(b["attempts"] for b in mttf),
            "gpu_attempts": sum(b["attempts"] for b in mttf),
            "cpu_only_attempts": 0,
            "gpu_hours": gpu_hours,
            "gpu_node_days": sum(b["gpu_node_days"] for b in mttf),
            "infra_failures": all_failures,
            "cpu_only_nodes": 0,
            "open_attempts": 0,
            "unknown_states": 0,
        },
        "lost_goodput": {
            "lost_gpu_hours": lost_total,
            "first_order_gpu_hours": lost_total - second,
            "second_order_gpu_hours": second,
            "infra_failures": all_failures,
            "second_order_preemptions": sum(b["second_order_preemptions"] for b in lost),
            "share_of_gpu_hours": lost_total / gpu_hours,
            "estimator": "an estimate: min(runtime, 30 min) x GPUs per infrastructure failure",
        },
        "node_failure_rate": r_f,
        # every node's faults over every node's days: more faults than the failures they caused
        "fleet_fault_rate": fleet_rate(int(all_failures * 1.2), nodes * 30.4 * len(months), nodes),
        "job_mix": mix,
        "failures_by_cause": failures_by_cause,
        "monthly": monthly,
        "mttf_by_size": mttf,
        "job_mix_by_size": [{k: b[k] for k in ("size_bucket", "bucket_order", "attempts", "gpu_hours")} for b in mttf],
        "projections": projections(r_f, params),
        "ettr_vs_expected": {
            "r_f_definition": "paper",
            "r_f": rate,
            "ckpt_minutes": 60.0,
            "min_run_hours": params.ettr_min_run_hours,
            "priority_qos": "high",
            "priority_partition": None,
            **ettr_rows,
        },  # fmt: skip
        "expected_ettr_grid": expected_ettr_grid(r_f, params),
        "lemon_nodes": lemon_nodes,
        "lost_goodput_by_size": lost,
        "node_repairs": node_repairs(nodes * 24 * 30.4 * len(months)),
        "not_measured": {},
        "partial_months": [],
        "breakdowns": {
            "top": 5,
            **{
                d: {"rows": [r for r in rows if r["rank"] <= 5], "not_shown": max(len(rows) - 5, 0)}
                for d, rows in breakdown_rows.items()
            },
        },
    }


def node_repairs(fleet_node_hours: float) -> dict:
    """Three repairs of 4 to 6.5 hours, of no cause the taxonomy names."""
    repairs = repair_summary(
        {"outages": 3, "repairs": 3, "mean_repair_hours": 5.0, "stddev_repair_hours": 1.3,
         "median_repair_hours": 4.5, "repair_hours": [4.0, 4.5, 6.5], "out_node_hours": 15.0}
    )  # fmt: skip
    return {
        "unit": "hours", "failures": repairs, "all": repairs, "by_cause": [], "nodes_out_longest": [],
        "availability": {"value": 1 - 15.0 / fleet_node_hours, "out_node_hours": 15.0, "fleet_node_hours": fleet_node_hours},
    }  # fmt: skip


def make_study(names: tuple[str, str] = ("rsc1", "rsc2"), account: str = "ml-research") -> dict:
    """The study of two clusters, the second failing about twice as often."""
    clusters = {names[0]: cluster(names[0], 1.0, 96, account), names[1]: cluster(names[1], 2.0, 64, account)}
    return assemble_study(
        clusters,
        month_range(FIRST, LAST),
        f"reliability-report study --from {FIRST} --to {LAST} --config a.toml --config b.toml",
    )


CHARTS = {"job_mix", "causes", "causes_by_month", "failure_rate_trend", "rate_ratios", "mttf", "ettr",
          "expected_ettr", "lemon_signals", "lost_goodput"}  # fmt: skip
SECTIONS = ("The clusters over the range", "Do the clusters differ?", "Job mix by outcome",
            "Failures by cause", "Trend", "MTTF by job size", "Effective training time ratio",
            "Expected ETTR against the checkpoint interval", "Lemon-node candidates", "Lost goodput", "By account and partition", "Methodology",
            "How to reproduce")  # fmt: skip
SCRIPT = "<script>alert(2)</script>"
HOSTILE = "<img src=x onerror=alert(1)>"
FORMULA = "=cmd|' /C calc'!A0"  # a spreadsheet formula: only text here
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "study-browser"


@pytest.fixture(scope="module")
def study() -> Report:
    return render_study(make_study())


def headline_strings(study: dict) -> list[str]:
    """Figures every rendering shows: each cluster's r_f (both definitions) with its interval,
    failures and lost GPU-hours, and the rate ratio of r_f."""
    strings = []
    for figures in study["clusters"].values():
        for d in ("paper", "all"):
            rate = figures["node_failure_rate"][d]
            strings += [f"{rate['value']:.2f}", f"{rate['lower']:.2f}", f"{rate['upper']:.2f}"]
        strings += [f"{figures['totals']['infra_failures']:,}", f"{figures['lost_goodput']['lost_gpu_hours']:,.0f}"]
    ratio = next(r for r in study["comparison"][0]["ratios"] if r["measure"] == "r_f (all)")
    return strings + [f"{ratio['ratio']:.2f}", f"{ratio['lower']:.2f}", f"{ratio['upper']:.2f}"]


def test_every_section_is_there_with_the_headline_figures(study):
    assert set(study.charts) == CHARTS
    for html in (study.html, study.email_html):
        headings = [t.strip() for t in Page(html).texts]
        for section in SECTIONS:
            assert section in headings, section
    for figure in headline_strings(figures_of(study.document)):
        for name, rendered in (("html", study.html), ("email", study.email_html), ("text", study.text)):
            assert figure in rendered, (figure, name)
    summary = figures_of(study.document)["summary"]["text"]
    rsc1 = figures_of(study.document)["clusters"]["rsc1"]["node_failure_rate"]["all"]["value"]
    assert summary.startswith(f"rsc1: r_f {rsc1:.2f} per 1000 node-days") and "rsc1 and rsc2 differ in" in summary
    assert summary in study.text and summary in Page(study.html).texts
    for heading in ("HEADLINE", "RSC1", "RSC2", "rsc1 AGAINST rsc2: THEY DIFFER"):
        assert heading in study.text
    assert "None" not in study.text and "nan" not in study.text
    # the fleet's node fault rate beside r_f, with its interval, in each cluster's column and line
    for figures in figures_of(study.document)["clusters"].values():
        fleet = figures["fleet_fault_rate"]
        shown = f"{fleet['value']:.2f}"
        assert f"Node faults over the fleet: {shown} per 1000 node-days (95%: {fleet['lower']:.2f}" in study.text
        assert "Node faults over the fleet" in Page(study.html).texts and shown in study.html


def test_charts_are_readable_on_a_phone(study):
    """Each chart drawn at 2x for 560 CSS px, its smallest text at least 10 px when shown at 343."""
    for chart in study.charts.values():
        assert chart.png.startswith(b"\x89PNG") and chart.width == WIDTH_PX, chart.name
        assert chart.png[16:24] == (2 * chart.width).to_bytes(4, "big") + (2 * chart.height).to_bytes(4, "big")
        assert chart.min_text_px * NARROWEST_PX / (2 * WIDTH_PX) >= 10, (chart.name, chart.min_text_px)
        assert len(chart.alt) > 100 and chart.alt.endswith("."), chart.name
        assert 10_000 < len(chart.png) < 60_000, (chart.name, len(chart.png))


def test_charts_are_byte_identical_for_identical_figures(study):
    again = render_charts(study_document(json.loads(json.dumps(figures_of(study.document)))))
    assert {n: c.png for n, c in again.items()} == {n: c.png for n, c in study.charts.items()}
    assert all(b"tEXt" not in c.png and b"tIME" not in c.png for c in again.values())  # no version or date


def test_email_html_is_email_safe(study):
    email = study.email_html
    assert len(email.encode()) < 100_000  # Gmail clips larger bodies
    assert "data:" not in email and "<script" not in email and "<link" not in email and "javascript:" not in email
    assert not re.search(r"""(src|href)=["']?https?:|url\(""", email)  # nothing fetched from the web
    images = Page(email).images()
    assert [CID.fullmatch(img["src"])[1] for img in images] == list(study.charts)
    assert all(len(img["alt"]) > 100 and img["width"] == "560" for img in images)
    assert '<table role="presentation"' in email and 'width="600"' in email
    assert re.search(r'<h2 style="[^"]*font-size: 17px', email)  # CSS inlined
    assert email.count(NOTICE_PLACEHOLDER) == 1


def test_report_html_is_self_contained(study):
    assert "cid:" not in study.html and "<script" not in study.html
    images = Page(study.html).images()
    assert [base64.b64decode(img["src"].removeprefix("data:image/png;base64,")) for img in images] == [
        c.png for c in study.charts.values()
    ]


def hostile_study() -> dict:
    """The study with markup, terminal escapes, a bidi override, a spreadsheet formula and
    matplotlib math in the strings that come from the logs or the site: cluster, account,
    partition, node and cause names."""
    study = make_study(names=(SCRIPT + "\x1b[2J", "rsc2"), account=HOSTILE + "\u202e")
    for figures in study["clusters"].values():
        figures["breakdowns"]["partition"]["rows"][0]["key"] = FORMULA + "\x07"
        figures["lemon_nodes"]["candidates"][0]["node"] = HOSTILE + "\x1b[31m"
        figures["failures_by_cause"][0]["category"] = SCRIPT + r" $\frac$"
        figures["job_mix"][0]["outcome"] = HOSTILE
    return assemble_study(study["clusters"], month_range(FIRST, LAST), study["reproduce"]["command"])


def test_untrusted_strings_are_escaped_and_neutralised_everywhere():
    report = render_study(hostile_study())
    cluster = SCRIPT + "\\x1b[2J"
    for html in (report.html, report.email_html):
        page = Page(html)
        assert page.is_inert() and not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", html)
        assert {attrs.get("class") for tag, attrs in page.elements if tag == "img"} == {"chart"}
        assert sum(cluster in text for text in page.texts) >= 10  # the cluster's name, as text
        assert any(HOSTILE + "\\u202e" in text for text in page.texts)  # the account
        assert any(FORMULA + "\\x07" in text for text in page.texts)  # the partition
        assert any(HOSTILE + "\\x1b[31m" in text for text in page.texts)  # the node
    assert "<script" not in report.html and "<img src=x" not in report.html
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", report.text)
    for shown in (cluster, HOSTILE + "\\u202e", FORMULA + "\\x07", HOSTILE + "\\x1b[31m"):
        assert shown in report.text  # printed as text, inert
    assert set(report.charts) == CHARTS  # '$' in a cause or cluster did not start math mode


# --- in a browser -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pages(study) -> dict[str, Path]:
    return shown_pages(study, ARTIFACTS)


# The smallest computed font size of the elements that hold text of their own, subscripts apart.
SMALLEST_TEXT = """sub => Math.min(...[...document.body.querySelectorAll('*')]
  .filter(e => (e.localName === 'sub') === sub && e.getClientRects().length)
  .filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.data.trim()))
  .map(e => parseFloat(getComputedStyle(e).fontSize)))"""


@pytest.mark.slow  # Chromium
@pytest.mark.parametrize("width", [600, 375])
@pytest.mark.parametrize("name", ["report", "email"])
def test_the_study_reads_well_in_a_browser(browser, study, pages, name, width, capsys):
    assert_reads_well(browser, pages[name], study, width, f"{name}-{width}px.png", capsys)


def shown_pages(study: Report, out: Path) -> dict[str, Path]:
    """report.html as archived, and email.html as a mail client shows it (each cid: reference
    replaced by its MIME part's image), written into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.html").write_text(study.html)
    (out / "email-as-shown.html").write_text(email_as_shown(study.email_html, lambda n: study.charts[n].png))
    return {"report": out / "report.html", "email": out / "email-as-shown.html"}


def assert_reads_well(browser, path: Path, study: Report, width: int, screenshot: str, capsys) -> None:
    """The page at `path` in Chromium at `width` px: nothing wider than the window, every chart
    loaded with its alt text and its text at least 10 px as shown, no text smaller than the
    monthly report's, the summary shown, nothing fetched and no dialog."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    requests, dialogs = [], []
    context.route("**/*", lambda route: leave_nothing(route, requests))
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(path.as_uri(), wait_until="load")
    shot = ARTIFACTS / screenshot
    page.screenshot(path=shot, full_page=True)
    with capsys.disabled():
        print(f"\nscreenshot: {shot}")

    assert page.evaluate("document.documentElement.scrollWidth") <= page.evaluate("innerWidth") == width
    images = page.evaluate(
        "[...document.images].map(i => ({alt: i.alt, loaded: i.complete && i.naturalWidth > 0,"
        " shown: i.clientWidth, natural: i.naturalWidth, right: i.getBoundingClientRect().right}))"
    )
    assert len(images) == len(study.charts)
    assert all(i["loaded"] and i["alt"] and 0 < i["shown"] <= 562 and i["right"] <= width for i in images), images
    by_alt = {chart.alt: chart for chart in study.charts.values()}
    shown = {by_alt[i["alt"]].name: by_alt[i["alt"]].min_text_px * i["shown"] / i["natural"] for i in images}
    assert min(shown.values()) >= 10, ", ".join(f"{n} {px:.1f} px" for n, px in shown.items())
    # as small as the monthly report's smallest: 11 px (.small, the footer), 9 px for the f of a
    # .small r_f (a subscript is 0.83 em)
    assert page.evaluate(SMALLEST_TEXT, False) >= 11 and page.evaluate(SMALLEST_TEXT, True) >= 9
    summary = page.locator("p.summary")
    assert (
        summary.is_visible()
        and summary.inner_text().replace("\xa0", " ") == figures_of(study.document)["summary"]["text"]
    )
    assert requests == [] and dialogs == []
    context.close()


def quiet(figures: dict) -> dict:
    """A cluster's figures had it had no infrastructure failure, no long job run and no lemon."""
    params = AnalysisConfig(paper_min_gpus=32)
    r_f = {d: failure_rate(0, rate["node_days"]) for d, rate in figures["node_failure_rate"].items()}
    for month in figures["monthly"]:
        month.update({d: failure_rate(0, month[d]["node_days"]) for d in ("paper", "all")}, by_cause={})
    for bucket in figures["mttf_by_size"]:
        bucket.update(infra_failures=0, mttf_hours=None, **mttf_interval(bucket["runtime_hours"], 0))
        bucket["model_mttf_hours"] = {d: None for d in r_f}
    for bucket in figures["lost_goodput_by_size"]:
        bucket.update(infra_failures=0, first_order_gpu_hours=0.0, second_order_preemptions=0,
                      second_order_gpu_hours=0.0, lost_gpu_hours=0.0, share_of_gpu_hours=0.0)  # fmt: skip
    figures["totals"].update(infra_failures=0)
    figures["lost_goodput"].update(infra_failures=0, lost_gpu_hours=0.0, first_order_gpu_hours=0.0,
                                   second_order_gpu_hours=0.0, second_order_preemptions=0,
                                   share_of_gpu_hours=0.0)  # fmt: skip
    figures["lemon_nodes"]["candidates"] = []
    for breakdown in (figures["breakdowns"][d] for d in ("account", "partition")):
        for row in breakdown["rows"]:
            row.update(infra_failures=0, lost_gpu_hours=0.0)
    return {
        **figures,
        "node_failure_rate": r_f,
        "failures_by_cause": [],
        "projections": projections(r_f, params),
        "ettr_vs_expected": {
            **figures["ettr_vs_expected"],
            "r_f_definition": "all",
            "r_f": 0.0,
            "all": [],
            "priority": [],
        },
        "expected_ettr_grid": expected_ettr_grid(r_f, params),
    }


def test_a_quiet_cluster_beside_a_failing_one_shows_bounds_not_figures():
    study = make_study()
    study["clusters"]["rsc2"] = quiet(study["clusters"]["rsc2"])
    study = assemble_study(study["clusters"], month_range(FIRST, LAST), study["reproduce"]["command"])
    report = render_study(study)
    # rsc1's figures are charted; no ratio has a value against a cluster without failures
    assert set(report.charts) == CHARTS - {"rate_ratios"}
    assert all(chart.min_text_px * NARROWEST_PX / (2 * WIDTH_PX) >= 10 for chart in report.charts.values())
    assert "no failure: lower bound" in report.html and "rsc2: 0 candidates" not in report.charts["lemon_signals"].alt
    assert "None" not in report.text and "nan" not in report.text
    assert "r_f (all): > " in report.text and "(none at rsc2)" in report.text  # a bound, not a ratio
    assert len(report.email_html.encode()) < 100_000


def test_one_cluster_has_nothing_to_compare():
    study = make_study()
    del study["clusters"]["rsc2"]
    study = assemble_study(study["clusters"], month_range(FIRST, LAST), study["reproduce"]["command"])
    report = render_study(study)
    assert set(report.charts) == CHARTS - {"rate_ratios"}
    assert "One cluster: nothing to compare." in report.html and "AGAINST" not in report.text


def test_two_clusters_no_test_could_compare_are_not_said_not_to_differ(monkeypatch):
    """Two clusters without a failure "did not differ beyond chance" while the table said "no test"."""
    monkeypatch.setattr("flows.report.render.render_charts", lambda study: {})  # texts only
    study = make_study()
    clusters = {name: quiet(figures) for name, figures in study["clusters"].items()}
    study = assemble_study(clusters, month_range(FIRST, LAST), study["reproduce"]["command"])
    (pair,) = study["comparison"]
    assert pair["tests_run"] == 0 and pair["verdict"] == "not tested" and not pair["differ"]
    report = render_study(study)
    for shown in (study["summary"]["text"], report.html, report.text):
        assert "do not differ" not in shown and "no difference beyond chance" not in shown
    assert "rsc1 and rsc2 could not be compared: no test could run" in study["summary"]["text"]
    assert "rsc1 against rsc2: not compared: no test could run" in report.html
    assert "rsc1 AGAINST rsc2: not compared: no test could run" in report.text


def test_a_rate_without_an_interval_says_so_and_the_fleet_note_is_english(monkeypatch):
    monkeypatch.setattr("flows.report.render.render_charts", lambda study: {})  # texts only
    study = make_study()
    study["clusters"]["rsc2"]["fleet_fault_rate"].update(value=None, lower=None, upper=None)
    report = render_study(study)
    assert "(95%: – - –)" not in report.text
    assert "Node faults over the fleet: – per 1000 node-days (no interval: nothing measured to bound it)" in report.text
    assert "published fleets report" not in report.html and "published studies of whole fleets report" in report.html
