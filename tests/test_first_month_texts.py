"""What a new user's first month on real dumps with only job records printed that its inputs cannot
support or a reader trips on (issue 42, the walk-through on tests/data/xdmod and tests/data/slurm-22.05):
each found there, reproduced here on the golden month made thin as flows/figures/measured.py writes
one, rendered without charts (tests/test_measured.py's helpers). Nothing here builds a month."""

from __future__ import annotations

from test_measured import JOBS_ONLY, PARAMS, golden_month, rendered, thin, words

from flows.figures.figure_types import LemonCandidate, LemonNodes
from flows.figures.formats import fmt_duration, fmt_num
from flows.figures.measured import exposure, not_measured, trend_rates, window_rates
from flows.figures.rates import failure_rate
from flows.figures.read import month_document
from flows.figures.summary import earlier_months_note
from flows.publish.archive import Archive, ClusterEntry, MonthEntry, render_index, trend
from flows.report.charts import month_period
from flows.report.failure_charts import trend_chart
from flows.report.lemon_export import Listed, drain_reason, drain_script
from flows.report.render import build_report


def cpu_only_month() -> dict:
    """A month of 3 CPU-only attempts and no GPU job (Open XDMoD's dump of a CPU cluster)."""
    m = thin(golden_month(), JOBS_ONLY, node_days=0.0, gpu_attempts=0, cpu_only=3)
    m["totals"] |= {"attempts": 3}  # infra_failures: null, as the rules write it (no GPU attempt could fail)
    m["job_mix"] = []
    return m


def tiny_month() -> dict:
    """A month of 12 GPU jobs of a few seconds each (a test cluster's sacct: 0.0027 GPU node-days)."""
    return thin(golden_month(), JOBS_ONLY, node_days=0.0027083, gpu_attempts=12, cpu_only=6)


def test_a_few_minutes_of_gpu_jobs_are_not_printed_as_0_node_days():
    reasons = tiny_month()["not_measured"]
    assert reasons["node_failure_rate.all"].startswith("12 GPU jobs on 0.0027 GPU node-days this month: too little")
    assert "0.0 GPU" not in " ".join(reasons.values())
    assert not_measured(exposure(JOBS_ONLY, {"gpu_attempts": 2}, _rates(10.2)), PARAMS)[
        "node_failure_rate.all"
    ].startswith("2 GPU jobs on 10.2 GPU node-days")


def _rates(all_days: float, failures: int = 0) -> dict:
    return {"all": failure_rate(failures, all_days), "paper": failure_rate(0, 0.0)}


def test_lemons_not_measured_say_no_gpu_job_or_no_failure_not_0_are_too_few():
    no_gpu = not_measured(exposure(JOBS_ONLY, {"gpu_attempts": 0}, _rates(0.0)), PARAMS)["lemon_nodes"]
    assert no_gpu == "no node-event or health source was configured, and no GPU job ran this month"
    none = not_measured(exposure(JOBS_ONLY, {"gpu_attempts": 12}, _rates(500.0)), PARAMS)["lemon_nodes"]
    assert none == (
        "no node-event or health source was configured, and no GPU job ended in an infrastructure failure "
        "this month (10 needed to single out a node, [analysis] lemon_min_infra_failures)"
    )
    three = not_measured(exposure(JOBS_ONLY, {"gpu_attempts": 12}, _rates(500.0, 3)), PARAMS)["lemon_nodes"]
    assert "3 infrastructure failures of GPU jobs this month are too few to single out a node" in three


def test_a_month_without_gpu_attempts_has_no_0_of_0_headline():
    report = rendered(cpu_only_month())
    (item,) = [h for h in report["metrics"]["summary"]["headline"] if h["key"] == "infra_failures"]
    assert item["value"] is None and item["not_measured"] == "no GPU job ran this month"
    assert "Infrastructure failures: not measured: no GPU job ran this month" in report["text"]
    assert "0 of 0" not in report["text"] and "0 of 0" not in words(report["html"])


def test_a_headline_figure_not_measured_keeps_no_dash_in_its_unit():
    headline = {h["key"]: h for h in rendered(tiny_month())["metrics"]["summary"]["headline"]}
    assert headline["lost_goodput"]["unit"] == "GPU-hours"
    assert headline["lemon_candidates"]["unit"] == "nodes"
    assert (
        headline["infra_failures"]["unit"] == "of 12 GPU attempts" and headline["infra_failures"]["value"] is not None
    )


def test_a_month_of_cpu_only_attempts_does_not_say_no_job_attempts():
    page = words(rendered(cpu_only_month())["html"])
    assert "No job attempts this month" not in page
    assert (
        "No GPU job attempt this month: the job mix is of GPU attempts, and the month's 3 attempts were CPU-only."
        in page
    )


def test_a_thin_trailing_window_has_no_rates_by_cause_or_mttf_by_size():
    window = {
        "months": 3, "months_available": 1, "paper": failure_rate(0, 0.0), "all": failure_rate(3, 0.0027),
        "by_cause": [{"category": "unattributed_node_failure", "failures": 3, "value": 1107692.3}],
        "mttf_by_size": [{"size_bucket": "4", "infra_failures": 2, "mttf_hours": 0.0024}],
    }  # fmt: skip
    (thin_window,) = window_rates([window], PARAMS)
    assert thin_window["by_cause"] == [] and thin_window["mttf_by_size"] == []
    wide = window | {"all": failure_rate(3, 500.0)}
    assert window_rates([wide], PARAMS)[0]["by_cause"] == wide["by_cause"]
    assert window_rates([wide], PARAMS, causes_measured=False)[0]["by_cause"] == []


