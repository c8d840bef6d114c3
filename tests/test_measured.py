"""A figure is shown only where its inputs measured it (issue 42, item 1; flows/figures/measured.py).

The quick tier: the month's and the study's figures are the golden ones (tests/data/golden/reports,
a fully measured 64-node month and study), given the inputs and exposure of a real site's first
month by the rules a month's figures are computed with (`thin` below follows compute_metrics:
r_f written unmeasured before the models that use it), then rendered as the pipeline renders
them. test_a_jobs_only_month_with_two_gpu_jobs_end_to_end (slow) builds such a month.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import DATA_DIR, session_directory

from flows.config.cluster import AnalysisConfig
from flows.config.file import load_config
from flows.core.months import Month
from flows.figures.document import figures_of
from flows.figures.measured import (
    FIGURES,
    NEEDS,
    exposure,
    not_measured,
    trend_rates,
    unmeasured_codes,
    window_rates,
    write_unmeasured,
)
from flows.figures.models import expected_ettr_curves, expected_ettr_grid, projections
from flows.figures.period import unmeasured_rates
from flows.figures.rates import failure_rate, rate_ratio
from flows.figures.read import month_document, study_document
from flows.figures.study_metrics import assemble_study
from flows.figures.summary import data_quality
from flows.ingest.sources.registry import NODE_SOURCES
from flows.publish.archive import Archive, ClusterEntry, MonthEntry, render_index, trend
from flows.report.openmetrics import month_exposition
from flows.report.render import render_pages

GOLDEN = DATA_DIR / "golden" / "reports"
JOBS_ONLY = {"sacct_psv"}
ALL_INPUTS = {"sacct_psv", "sacctmgr_events_psv", "xid_syslog", "nhc_syslog", "dcgm_health_dir"}
# the figures that need GPU exposure (flows/figures/registry.py declares what each needs)
GPU_EXPOSURE_FIGURES = tuple(path for path, rules in NEEDS.items() if "gpu_exposure" in rules)
# ... and those that need a GPU attempt that ended (counts of what ended, not rates)
ENDED_FIGURES = tuple(path for path, rules in NEEDS.items() if "gpu_attempt_ended" in rules)
# ... and those that need a node source (the first rule a month of job records alone fails)
NODE_SOURCE_FIGURES = tuple(path for path, rules in NEEDS.items() if "node_source" in rules)
PARAMS = AnalysisConfig()
NO_NODE_SOURCE = "no node-event or health source was configured"
THIN = "2 GPU jobs on 10.2 GPU node-days this month: too little to measure a failure rate (100 needed"


def golden_month() -> dict:
    metrics = json.loads((GOLDEN / "month" / "metrics.json").read_text())
    del metrics["summary"]
    return metrics


def thin(
    metrics: dict,
    inputs: set[str],
    node_days: float | None = None,
    gpu_attempts: int | None = None,
    cpu_only: int | None = None,
    params: AnalysisConfig = PARAMS,
) -> dict:
    """`metrics` as a month with these inputs landed, `node_days` GPU node-days (no failure, none
    above paper_min_gpus) of `gpu_attempts` GPU attempts and `cpu_only` CPU-only attempts would
    have them (None: as they are)."""
    m = copy.deepcopy(metrics)
    if node_days is not None:
        m["node_failure_rate"]["all"] |= {"node_days": node_days, "failures": 0}
        m["node_failure_rate"]["paper"] |= {"node_days": 0.0, "failures": 0}
    if gpu_attempts is not None:
        m["totals"] |= {"gpu_attempts": gpu_attempts, "gpu_node_days": node_days}
    if cpu_only is not None:
        m["totals"]["cpu_only_attempts"] = cpu_only
    gaps = not_measured(exposure(inputs, m["totals"], m["node_failure_rate"]), params)
    m["node_failure_rate"] = unmeasured_rates(m["node_failure_rate"], gaps)
    m["projections"] = projections(m["node_failure_rate"], params)
    m["expected_ettr"] = expected_ettr_curves(m["node_failure_rate"], params)
    return write_unmeasured(m, gaps)


def rendered(metrics: dict) -> dict:
    """The month's pages and metrics.prom as write_report makes them (build_report), without the
    charts (drawing them takes seconds; tests/test_report.py has them)."""
    document = month_document(metrics)
    metrics = figures_of(document)
    html, email, text = render_pages({}, document)
    prom = month_exposition(document).decode()
    return {"metrics": metrics, "document": document, "html": html, "email": email, "text": text, "prom": prom}


def words(html: str) -> str:
    """The text of a page, tags and repeated white space left out (a no-break space as a space)."""
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", html, flags=re.S)).replace("&nbsp;", " ")
    return re.sub(r"\s+", " ", text)


def prom_samples(prom: str, name: str) -> list[str]:
    return [line for line in prom.splitlines() if line.startswith(f"reliability_{name}{{")]


# --- the rules -----------------------------------------------------------------------------------


def test_the_node_sources_are_the_kinds_that_tell_of_node_events_or_health():
    assert set(NODE_SOURCES) == {
        *("sacctmgr_events_psv", "sacctmgr_events_command", "scontrol_nodes", "scontrol_nodes_command"),
        *("xid_syslog", "xid_dmesg_dir", "nhc_syslog", "dcgm_health_dir", "gcm_health_dir", "link_syslog"),
        *("ipmi_sel_dir", "dcgm_series", "prometheus_dcgm"),
    }


def rates(all_days: float, paper_days: float = 0.0, failures: int = 0) -> dict:
    return {"all": {"node_days": all_days, "failures": failures}, "paper": {"node_days": paper_days, "failures": 0}}


@pytest.mark.parametrize(
    ("inputs", "totals", "r_f", "codes"),
    [
        # a site with every source and a month of exposure: everything measured
        (ALL_INPUTS, {"gpu_attempts": 900}, rates(1749.0, 629.0), {}),
        # only job records: nothing counted a node's faults
        (
            JOBS_ONLY,
            {"gpu_attempts": 900},
            rates(1749.0, 629.0, failures=12),
            {**dict.fromkeys(NODE_SOURCE_FIGURES, "no_node_source"), "node_repairs": "no_node_event_source"},
        ),
        # ... and fewer failures than lemon_min_infra_failures: no lemon-node candidates either
        (
            JOBS_ONLY,
            {"gpu_attempts": 900},
            rates(1749.0, 629.0, failures=9),
            {
                **dict.fromkeys(NODE_SOURCE_FIGURES, "no_node_source"),
                "lemon_nodes": "no_node_source_few_failures",
                "node_repairs": "no_node_event_source",
            },
        ),
        # a node source covers the nodes, however few the failures
        ({"sacct_psv", "scontrol_nodes"}, {"gpu_attempts": 900}, rates(1749.0, 629.0), {}),
        # 2 GPU jobs on 10.2 node-days: no GPU figure, whatever the sources
        (
            ALL_INPUTS,
            {"gpu_attempts": 2},
            rates(10.2),
            dict.fromkeys(("node_failure_rate.paper", *GPU_EXPOSURE_FIGURES), "thin_gpu_exposure"),
        ),
        # no GPU job at all: no count of infrastructure failures either (nothing a failure could end)
        (
            ALL_INPUTS,
            {"gpu_attempts": 0},
            rates(0.0),
            dict.fromkeys((*ENDED_FIGURES, "node_failure_rate.paper", *GPU_EXPOSURE_FIGURES), "no_gpu_jobs"),
        ),
        # the marts before gpu_attempts: zero node-days is no GPU job
        (
            ALL_INPUTS,
            {},
            rates(0.0),
            dict.fromkeys(("node_failure_rate.paper", *GPU_EXPOSURE_FIGURES), "no_gpu_jobs"),
        ),
        # enough exposure over every GPU job, too little above paper_min_gpus: the paper's r_f alone
        (ALL_INPUTS, {"gpu_attempts": 900}, rates(1749.0, 99.9), {"node_failure_rate.paper": "thin_gpu_exposure"}),
    ],
)
def test_the_rules_say_which_figures_a_month_cannot_support(inputs, totals, r_f, codes):
    assert unmeasured_codes(exposure(inputs, totals, r_f), PARAMS) == codes


def test_the_thresholds_are_config_keys():
    thin_month = exposure(JOBS_ONLY, {"gpu_attempts": 2}, rates(10.2, failures=3))
    assert "node_failure_rate.all" in unmeasured_codes(thin_month, PARAMS)
    lower = replace(PARAMS, min_gpu_node_days=10.0, lemon_min_infra_failures=3)
    assert set(unmeasured_codes(thin_month, lower)) == {"node_failure_rate.paper", *NODE_SOURCE_FIGURES, "node_repairs"}


def test_a_reason_counts_distinct_gpu_jobs():
    """Issue 51: a range's thin exposure names its distinct GPU jobs (fct_period_totals.gpu_jobs), not
    its attempts: a study of a real dump said "3 GPU jobs" of 2 jobs, one across the month end."""
    seen = exposure(JOBS_ONLY, {"gpu_attempts": 3, "gpu_jobs": 2}, rates(10.6), "in the range")
    assert not_measured(seen, PARAMS)["node_failure_rate.all"].startswith(
        "2 GPU jobs on 10.6 GPU node-days in the range"
    )


def test_the_reasons_are_in_words():
    gaps = not_measured(exposure(JOBS_ONLY, {"gpu_attempts": 2}, rates(10.2), gpu_ended_attempts=0), PARAMS)
    assert set(gaps) == set(FIGURES)
    assert gaps["totals.infra_failures"] == "no GPU attempt ended this month (2 GPU attempts still running at its end)"
    assert gaps["node_failure_rate.all"] == f"{THIN}, [analysis] min_gpu_node_days)"
    assert gaps["fleet_fault_rate"].startswith(NO_NODE_SOURCE)
    assert (
        "no GPU job ended in an infrastructure failure this month (10 needed to single out a node"
        in (gaps["lemon_nodes"])
    )
    assert not any("_" in why.split("[analysis]")[0] for why in gaps.values())  # no reason code, no column name


def test_a_trend_shows_only_the_months_measured():
    rows = [
        {"month": "2026-09", "paper": failure_rate(0, 0.0), "all": failure_rate(0, 10.2)},
        {"month": "2026-10", "paper": failure_rate(1, 629.0), "all": failure_rate(4, 1749.0)},
    ]
    thin_month, full_month = trend_rates(rows, PARAMS)
    assert thin_month["all"]["value"] is None and thin_month["all"]["upper"] is None
    assert thin_month["all"]["not_measured"] == (
        "10.2 GPU node-days in 2026-09: too little to measure a failure rate (100 needed, [analysis] min_gpu_node_days)"
    )
    assert thin_month["paper"]["not_measured"] == "no job with more than 128 GPUs ran in 2026-09"
    assert full_month == rows[1]
    window = {"months": 3, "months_available": 1, "paper": failure_rate(0, 0.0), "all": failure_rate(0, 0.2)}
    (thin_window,) = window_rates([window], PARAMS)
    assert thin_window["all"]["not_measured"].startswith("0.2 GPU node-days over the last 3 months: too little")


def test_a_rate_not_measured_has_no_ratio():
    assert rate_ratio(None, None, 3, 100.0) == {"ratio": None, "lower": None, "upper": None, "p_value": None}


# --- a month with only job records ---------------------------------------------------------------


def test_a_month_with_only_job_records_shows_no_fleet_fault_rate():
    """The issue's month: no node-event or health source, yet "NODE FAULTS OVER THE FLEET: 0.00 per
    1000 node-days (95%: 0.00 - 2.83) ... 42 nodes"."""
    report = rendered(thin(golden_month(), JOBS_ONLY))
    metrics = report["metrics"]
    fleet = metrics["fleet_fault_rate"]
    # the faults are unknown; the nodes seen and their node-days are what the job records observed
    assert fleet["value"] is None and fleet["failures"] is None and fleet["nodes"] == 64
    assert fleet["not_measured"].startswith(NO_NODE_SOURCE)
    assert metrics["not_measured"]["fleet_fault_rate"] == fleet["not_measured"]
    assert metrics["failures_by_cause"] == [] and "failures_by_cause" in metrics["not_measured"]
    assert f"NODE FAULTS OVER THE FLEET: not measured: {NO_NODE_SOURCE}" in report["text"]
    assert "FAILURES BY CAUSE: not measured" in report["text"]
    for page in (report["html"], report["email"]):
        assert f"not measured: {NO_NODE_SOURCE}" in words(page)
        assert "faults on" not in words(page)
    assert not prom_samples(report["prom"], "cause_failures")
    # r_f, MTTF and ETTR had their exposure: measured as before
    assert metrics["node_failure_rate"]["all"]["value"] is not None and metrics["mttf_by_size"]
    assert "node_failure_rate.all" not in metrics["not_measured"]


