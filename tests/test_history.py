"""A continuous four-month history of a 300-node cluster, backfilled into one warehouse: every
month's failure rates, attribution (attempt by attempt) and ETTR per job run (runs that cross a
month end included) equal the simulator's truth; building the months newest first, or one again,
gives the same figures."""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from flows.cli import main
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.figures.compare import history_months
from flows.figures.month_metrics import job_runs
from flows.figures.moved_keys import ADDED_IN_4, DROPPED_IN_5, MONTH_ADDED_KEYS, moved
from simulator import SimParams, simulate
from simulator.records import HIGH_QOS_MIN_GPUS

# builds months: `make test`, not `make test-fast`; their figures, sentences and text pages are what
# is checked here, not the charts (7 months of 300 nodes drawn: 18 of the file's 74 CPU-s; test_report.py and
# test_chart_layout.py check them)
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("without_charts")]

FIRST, LAST = Month.parse("2026-05"), Month.parse("2026-08")
MONTHS = [FIRST, FIRST.next(), FIRST.next().next(), LAST]
CLUSTER = "hist"


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("history")
    truth = simulate(SimParams(CLUSTER, FIRST, last_month=LAST, nodes=300, seed=41, r_f=15.0), work / "sim" / CLUSTER)
    config = write_demo_config(work, CLUSTER, work / "reports")
    assert main(["backfill", "--config", str(config), "--from", str(FIRST), "--to", str(LAST)]) == 0
    return {"work": work, "truth": truth, "config": config}


