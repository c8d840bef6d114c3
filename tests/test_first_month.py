"""A real site's first months (issue 42, "Done when" 2): a mixed cluster (CPU-only nodes and jobs
beside the GPU ones) with only job records, three continuous months with jobs crossing the month
ends, built by the pipeline. The fleet's fault rate (and everything else that needs a node-event or
health source) is "not measured" everywhere it is shown, exactly where the simulator's truth says;
the GPU figures equal the truth over GPU jobs; the CPU-only attempts are counted in the totals and
the report's data coverage; no figure has a 0-GPU row."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month
from flows.figures.measured import codes_of
from flows.figures.month_metrics import job_runs
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months: `make test`, not `make test-fast`

FIRST, LAST = Month.parse("2026-08"), Month.parse("2026-10")
MONTHS = [FIRST, FIRST.next(), LAST]
# (seed, r_f): the first's GPU jobs have too few infrastructure failures to single out a lemon node
# without a node source, the second's enough (lemon_min_infra_failures: 10) in every month
SITES = [(3, 40.0), (8, 150.0)]
ZERO_GPUS = re.compile(r"(?<![\d,.])0 GPUs?\b")


def jobs_only_config(work: Path, cluster: str) -> Path:
    """A site's first config: the job records (sacct) alone, no node events, no health logs."""
    path = work / f"{cluster}.toml"
    path.write_text(
        f'cluster = "{cluster}"\nsite_timezone = "UTC"\n\n'
        f'[[sources]]\nkind = "sacct_psv"\npath = "sim/{cluster}/{{month}}/sacct.psv"\n\n'
        f'[paths]\ndata = "data"\nreports = "{(work / "reports").resolve()}"\nwarehouse = "warehouse/{cluster}.duckdb"\n'
    )
    return path


@pytest.fixture(scope="module", params=SITES, ids=lambda site: f"seed{site[0]}")
def site(request, tmp_path_factory) -> dict:
    """16 GPU nodes (runs of up to 64 GPUs, enough GPU node-days to measure r_f) beside 6 CPU-only
    nodes whose jobs outnumber the GPU ones, 2026-08..10 without a break, dumped as sacct only."""
    seed, r_f = request.param
    work = tmp_path_factory.mktemp(f"first-month-{seed}")
    cluster = "mixed"
    params = SimParams(
        cluster,
        FIRST,
        last_month=LAST,
        nodes=16,
        seed=seed,
        r_f=r_f,
        duration_scale=2.0,
        cpu_nodes=6,
        cpus_per_node=32,
        cpu_r_f=30.0,
        sources="jobs_only",
    )
    truth = simulate(params, work / "sim" / cluster)
    config = jobs_only_config(work, cluster)
    assert main(["backfill", "--config", str(config), "--from", str(FIRST), "--to", str(LAST)]) == 0
    built = {}
    for month in MONTHS:
        report_dir = load_config(config).report_dir(month)
        built[str(month)] = {
            "metrics": json.loads((report_dir / "metrics.json").read_text()),
            "txt": (report_dir / "report.txt").read_text(),
            # its no-break spaces (a number's, before its unit) as spaces, to find its sentences
            "html": (report_dir / "report.html").read_text().replace("&nbsp;", " "),
        }
    return {"truth": truth, "config": config, "built": built, "r_f": r_f}


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_the_simulated_site_is_a_first_months_shape(site, month: Month) -> None:
    """The premise, from the truth alone: CPU-only attempts outnumber the GPU ones, jobs cross the
    month's ends, and the GPU exposure suffices for the GPU figures but not the paper's r_f."""
    truth = site["truth"]["months"][str(month)]
    assert truth["cpu_only_attempts"] > truth["gpu_attempts"] > 0
    assert any(r["crosses_month_start"] or r["crosses_month_end"] for r in truth["training_runs"])
    assert truth["r_f_per_1000_node_days"]["all"]["node_days"] >= 100
    assert codes_of(truth["failed_rules"])["fleet_fault_rate"] == "no_node_source"
    few = truth["r_f_per_1000_node_days"]["all"]["rule_failures"] < 10
    assert ("lemon_nodes" in codes_of(truth["failed_rules"])) == few == (site["r_f"] < 100)


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_not_measured_exactly_where_the_truth_says(site, month: Month) -> None:
    """metrics.json's top-level `not_measured` names exactly the
    figures the truth's rules say its inputs cannot support; the fleet's fault rate keeps its keys
    with null numbers and says why; report.txt and report.html say "not measured"."""
    truth = site["truth"]["months"][str(month)]
    built = site["built"][str(month)]
    metrics = built["metrics"]
    assert set(metrics["not_measured"]) == set(codes_of(truth["failed_rules"]))
    fleet = metrics["fleet_fault_rate"]
    assert fleet["not_measured"] and fleet["value"] is None
    assert fleet["not_measured"] == metrics["not_measured"]["fleet_fault_rate"]
    assert metrics["failures_by_cause"] == []
    for text in (built["txt"], built["html"]):
        assert "not measured" in text.lower()
        assert "no node-event or health source" in text
    assert "NODE FAULTS OVER THE FLEET: 0.00" not in built["txt"]


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_gpu_figures_equal_the_truth_over_gpu_jobs(site, month: Month) -> None:
    """r_f (all GPU jobs) and MTTF by size count only the GPU attempts: their failures and node-days
    are the truth's, which knows nothing of the CPU jobs (its GPU history is the one the same seed
    gives without CPU nodes); every job run's ETTR is the truth's."""
    truth = site["truth"]["months"][str(month)]
    metrics = site["built"][str(month)]["metrics"]
    rate, expected = metrics["node_failure_rate"]["all"], truth["r_f_per_1000_node_days"]["all"]
    assert rate["failures"] == expected["rule_failures"]
    assert rate["node_days"] == pytest.approx(expected["node_days"], rel=1e-9)
    rows = {b["size_bucket"]: b for b in metrics["mttf_by_size"]}
    assert set(rows) == set(truth["size_buckets"])
    for label, figures in truth["size_buckets"].items():
        assert rows[label]["infra_failures"] == figures["expected_attributed"], label
        assert rows[label]["runtime_hours"] == pytest.approx(figures["runtime_hours"], rel=1e-9, abs=1e-9), label
    with duckdb.connect(str(load_config(site["config"]).warehouse_path), read_only=True) as con:
        runs = {r["first_job_id_raw"]: r for r in job_runs(con, month, every_run=True)}
    truth_runs = [r for r in truth["training_runs"] if r["runtime_seconds"] > 0]
    assert truth_runs
    for run in truth_runs:
        ours = runs[run["first_job_id_raw"]]
        assert (ours["runtime_seconds"], ours["queue_seconds"], ours["interruptions"]) == (
            run["runtime_seconds"],
            run["queue_seconds"],
            run["interruptions"],
        ), run
        assert ours["ettr"] == pytest.approx(run["ettr"], abs=1e-12)


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_cpu_only_attempts_are_counted_in_the_totals_and_the_data_coverage(site, month: Month) -> None:
    """The totals count the CPU-only attempts the truth ran, and the report says they are left out."""
    truth = site["truth"]["months"][str(month)]
    built = site["built"][str(month)]
    totals = built["metrics"]["totals"]
    assert totals["cpu_only_attempts"] == truth["cpu_only_attempts"]
    assert totals["gpu_attempts"] == truth["gpu_attempts"]
    assert totals["attempts"] == truth["cpu_only_attempts"] + truth["gpu_attempts"]
    line = f"{truth['cpu_only_attempts']:,} CPU-only attempts are not in the GPU figures"
    assert line in built["txt"] and line in built["html"]


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_no_figure_has_a_zero_gpu_row(site, month: Month) -> None:
    """MTTF by size, ETTR by size, the breakdowns and the trailing
    windows have no row for 0 GPUs, nor a breakdown row of 0 GPU-hours; the reports print none."""
    built = site["built"][str(month)]
    metrics = built["metrics"]
    assert all(b["size_bucket"] != "0" for b in metrics["mttf_by_size"])
    assert all(r["size_bucket"] != "0" for r in metrics["run_ettr"])
    for kind in ("priority", "all"):
        assert all(r["size_bucket"] != "0" for r in metrics["ettr_vs_expected"][kind])
    for window in metrics["history"]["trailing"]:
        assert all(b["size_bucket"] != "0" for b in window["mttf_by_size"])
    for dimension in ("account", "partition"):
        rows = metrics["breakdowns"][dimension]["rows"]
        assert rows and all(r["gpu_hours"] > 0 for r in rows)
    assert "cpu" not in {r["key"] for r in metrics["breakdowns"]["partition"]["rows"]}
    for text in (built["txt"], built["html"]):
        assert not ZERO_GPUS.search(text), ZERO_GPUS.search(text)