def test_lemon_nodes_without_a_node_source_need_enough_failures():
    report = rendered(thin(golden_month(), JOBS_ONLY))  # its 4 infrastructure failures are fewer than 10
    lemons = report["metrics"]["lemon_nodes"]
    assert lemons["candidates"] == [] and lemons["fleet_nodes"] is None
    assert lemons["not_measured"].startswith(f"{NO_NODE_SOURCE}, and 4 infrastructure failures")
    assert not prom_samples(report["prom"], "lemon_candidates")
    assert "LEMON-NODE CANDIDATES: not measured" in report["text"]
    assert "Lemon-node candidates not measured" in words(report["html"])
    enough = rendered(thin(golden_month(), JOBS_ONLY, params=replace(PARAMS, lemon_min_infra_failures=4)))
    assert "lemon_nodes" not in enough["metrics"]["not_measured"]
    assert prom_samples(enough["prom"], "lemon_candidates") == ['reliability_lemon_candidates{cluster="rsc2"} 0.0']


# --- a month of 2 GPU jobs on 10 node-days -------------------------------------------------------


def two_gpu_jobs(inputs: set[str] = JOBS_ONLY) -> dict:
    return rendered(thin(golden_month(), inputs, node_days=10.2, gpu_attempts=2, cpu_only=3858))