def test_a_trend_never_measured_says_why_it_has_no_chart():
    m = tiny_month()
    m["parameters"]["min_gpu_node_days"] = PARAMS.min_gpu_node_days  # as a month built since issue 42 has it
    rows = [{"month": month, "paper": failure_rate(0, 0.0), "all": failure_rate(0, 0.001)} for month in ("2026-09", "2026-10")]  # fmt: skip
    m["history"]["monthly"] = trend_rates(rows, PARAMS)
    assert trend_chart(month_period(month_document(m))) is None
    page = words(rendered(m)["html"])
    assert "No trend chart: r f is not measured in any of the 2 months built (a month needs 100 GPU node-days)." in page
    m["history"]["monthly"] = m["history"]["monthly"][-1:]
    page = words(rendered(m)["html"])
    assert "no earlier month is built, so no trend chart yet." in page


def test_the_archive_names_a_single_month_once():
    entry = MonthEntry("ubhpc", "2015-07", rendered(cpu_only_month())["document"], ("report.html",))
    page = words(render_index(Archive([ClusterEntry("ubhpc", (entry,), trend([entry]))])))
    assert "1 cluster, 1 monthly report." in page
    assert "ubhpc : 1 month, 2015-07" in page and "2015-07 to 2015-07" not in page
    assert "1 month built, July 2015." in page and "July 2015 to July 2015" not in page


def test_lemons_not_measured_say_only_why():
    page = words(rendered(tiny_month())["html"])
    section = page[page.index("Lemon-node candidates Not measured") :]
    assert section.startswith(
        "Lemon-node candidates Not measured: no node-event or health source was configured, and no GPU job ended"
    )
    for said in ("No node stood out", "No node had a lemon signal", "bulk of the", "– days", "– nodes"):
        assert said not in page, said


def test_a_month_where_no_node_had_a_lemon_signal_says_so_in_place_of_the_chart():
    m = golden_month()
    lemons = m["lemon_nodes"]
    lemons["signal_distribution"] = {signal: [[0.0, 1.0]] for signal in lemons["signal_distribution"]}
    lemons["candidates"] = []
    report = build_report(m)
    assert "lemon_signals" not in report.charts
    assert (
        "No node had a lemon signal in the 28 days to 2026-11-01 00:00 (no health event, drain, ticket or failure "
        "it caused): nothing to chart." in words(report.html)
    )


def test_a_few_gpu_seconds_are_not_printed_as_0_gpu_hours():
    assert (fmt_num(0.0056), fmt_num(0.0), fmt_num(0.5), fmt_num(1234.4)) == ("< 1", "0", "< 1", "1,234")
    m = tiny_month()
    m["job_mix"] = [{"outcome": "completed", "attempts": 4, "attempt_share": 1.0, "gpu_hours": 0.0056, "gpu_hours_share": 1.0}]  # fmt: skip
    assert "completed 4 100.0% &lt; 1 100.0%" in words(rendered(m)["html"])  # "< 1", escaped


def test_a_first_month_says_all_earlier_months_are_missing_not_11_of_the_11():
    m = tiny_month()
    m["history"]["monthly"] = [r for r in m["history"]["monthly"] if r["month"] == m["month"]]
    m["history"]["earlier_months_missing"] = [f"2025-{n}" for n in ("11", "12")] + [
        f"2026-{n:02d}" for n in range(1, 10)
    ]
    note = earlier_months_note(m)
    assert note.startswith("Not built: 2025-11 to 2026-09 (all 11 months before this one that the trailing windows")
    m["history"]["earlier_months_missing"] = ["2026-09"]
    assert "(the month before this one, which the trailing windows reach back to)" in earlier_months_note(m)


def test_the_drain_script_of_lemons_not_measured_says_so_not_no_candidate():
    lemons = LemonNodes.model_validate(tiny_month()["lemon_nodes"])
    script = drain_script(lemons, "2026-10")
    assert "# lemon nodes not measured: no node-event or health source was configured" in script
    assert "no candidate this month" not in script and "scontrol" not in script.split("set -eu")[1]
    one = {"node": "n1", "rules": ["repeat_offender"], "p_value": 1e-4, "failures": ["x"], "incident_hours": 0}
    evidence = {key: 0 for key in LemonCandidate.model_fields if key not in one}
    assert "1 infra failure, 0 incident hours" in drain_reason(Listed(LemonCandidate(**one, **evidence)), "2026-10")


def test_a_repair_under_a_minute_is_not_printed_as_0_min():
    assert [fmt_duration(h) for h in (10 / 3600, 0.5, 3.25, 72.0)] == ["10 s", "30 min", "3.2 h", "3.0 d"]


def test_a_cluster_alone_says_not_measured_without_an_empty_name():
    text = words(rendered(tiny_month())["html"])
    assert "Failures by cause Not measured:" in text and " : not measured" not in text