def metrics(config: Path, month: Month) -> dict:
    return json.loads((load_config(config).report_dir(month) / "metrics.json").read_text())


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_failure_rates_equal_the_truth(history, month: Month) -> None:
    truth = history["truth"]["months"][str(month)]["r_f_per_1000_node_days"]
    reported = metrics(history["config"], month)["node_failure_rate"]
    for definition in ("paper", "all"):
        assert reported[definition]["failures"] == truth[definition]["rule_failures"], definition
        assert reported[definition]["node_days"] == pytest.approx(truth[definition]["node_days"], rel=1e-9)
    assert reported["all"]["failures"] > 0


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_the_fleet_fault_rate_is_the_injected_faults_over_every_node(history, month: Month) -> None:
    """The fleet's node fault rate beside r_f (docs/methodology.md "The fleet's node fault rate"):
    the simulator's faults of the month, idle nodes' included, but two of a node within an hour (one
    fault to the logs), over all 300 nodes for the whole month, with its interval and definition."""
    truth = history["truth"]["months"][str(month)]["fleet"]
    shown = metrics(history["config"], month)["fleet_fault_rate"]
    assert shown["nodes"] == 300 and shown["node_days"] == pytest.approx(truth["node_days"], rel=1e-12)
    assert 0 <= truth["node_failures"] - shown["failures"] <= max(1, truth["node_failures"] // 50)
    assert shown["value"] == pytest.approx(shown["failures"] * 1000 / shown["node_days"], rel=1e-12)
    assert shown["lower"] < shown["value"] < shown["upper"]
    assert "every GPU node" in shown["definition"]


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_attribution_attempt_by_attempt(history, month: Month) -> None:
    truth = history["truth"]["months"][str(month)]
    expected = {
        (f["job_id_raw"], f["end"]): f["expected_cause"] for f in truth["infra_failures"] if f["expected_attributed"]
    }
    expected |= {(f["job_id_raw"], f["end"]): f["cause"] for f in truth["window_false_positives"]}
    with duckdb.connect(str(load_config(history["config"]).warehouse_path), read_only=True) as con:
        found = {
            (job, end.strftime("%Y-%m-%dT%H:%M:%S")): cause
            for job, end, cause in con.execute(
                "select job_id_raw, end_at, cause_category from fct_attempts where month = ? and is_infra_failure",
                [str(month)],
            ).fetchall()
        }
    assert found == expected


def test_second_order_preemptions_are_found(history) -> None:
    """The paper's second-order cost is an estimate (Slurm does not record who preempted whom): over
    the four months, most preemptions the simulator made for restarts after a failure are found, and
    most found are real; the report counts what the mart holds."""
    injected, found = set(), set()
    with duckdb.connect(str(load_config(history["config"]).warehouse_path), read_only=True) as con:
        for month in MONTHS:
            truth = history["truth"]["months"][str(month)]
            injected |= {(p["job_id_raw"], p["submit"]) for p in truth["preemptions"] if p["by_restart_after_failure"]}
            month_found = con.execute(
                "select job_id_raw, strftime(submit_at, '%Y-%m-%dT%H:%M:%S') from fct_second_order_preemptions "
                "where month = ?",
                [str(month)],
            ).fetchall()
            assert metrics(history["config"], month)["lost_goodput"]["second_order_preemptions"] == len(month_found)
            found |= set(month_found)
    assert len(injected) >= 10
    assert len(found & injected) >= 0.85 * len(injected) and len(found & injected) >= 0.6 * len(found)


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_ettr_per_run_equals_the_truth(history, month: Month) -> None:
    config = load_config(history["config"])
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        runs = {r["first_job_id_raw"]: r for r in job_runs(con, month, every_run=True)}
    truth_runs = [r for r in history["truth"]["months"][str(month)]["training_runs"] if r["runtime_seconds"] > 0]
    assert truth_runs
    crossing = 0
    for run in truth_runs:
        ours = runs[run["first_job_id_raw"]]
        assert (ours["runtime_seconds"], ours["queue_seconds"], ours["interruptions"]) == (
            run["runtime_seconds"],
            run["queue_seconds"],
            run["interruptions"],
        ), run
        assert ours["ettr"] == pytest.approx(run["ettr"], abs=1e-12)
        crossing += run["crosses_month_start"] or run["crosses_month_end"]
    assert crossing > 0  # runs that cross a month end are checked too


def test_months_built_newest_first_end_with_the_figures_of_an_oldest_first_backfill(
    history, tmp_path, fresh_warehouse, capsys
) -> None:
    """Figures never depend on the order months are built in: each `run` refreshes the months built
    after it (their month-over-month change, trailing windows and job runs that began earlier), and
    a month built before its predecessors says which are missing."""
    forward = {str(m): metrics(history["config"], m) for m in MONTHS}
    # a second warehouse over the same logs, built newest first
    reverse = tmp_path / "reverse.toml"
    text = history["config"].read_text()
    reverse.write_text(
        text.replace('data = "data"', f'data = "{tmp_path / "data"}"')
        .replace(f'warehouse = "warehouse/{CLUSTER}.duckdb"', f'warehouse = "{tmp_path / "reverse.duckdb"}"')
        .replace(str((history["work"] / "reports").resolve()), str(tmp_path / "reports"))
        .replace('path = "sim/', f'path = "{history["work"]}/sim/')
    )
    fresh_warehouse(reverse)  # a new warehouse: the worker's scratch one, whose dbt parse other tests share
    capsys.readouterr()
    # the first two months (a month's figures depend on no later month): three builds, not ten
    reversed_months = MONTHS[:2]
    for month in reversed(reversed_months):
        assert main(["run", "--config", str(reverse), "--month", str(month)]) == 0
        refreshed = re.findall(r"^  (\d{4}-\d\d)  refreshed ", capsys.readouterr().out, re.M)
        assert refreshed == [str(m) for m in reversed_months if m > month]
        # the month's own figures at once; what it compares with says what is missing
        built = metrics(reverse, month)
        assert own_figures(built) == own_figures(forward[str(month)])
        assert str(month.previous()) in built["summary"]["earlier_months"]
        assert (
            built["summary"]["earlier_months"]
            in (tmp_path / "reports" / CLUSTER / str(month) / "report.txt").read_text()
        )
    for month in reversed_months:
        assert figures(metrics(reverse, month)) == figures(forward[str(month)]), month
    assert forward[str(LAST)]["history"]["earlier_months_missing"] == [
        str(m) for m in history_months(LAST, load_config(reverse).analysis) if m < FIRST
    ]
    # (a month rebuilt in a warehouse of several months: test_pipeline.py's
    # test_months_build_in_any_order_and_a_rebuild_replaces_exactly_its_month)


GOLDEN = Path(__file__).parent / "data" / "golden" / f"{CLUSTER}-seed41"
# Fields changed on purpose since the golden files were written (docs/metrics.md says how):
# each entry is a path of keys, e.g. ("lemon_nodes", "candidates").
DELIBERATELY_CHANGED: set[tuple[str, ...]] = {
    ("schema_version",),  # issue 43: 3 (docs/metrics.md "What moved in schema version 3")
    # the landed tables' schema is checked from the registry (suites landed_schema, landed_<table>);
    # the node signals' not-null checks moved from landed_health_events to one suite per table
    ("data_quality",),
    # each input's sha256 is the file's own, as sha256sum prints it (a directory's: of sha256sum's
    # lines for its files), no longer the hash of its name and content
    *(
        ("inputs", kind, "sha256")
        for kind in ("sacct_psv", "sacctmgr_events_psv", "xid_syslog", "nhc_syslog", "dcgm_health_dir")
    ),
    # issue 22: the lemon rules fitted to the bulk of the fleet (16 candidates of 300 nodes became
    # few), their evidence, and so the summary's candidate count and names
    ("lemon_nodes",),
    ("summary", "text"),
    ("summary", "headline", "value"),
    ("summary", "headline", "unit"),
}
# issue 35: the job records' reader counts conflicting records and NNodes repaired from the host list
INPUTS_ADDED = {
    ("inputs", "sacct_psv", key) for key in ("conflicting_attempts", "conflicts", "node_counts_from_node_list")
}
# issue 50: each reader counts what it skips and why (every record landed, quarantined or counted)
INPUTS_ADDED |= {
    ("inputs", kind, key)
    for kind, keys in {
        "sacct_psv": ("carriage_return_lines", "joined_lines"),
        "sacctmgr_events_psv": ("rows", "events", "cluster_records", "without_node", "joined_lines"),
        "xid_syslog": ("files_quarantined",),
        "nhc_syslog": ("files_quarantined",),
        "dcgm_health_dir": ("files_with_incidents", "files_quarantined"),
    }.items()
    for key in keys
}
# issue 35: the fleet's node fault rate beside r_f, and the lemon rules over the trailing window
SCIENCE_ADDED = {
    ("fleet_fault_rate",),
    ("parameters", "lemon_trailing_days"),
    ("parameters", "lemon_trailing_p_value"),
    ("lemon_nodes", "trailing"),
}
# issue 42: what a figure needs to be shown (flows/figures/measured.py): every figure of these
# months is measured, so the map is empty
MEASURED_ADDED = {
    ("not_measured",),
    ("parameters", "min_gpu_node_days"),
    ("parameters", "lemon_min_infra_failures"),
    ("summary", "coverage"),
    # GPU attempts and GPU nodes (docs/methodology.md "GPU attempts", "GPU nodes")
    *(("totals", key) for key in ("gpu_attempts", "cpu_only_attempts", "gpu_node_days", "cpu_only_nodes")),
}
# issue 43: what a month's figures gained from a study's, one period's figures (flows/figures/moved_keys.py)
PERIOD_ADDED = {  # inputs: INPUTS_ADDED; what version 5 no longer writes left out
    tuple(path.split(".")) for path in MONTH_ADDED_KEYS - DROPPED_IN_5 if "*" not in path
}
# issue 51: each node source's first and last record, and the period's calendar month and notice
COVERAGE_ADDED = {
    ("inputs", kind, key)
    for kind in ("sacctmgr_events_psv", "xid_syslog", "nhc_syslog", "dcgm_health_dir")
    for key in ("first_record", "last_record")
}
COVERAGE_ADDED |= {
    ("period", key)
    for key in ("month_start", "month_end", "observed_days", "month_days", "late_node_sources", "notice")
}
# issue 42, changed on purpose: the trend's tests are over the windows the built months tell apart
# (a window no longer than the built months is shown and tested once: flows/figures/compare.py)
TREND_TESTS = ("change_flags", "families", "trend")
# issue 53: the figures new in schema version 4 (flows/figures/registry.py `since`)
VERSION_4_ADDED = {(path,) for path in ADDED_IN_4 if "*" not in path}
# Fields added since the golden files were written: the golden files lack them.
ADDED: set[tuple[str, ...]] = {
    ("history", "earlier_months_missing"),  # issue 35: the months a report was built without
    ("summary", "earlier_months"),
    ("ettr_vs_expected",),
    ("change_flags",),
    ("breakdowns",),
    ("parameters", "breakdown_top"),
    *(("parameters", key) for key in ("ettr_priority_qos", "ettr_priority_partition", "ettr_model_min_gpus")),
    *INPUTS_ADDED,
    *SCIENCE_ADDED,
    *MEASURED_ADDED,
    *PERIOD_ADDED,
    *COVERAGE_ADDED,
    *VERSION_4_ADDED,
}


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_ettr_of_runs_that_ended_equals_the_truth_over_their_whole_history(history, month: Month) -> None:
    """ETTR as the paper measured it: each training run that ended in the month carries its whole
    history (the truth's months summed up to this one), the highest-priority runs are the
    simulator's QOS `high` ones (the largest jobs'), and each bucket's mean beside E[ETTR]."""
    whole: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for m in MONTHS[: MONTHS.index(month) + 1]:
        for run in history["truth"]["months"][str(m)]["training_runs"]:
            totals = whole[run["run_id"]]
            for i, key in enumerate(("runtime_seconds", "queue_seconds", "lost_seconds", "interruptions")):
                totals[i] += run[key]
    ended = [
        run
        for run in history["truth"]["months"][str(month)]["training_runs"]
        if not run["crosses_month_end"] and sum(whole[run["run_id"]][:2]) > 0
    ]
    with duckdb.connect(str(load_config(history["config"]).warehouse_path), read_only=True) as con:
        ours = {
            r[0]: r[1:]
            for r in con.execute(
                "select first_job_id_raw, runtime_seconds, queue_seconds, interruptions, ettr, months, gpus, "
                "is_priority_run, is_ettr_run from fct_job_run_histories where month = ?",
                [str(month)],
            ).fetchall()
        }
    for run in ended:
        runtime, queue, lost, interruptions = whole[run["run_id"]]
        mine = ours[run["first_job_id_raw"]]
        assert mine[:3] == (runtime, queue, interruptions), run
        assert mine[3] == pytest.approx((runtime - lost) / (runtime + queue), abs=1e-12)
        assert mine[6] == (mine[5] >= HIGH_QOS_MIN_GPUS)  # the QOS of the largest jobs
    # runs begun in an earlier month are there (the first month has none built before it)
    assert any(mine[4] > 1 for mine in ours.values()) == (month != FIRST)
    shown = metrics(history["config"], month)["ettr_vs_expected"]
    assert shown["priority_qos"] == "high"
    long_high = [ours[r["first_job_id_raw"]] for r in ended if ours[r["first_job_id_raw"]][6:8] == (True, True)]
    assert sum(b["runs"] for b in shown["priority"]) == len(long_high) > 0
    for bucket in shown["priority"]:
        assert bucket["mean_lower"] <= bucket["mean_ettr"] <= bucket["mean_upper"]
        assert bucket["expected_ettr"] == pytest.approx(bucket["mean_ettr"], abs=0.05)


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_metrics_equal_the_golden_files(history, month: Month) -> None:
    """metrics.json of each month equals the one written before the figures moved into the dbt
    DAG (tests/data/golden/README.md): integers and strings exactly, floats to 1e-9 relative
    (SQL and Python may add the same numbers in another order)."""
    golden = moved(json.loads((GOLDEN / f"{month}.json").read_text()))  # in this version's shape
    ours = metrics(history["config"], month)
    ours.pop("reproduce")
    for source in ours["inputs"].values():
        source.pop("file", None)
    assert_same(ours, golden, ())


# metrics.json of each month as 4ce972b wrote it (before the speed work of issue 34), paths left
# out: the text must stay byte for byte the same, but for the fields listed here as changed on purpose.
EXACT = Path(__file__).parent / "data" / "golden" / f"{CLUSTER}-seed41-4ce972b"
# top-level keys of metrics.json: data_quality, as the key checks moved from the GX suites to dbt's
# tests (issue 34: each check done once; flows/quality/suites.py says which layer owns which)
CHANGED_SINCE_EXACT: set[str] = {"data_quality", "schema_version"}  # schema_version: 3 since issue 43
# fields added since (paths of keys), left out of the comparison
ADDED_SINCE_EXACT: set[tuple[str, ...]] = {("history", "earlier_months_missing"), ("summary", "earlier_months")}
ADDED_SINCE_EXACT |= INPUTS_ADDED | SCIENCE_ADDED | MEASURED_ADDED | PERIOD_ADDED | COVERAGE_ADDED | VERSION_4_ADDED


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_metrics_are_byte_identical_to_those_before_the_speed_work(history, month: Month) -> None:
    ours = metrics(history["config"], month)
    ours.pop("reproduce")
    for source in ours["inputs"].values():
        source.pop("file", None)
    theirs = moved(json.loads((EXACT / f"{month}.json").read_text()))  # in this version's shape
    for key in CHANGED_SINCE_EXACT:
        ours.pop(key), theirs.pop(key)
    for path in ADDED_SINCE_EXACT:
        drop(ours, path)
    for figures_of in (ours, theirs):
        functools.reduce(dict.__getitem__, TREND_TESTS[:-1], figures_of).pop(TREND_TESTS[-1])
    for figures_of in (ours, theirs):  # issue 35: the summary names and counts the trailing window's candidates too
        figures_of["summary"].pop("text")
        for item in figures_of["summary"]["headline"]:
            if item["key"] == "lemon_candidates":
                item.pop("value")
            if item["key"] == "infra_failures":  # issue 42: "of N GPU attempts" (GPU figures count GPU attempts)
                item.pop("unit")
    assert json.dumps(ours, indent=1, sort_keys=True) == json.dumps(theirs, indent=1, sort_keys=True)


def drop(node, path: tuple[str, ...]) -> None:
    """Remove the key at `path` (from each item of a list on the way)."""
    if isinstance(node, list):
        for item in node:
            drop(item, path)
    elif len(path) == 1:
        node.pop(path[0])
    else:
        drop(node[path[0]], path[1:])


def assert_same(ours, golden, path: tuple[str, ...]) -> None:
    if path in DELIBERATELY_CHANGED:
        return
    where = ".".join(path) or "metrics"
    if isinstance(golden, dict):
        assert isinstance(ours, dict), where
        assert sorted(k for k in ours if (*path, k) not in ADDED) == sorted(golden), where
        for key in golden:
            assert_same(ours[key], golden[key], (*path, key))
    elif isinstance(golden, list):
        assert isinstance(ours, list) and len(ours) == len(golden), where
        for mine, theirs in zip(ours, golden, strict=True):
            assert_same(mine, theirs, path)  # a list's items share its path
    elif isinstance(golden, float) and not isinstance(ours, bool):
        assert ours == pytest.approx(golden, rel=1e-9, abs=1e-12), where
    else:
        assert ours == golden, where


def figures(month_metrics: dict) -> dict:
    """Everything but what names the config file and its paths."""
    kept = {k: v for k, v in month_metrics.items() if k not in ("reproduce", "inputs", "quarantine_sample")}
    return kept


def own_figures(month_metrics: dict) -> dict:
    """The month's own figures: without what compares it with the months before it."""
    kept = {
        k: v
        for k, v in figures(month_metrics).items()
        # ettr_vs_expected and breakdowns (their ETTR): a run that ended this month carries its
        # earlier months' part
        if k
        not in (
            "history",
            "month_over_month",
            "summary",
            "data_quality",
            "change_flags",
            "ettr_vs_expected",
            "breakdowns",
            "month_over_month_by_cause",
        )
    }
    # the lemon rules over the trailing window read the months before it
    kept["lemon_nodes"] = {k: v for k, v in month_metrics["lemon_nodes"].items() if k != "trailing"}
    return kept


def test_every_month_is_dumped_while_jobs_still_run(history) -> None:
    """The logs as a site has them: each month's dump holds attempts still running at its dump time,
    which the next month's dump shows ended."""
    with duckdb.connect(str(load_config(history["config"]).warehouse_path), read_only=True) as con:
        for month in MONTHS[:-1]:
            (carried,) = con.execute(
                """select count(*) from fct_attempts a join fct_attempts b using (attempt_id)
                   where a.month = ? and b.month = ? and a.is_open and not b.is_open""",
                [str(month), str(month.next())],
            ).fetchone()
            assert carried > 0