def test_two_gpu_jobs_on_ten_node_days_measure_no_gpu_figure():
    report = two_gpu_jobs()
    metrics = report["metrics"]
    for d in ("paper", "all"):
        rate = metrics["node_failure_rate"][d]
        assert rate["value"] is None and rate["upper"] is None and rate["not_measured"]
    assert metrics["mttf_by_size"] == [] and metrics["projections"] == [] and metrics["run_ettr"] == []
    assert metrics["ettr_vs_expected"]["priority"] == [] and metrics["ettr_vs_expected"]["not_measured"]
    assert metrics["lost_goodput"]["lost_gpu_hours"] is None and metrics["lost_goodput"]["not_measured"]
    assert metrics["breakdowns"]["account"]["rows"] == [] and "breakdowns" in metrics["not_measured"]
    assert metrics["month_over_month"]["p_value"] is None
    for name in ("node_failure_rate", "mttf_seconds", "model_mttf_seconds", "lost_gpu_seconds", "lost_goodput_ratio"):
        assert not prom_samples(report["prom"], name), name
    for section in ("MTTF BY JOB SIZE", "ETTR", "LOST GOODPUT", "BY ACCOUNT AND PARTITION"):
        assert f"{section}: not measured: {THIN}" in report["text"], section
    html = words(report["html"])
    for title in ("MTTF by job size", "Effective training time ratio", "Lost goodput", "By account and partition"):
        assert f"{title} Not measured: {THIN}" in html, title
    assert words(report["email"]).count("not measured") == words(report["html"]).count("not measured")