def test_explain_says_no_node_source_landed_never_nothing_found(site, capsys) -> None:
    """With only job records configured, a failed attempt's evidence says no health or node source
    was landed for its month (never "no event found"), and a node's months say its faults are not
    measured."""
    config = str(site["config"])
    with duckdb.connect(str(load_config(config).warehouse_path), read_only=True) as con:
        asked = con.execute(
            "select month, job_id, any_value(n.node) from fct_attempts, (select node from dim_nodes limit 1) as n "
            "where outcome in ('failed', 'infra_failed') group by month, job_id order by month, job_id"
        ).fetchall()
    for month in MONTHS:
        _, job, node = next(a for a in asked if a[0] == str(month))
        assert main(["explain", "--job", job, "--config", config, "--month", str(month), "--json"]) == 0
        evidence = [a["evidence"] for a in json.loads(capsys.readouterr().out)["attempts"] if a["evidence"]]
        assert evidence and all(
            e["not_measured"].startswith(f"no health or node source was landed for {month}") for e in evidence
        )
        assert all(e["events"] == [] and e["node_sources"] == [] for e in evidence)
        assert main(["explain", "--job", job, "--config", config, "--month", str(month)]) == 0
        text = capsys.readouterr().out
        assert "no health or node source was landed" in text and "none: no health or node event" not in text
        assert main(["node", node, "--config", config, "--month", str(month), "--json"]) == 0
        (shown,) = json.loads(capsys.readouterr().out)["months"]
        assert shown["not_measured"].startswith("no health or node source was landed") and shown["faults"] == []
        # the month's archive index: where its lemon candidates are not measured it says why, never
        # "no node was a candidate"; its large failures are those Slurm recorded, and it says so
        index = (load_config(config).report_dir(month) / "explained.html").read_text()
        why = site["built"][str(month)]["metrics"]["lemon_nodes"].get("not_measured")
        if why:  # seed 3's months (too few failures to single out a node without a node source)
            assert f"Not measured: {why}" in index and "No node was a candidate" not in index
        assert f"no health or node source was landed for {month}" in index