def test_the_headline_never_says_no_failures_from_thin_exposure():
    report = two_gpu_jobs()
    summary = report["metrics"]["summary"]
    assert summary["text"].startswith(THIN)
    assert "No infrastructure failures" not in report["text"] and "below" not in summary["text"]
    assert "No infrastructure failures" not in words(report["html"])
    cards = {h["key"]: h for h in summary["headline"]}
    assert cards["r_f_all"]["not_measured"].startswith(THIN) and cards["r_f_all"]["value"] is None
    assert f"Node failure rate, all GPU jobs: not measured: {THIN}" in report["text"]
    assert "Node failure rate, all GPU jobs not measured 2 GPU jobs on 10.2" in words(report["html"])


@pytest.mark.parametrize("gpu_attempts", [1, 2, 40])
def test_data_quality_warns_of_thin_exposure_at_any_gpu_exposure_below_the_threshold(gpu_attempts):
    metrics = thin(golden_month(), ALL_INPUTS, node_days=99.0, gpu_attempts=gpu_attempts)
    quality = data_quality(metrics)
    assert quality["status"] == "warning"
    assert quality["reasons"] == [
        f"{gpu_attempts:,} GPU job{'s' if gpu_attempts != 1 else ''} on 99.0 GPU node-days this month: too little to "
        "measure a failure rate (100 needed, [analysis] min_gpu_node_days), so it has no failure rate, MTTF, ETTR or "
        "lost goodput"
    ]


def test_the_data_coverage_line_counts_the_cpu_only_attempts():
    report = two_gpu_jobs()
    assert report["metrics"]["summary"]["coverage"][0] == "3,858 CPU-only attempts are not in the GPU figures"
    assert "3,858 CPU-only attempts are not in the GPU figures." in words(report["html"])
    assert "DATA COVERAGE\n  - 3,858 CPU-only attempts are not in the GPU figures\n" in report["text"]
    # the marts before cpu_only_attempts, or none: no line
    assert "CPU-only" not in rendered(thin(golden_month(), ALL_INPUTS))["text"]


def test_the_archive_says_what_was_not_measured():
    entry = MonthEntry("rsc2", "2026-10", two_gpu_jobs()["document"], ("report.html",))
    page = words(render_index(Archive([ClusterEntry("rsc2", (entry,), trend([entry]))])))
    assert f"Node failure rate, all GPU jobs: not measured : {THIN}" in page
    assert trend([entry]) is None  # a month without a measured r_f is no point of the chart


# --- measured as before ----------------------------------------------------------------------------


def test_a_month_with_node_sources_and_enough_exposure_is_measured_as_before():
    report = rendered(thin(golden_month(), ALL_INPUTS))
    assert report["metrics"]["not_measured"] == {}
    assert report["text"] == (GOLDEN / "month" / "report.txt").read_text()
    golden_prom = (GOLDEN / "month" / "metrics.prom").read_text()
    assert prom_samples(report["prom"], "node_failure_rate") == prom_samples(golden_prom, "node_failure_rate")
    assert prom_samples(report["prom"], "lemon_candidates") == prom_samples(golden_prom, "lemon_candidates")
    assert "not measured" not in words(report["html"]).lower()


def test_a_month_declared_empty_says_so_in_place_of_figures():
    metrics = thin(golden_month(), ALL_INPUTS, node_days=0.0, gpu_attempts=0) | {"no_jobs_declared": True}
    report = rendered(metrics)
    sentence = "No job ran on rsc2 in October 2026 (the operator said so with --no-jobs-ran)."
    assert report["metrics"]["summary"]["text"] == sentence
    assert sentence in report["text"] and "HEADLINE" not in report["text"] and "MTTF BY" not in report["text"]
    assert report["metrics"]["summary"]["data_quality"]["status"] == "ok"
    assert sentence in words(report["html"]) and "MTTF by job size" not in words(report["html"])


# --- a study -----------------------------------------------------------------------------------------


def test_a_study_with_a_jobs_only_cluster_says_what_it_did_not_measure():
    study = json.loads((GOLDEN / "study" / "metrics.json").read_text())
    clusters = study["clusters"]
    rsc2 = clusters["rsc2"]
    rsc2["node_failure_rate"]["all"] |= {"node_days": 10.2, "failures": 0}
    rsc2["node_failure_rate"]["paper"] |= {"node_days": 0.0, "failures": 0}
    rsc2["totals"] |= {"gpu_attempts": 2, "cpu_only_attempts": 3858}
    gaps = not_measured(exposure(JOBS_ONLY, rsc2["totals"], rsc2["node_failure_rate"], "in the range"), PARAMS)
    rsc2 = write_unmeasured(rsc2, gaps) | {"lost_goodput_by_size": []}
    rsc2["expected_ettr_grid"] = expected_ettr_grid(rsc2["node_failure_rate"], PARAMS)
    clusters["rsc1"]["not_measured"], clusters["rsc2"] = {}, rsc2
    months = [Month.parse(study["from_month"]), Month.parse(study["to_month"])]
    assembled = json.loads(json.dumps(assemble_study(clusters, months, study["reproduce"]["command"])))
    page, _, text = render_pages({}, study_document(assembled))  # without charts
    html = words(page)
    assert "rsc2: r_f not measured: 2 GPU jobs on 10.2 GPU node-days in the range" in assembled["summary"]["text"]
    assert f"Node faults over the fleet: not measured: {NO_NODE_SOURCE}" in text
    assert "r_f all: not measured: 2 GPU jobs on 10.2 GPU node-days in the range" in text
    assert "(3,858 CPU-only attempts are not in the GPU figures)" in text
    for section in ("MTTF by job size", "Failures by cause", "Lemon-node candidates", "Lost goodput"):
        assert re.search(f"{section}.{{0,400}}rsc2: not measured:", html), section
    assert "rsc2 r_f (all) not measured" in html


def test_rendering_is_the_same_for_a_saved_metrics_json(tmp_path: Path):
    first = rendered(two_gpu_jobs()["metrics"] | {})
    again = rendered(json.loads(json.dumps(first["metrics"])))
    assert first["text"] == again["text"] and first["prom"] == again["prom"]


# --- a real month, built ---------------------------------------------------------------------------


def keep_gpus_of_first(sacct: Path, jobs: int) -> None:
    """The month's records with GPUs only on the first `jobs` jobs that had them (their steps too)."""
    kept: set[str] = set()
    lines = []
    for line in sacct.read_text().splitlines():
        job = line.split("|", 1)[0].split(".")[0]
        if re.search(r"gres/gpu", line) and job not in kept and len(kept) < jobs and not line.startswith("JobID"):
            kept.add(job)
        if job not in kept:
            line = re.sub(r",gres/gpu(:\w+)?=\d+", "", line)
        lines.append(line)
    sacct.write_text("\n".join(lines) + "\n")


def thin_month_built(tmp_path_factory) -> tuple[Path, Path, str]:
    """A month of only job records with 2 GPU jobs, built by the pipeline once per session (its report
    directory, its config and the run's line of counts; tests/test_outputs_agree.py walks it too)."""
    from flows.demo import write_demo_config
    from flows.deployments import monthly_report
    from simulator import SimParams, simulate

    month = Month.parse("2026-10")
    with session_directory(tmp_path_factory, "thin-month") as root:
        config, done = root / "thin.toml", root / "built.json"
        if not done.exists():
            write_demo_config(root, "thin", root / "reports")
            # only the job records: the first [[sources]] of the demo's config
            text = config.read_text()
            config.write_text(re.sub(r"\n\[\[sources\]\]\nkind = \"(?!sacct_psv)[^\n]*\npath = [^\n]*\n", "\n", text))
            assert config.read_text().count("[[sources]]") == 1
            sim = root / "sim" / "thin" / str(month)
            simulate(SimParams("thin", month, nodes=8, seed=3, r_f=0.0, lemon_fraction=0.0), sim)
            keep_gpus_of_first(sim / "sacct.psv", 2)
            summary = monthly_report(cluster="thin", config=str(config), month=str(month))
            done.write_text(json.dumps({"counts": summary.counts}))
        counts = json.loads(done.read_text())["counts"]
    return load_config(config).report_dir(month), config, counts


@pytest.mark.slow  # builds a month
def test_a_jobs_only_month_with_two_gpu_jobs_end_to_end(tmp_path_factory):
    """The issue's mostly-CPU month, built: only job records, 2 GPU jobs. Before: "data quality:
    ok", "No infrastructure failures this month: the node failure rate is below ...", the fleet's
    fault rate 0.00 over every node."""
    report_dir, _, _ = thin_month_built(tmp_path_factory)
    metrics = json.loads((report_dir / "metrics.json").read_text())
    text, html = (report_dir / "report.txt").read_text(), words((report_dir / "report.html").read_text())
    prom = (report_dir / "metrics.prom").read_text()

    node_days = metrics["not_measured"]["node_failure_rate.all"]
    # what needs only an attempt that ended is measured: counts of what ended, not rates
    assert set(metrics["not_measured"]) == set(FIGURES) - set(ENDED_FIGURES), metrics["not_measured"]
    assert metrics["fleet_fault_rate"]["value"] is None and metrics["fleet_fault_rate"]["not_measured"]
    assert metrics["node_failure_rate"]["all"]["value"] is None and metrics["mttf_by_size"] == []
    assert re.match(r"(\d GPU jobs? on )?[\d.]+ GPU node-days this month: too little", node_days), node_days
    assert metrics["summary"]["data_quality"]["status"] == "warning"
    assert "No infrastructure failures" not in text and "No infrastructure failures" not in html
    assert "NODE FAULTS OVER THE FLEET: not measured: no node-event or health source" in text
    assert "not measured: no node-event or health source" in html
    assert not prom_samples(prom, "node_failure_rate") and not prom_samples(prom, "lemon_candidates")
    assert metrics["totals"]["gpu_attempts"] == 2 and node_days.startswith("2 GPU jobs on ")
    assert f"{metrics['totals']['cpu_only_attempts']:,} CPU-only attempts are not in the GPU figures" in text


def test_a_study_measures_with_the_inputs_landed_for_every_month_of_its_range(tmp_path: Path):
    from flows.study import range_inputs

    landed = {}
    for month, sources in (("2026-09", ALL_INPUTS), ("2026-10", JOBS_ONLY | {"xid_syslog"})):
        (tmp_path / month).mkdir()
        landed_input = {"file": "f", "records": 1, "sha256": "", "quarantined": 0}  # as the landing writes it
        landed_input |= {"dst_ambiguous_times": 0, "dst_nonexistent_times": 0}
        sources_landed = dict.fromkeys(sources, landed_input)
        manifest = {"sources": sources_landed, "as_of": {"time": f"{month}-28T00:00:00"}, "quarantine_sample": []}
        (tmp_path / month / "manifest.json").write_text(json.dumps(manifest))
        landed[Month.parse(month)] = tmp_path / month
    assert range_inputs(landed, Month.parse("2026-08"), Month.parse("2026-10")) == {"sacct_psv", "xid_syslog"}


def test_a_rate_measured_from_job_states_alone_says_it_is_a_lower_bound():
    """Enough GPU exposure but only job records: r_f and MTTF are shown, and the data coverage says
    they count only NODE_FAIL (a FAILED job a node fault ended is not attributed without node logs);
    with node sources landed it says nothing of the kind."""
    jobs_only = rendered(thin(golden_month(), JOBS_ONLY))
    assert "node_failure_rate.all" not in jobs_only["metrics"]["not_measured"]
    assert "the rate is a lower bound and MTTF an upper bound" in " ".join(jobs_only["metrics"]["summary"]["coverage"])
    assert "the rate is a lower bound" in words(jobs_only["html"])
    with_nodes = rendered(thin(golden_month(), ALL_INPUTS))
    assert not any("lower bound" in line for line in with_nodes["metrics"]["summary"]["coverage"])
