"""The monthly flow end to end on a small simulated month, checked against independent arithmetic."""

import csv
import json
import re
import shutil
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import pytest

from flows.config.file import load_config
from flows.core.errors import TooManyBadRowsError
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.deployments import monthly_report
from flows.ingest.land import land_month
from flows.publish.reuse import file_digests, record_path
from flows.quality import suites as suites_module
from flows.quality.suites import DataQualityError, validate_month
from flows.warehouse.build import build_months
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

MONTH = Month.parse("2026-10")
REPO_ROOT = Path(__file__).resolve().parents[1]
CLUSTER = "testc"


def bucket_label(gpus: int) -> str:
    if gpus <= 2:
        return str(gpus)
    upper = 1 << (gpus - 1).bit_length()
    return str(upper) if upper <= 8192 else ">8192"


def parse_ts(text: str) -> datetime | None:
    return None if text in ("Unknown", "None", "") else datetime.fromisoformat(text)


def independent_figures(sacct_path: Path, truth: dict) -> dict:
    """Attempts, runtime per bucket and failures per bucket, straight from the sacct text and the truth file."""
    month_start, month_end = MONTH.start.replace(tzinfo=None), MONTH.end.replace(tzinfo=None)
    runtime: dict[str, float] = defaultdict(float)
    attempts = 0
    with open(sacct_path, newline="") as handle:
        for row in csv.DictReader(handle, delimiter="|"):
            start, end, submit = parse_ts(row["Start"]), parse_ts(row["End"]), parse_ts(row["Submit"])
            if (end is not None and end < month_start) or submit >= month_end:
                continue
            attempts += 1
            match = re.search(r"gres/gpu=(\d+)", row["AllocTRES"]) or re.search(r"gres/gpu=(\d+)", row["ReqTRES"])
            gpus = int(match.group(1)) if match else 0
            if start is not None:
                lo, hi = max(start, month_start), min(end or month_end, month_end)
                runtime[bucket_label(gpus)] += max((hi - lo).total_seconds(), 0) / 3600
    failures = Counter(bucket_label(f["gpus"]) for f in attributed_by_rule(truth))
    return {"attempts": attempts, "runtime": runtime, "failures": failures}


def attributed_by_rule(truth: dict) -> list[dict]:
    """What the attribution rule (docs/methodology.md) must find: the injected failures it can see, plus the
    attempts it attributes although no failure ended them (the simulator predicts both)."""
    found = [f for f in truth["infra_failures"] if f["expected_attributed"]]
    return found + [{**f, "expected_cause": f["cause"]} for f in truth["window_false_positives"]]


@pytest.fixture(scope="module")
def month_run(tmp_path_factory, fresh_warehouse):
    workdir = tmp_path_factory.mktemp("pipeline")
    config_path = write_demo_config(workdir, CLUSTER, workdir / "reports")
    fresh_warehouse(config_path, "module")
    sim_dir = workdir / "sim" / CLUSTER / str(MONTH)
    # user and admin requeues: half marked in AdminComment, 2% next to an unrelated critical drain
    params = SimParams(CLUSTER, MONTH, nodes=48, seed=11, r_f=20.0, marked_requeue_share=0.5, requeue_drain_share=0.02)
    truth = simulate(params, sim_dir)
    summary = monthly_report(cluster=CLUSTER, config=str(config_path), month=str(MONTH))
    metrics = json.loads(Path(summary.metrics).read_text())
    return {
        "workdir": workdir,
        "config": config_path,
        "sim": sim_dir,
        "truth": truth,
        "summary": summary,
        "metrics": metrics,
        "params": params,
    }


def test_counts_match_the_logs(month_run):
    expected = independent_figures(month_run["sim"] / "sacct.psv", month_run["truth"])
    metrics = month_run["metrics"]
    assert metrics["totals"]["attempts"] == expected["attempts"]
    assert metrics["totals"]["infra_failures"] == len(attributed_by_rule(month_run["truth"])) > 0
    assert sum(o["attempts"] for o in metrics["job_mix"]) == expected["attempts"]


def test_each_stage_is_timed_by_its_task_run(month_run):
    seconds = month_run["summary"].stage_seconds
    assert list(seconds) == ["land", "dbt", "metrics", "quality", "render", "deliver"]
    assert all(isinstance(s, float) and s >= 0 for s in seconds.values()) and seconds["dbt"] > 0


def test_mttf_per_bucket_is_runtime_over_injected_failures(month_run):
    expected = independent_figures(month_run["sim"] / "sacct.psv", month_run["truth"])
    rows = {b["size_bucket"]: b for b in month_run["metrics"]["mttf_by_size"]}
    checked = 0
    for label, failures in expected["failures"].items():
        row = rows[label]
        assert row["infra_failures"] == failures
        assert row["runtime_hours"] == pytest.approx(expected["runtime"][label], rel=1e-9)
        assert row["mttf_hours"] == pytest.approx(expected["runtime"][label] / failures, rel=1e-9)
        assert row["mttf_lower_hours"] < row["mttf_hours"] < row["mttf_upper_hours"]
        checked += 1
    assert checked >= 1
    for label, row in rows.items():
        if label not in expected["failures"]:
            assert row["infra_failures"] == 0 and row["mttf_hours"] is None


def test_causes_match_the_injected_ones(month_run):
    injected = Counter(f["expected_cause"] for f in attributed_by_rule(month_run["truth"]))
    reported = Counter({c["category"]: c["failures"] for c in month_run["metrics"]["failures_by_cause"]})
    assert reported == injected


def test_failure_rates_equal_the_truth(month_run):
    truth = month_run["truth"]["r_f_per_1000_node_days"]
    false_positives = month_run["truth"]["window_false_positives"]
    extra = {"all": len(false_positives), "paper": sum(f["gpus"] > 128 for f in false_positives)}
    for definition in ("paper", "all"):
        reported = month_run["metrics"]["node_failure_rate"][definition]
        assert reported["failures"] == truth[definition]["failures"] + extra[definition]
        assert reported["node_days"] == pytest.approx(truth[definition]["node_days"], rel=1e-6)


def test_report_and_metrics_on_disk(month_run):
    report_dir = month_run["workdir"] / "reports" / CLUSTER / str(MONTH)
    html = (report_dir / "report.html").read_text()
    assert f"Cluster reliability: {CLUSTER}, {MONTH}" in html
    assert "MTTF by job size" in html and "Node failure rate" in html
    for section in ("Trend", "Effective training time ratio", "Lost goodput", "Lemon-node candidates"):
        assert f"<h2>{section}</h2>" in html
    metrics = month_run["metrics"]
    assert metrics["month"] == str(MONTH) and metrics["cluster"] == CLUSTER
    # every mart, the landed data (its schema from the registry's suites), shares
    suites = {p.stem for p in (Path(__file__).resolve().parents[1] / "expectations").glob("*.json")} | {
        "landed_schema",
        "landed_node_events",
        "landed_health_checks",
        "landed_xid_events",
    }
    assert {q["suite"] for q in metrics["data_quality"]} == suites
    assert all(not q["failures"] and not q["warnings"] for q in metrics["data_quality"])
    schema_doc = (Path(__file__).resolve().parents[1] / "docs" / "metrics.md").read_text()
    assert [key for key in metrics if f"`{key}" not in schema_doc] == []  # every key is documented

    import pyarrow.parquet as pq

    failures = pq.read_table(report_dir / "failures.parquet")
    assert failures.num_rows == metrics["totals"]["infra_failures"] and "cause_category" in failures.column_names
    assert pq.read_table(report_dir / "node_days.parquet").num_rows > 0
    runs = pq.read_table(report_dir / "job_runs_ettr.parquet")
    assert runs.num_rows == sum(bucket["runs"] for bucket in metrics["run_ettr"])
    stored = list((month_run["workdir"] / "data" / "quality" / CLUSTER / str(MONTH)).glob("*.json"))
    assert stored and {r["suite"] for r in json.loads(stored[0].read_text())} == suites  # kept per run
    assert metrics["node_failure_rate"]["all"]["lower"] <= metrics["node_failure_rate"]["all"]["value"]


def test_rerun_gives_identical_results(month_run):
    report_dir = month_run["workdir"] / "reports" / CLUSTER / str(MONTH)
    before = {name: (report_dir / name).read_bytes() for name in ("report.html", "metrics.json")}
    monthly_report(cluster=CLUSTER, config=str(month_run["config"]), month=str(MONTH))
    assert {name: (report_dir / name).read_bytes() for name in before} == before


def test_a_report_that_would_be_the_same_is_copied_and_drawing_it_again_gives_its_bytes(month_run, monkeypatch):
    config = load_config(month_run["config"])
    report_dir = config.report_dir(MONTH)
    before = file_digests(report_dir)
    with monkeypatch.context() as patched:  # the figures and rows are the same: nothing is drawn
        patched.setattr("flows.report.render.write_report", lambda *args: pytest.fail("the report was drawn again"))
        monthly_report(cluster=CLUSTER, config=str(config.config_path), month=MONTH, refresh=True)
    assert file_digests(report_dir) == before
    record_path(config, MONTH).unlink()  # what rendered the report in place is not known: drawn again
    monthly_report(cluster=CLUSTER, config=str(config.config_path), month=MONTH, refresh=True)
    assert file_digests(report_dir) == before


def test_a_suite_whose_rows_are_unchanged_has_its_result_again_without_gx(month_run, tmp_path, monkeypatch):
    config = load_config(month_run["config"])
    kept = {"landed_dir": config.landed_dir(MONTH), "results_dir": tmp_path / "runs"}
    first = validate_month(config.warehouse_path, MONTH, **kept)
    monkeypatch.setattr(suites_module, "_validate", lambda *args: pytest.fail("validated again"))
    assert validate_month(config.warehouse_path, MONTH, **kept) == first
    assert len(list((tmp_path / "runs").glob("*.json"))) == 2  # each run's results kept all the same


def corrupt_line(sacct: Path, index: int, field: int, value: str) -> str:
    """Put `value` into one field of line `index` (0 = header); return the original text."""
    original = sacct.read_text()
    lines = original.splitlines()
    fields = lines[index].split("|")
    fields[field] = value
    lines[index] = "|".join(fields)
    sacct.write_text("\n".join(lines) + "\n")
    return original


def test_bad_rows_beyond_the_limit_fail_naming_file_line_and_field(month_run):
    workdir = month_run["workdir"]
    report = workdir / "reports" / CLUSTER / str(MONTH) / "report.html"
    before = report.read_bytes()
    raw_copy = workdir / "data" / "raw" / CLUSTER / str(MONTH) / "sacct.psv"
    raw_before = raw_copy.read_bytes()
    strict = workdir / "strict.toml"
    strict.write_text(month_run["config"].read_text() + "\n[ingest]\nmax_bad_rows = 0\nmax_bad_row_share = 0\n")
    sacct = month_run["sim"] / "sacct.psv"
    original = corrupt_line(sacct, 6, 14, "two")  # NNodes
    try:
        with pytest.raises(TooManyBadRowsError, match=rf"{re.escape(str(sacct))}:7: field NNodes='two'"):
            monthly_report(cluster=CLUSTER, config=str(strict), month=str(MONTH))
    finally:
        sacct.write_text(original)
    assert report.read_bytes() == before  # a failed run leaves the previous report alone
    assert raw_copy.read_bytes() == raw_before  # and the raw copies of the inputs it landed from


def test_a_bad_row_is_quarantined_and_reported(tmp_path, fresh_warehouse):
    config = write_demo_config(tmp_path, "q", tmp_path / "reports")
    fresh_warehouse(config)
    sim = tmp_path / "sim" / "q" / str(MONTH)
    simulate(SimParams("q", MONTH, nodes=8, seed=2), sim)
    rows_before = len((sim / "sacct.psv").read_text().splitlines()) - 1
    corrupt_line(sim / "sacct.psv", 3, 13, "12:xx:00")  # Elapsed
    with open(sim / "xid.log", "a") as log:
        log.write("[ 1843.308145] NVRM: Xid (PCI:0000:b3:00): 79, GPU has fallen off the bus.\n")
    summary = monthly_report(cluster="q", config=str(config), month=str(MONTH))
    metrics = json.loads(Path(summary.metrics).read_text())
    assert metrics["inputs"]["sacct_psv"]["quarantined"] == 1
    assert metrics["inputs"]["xid_syslog"]["quarantined"] == 1
    assert metrics["inputs"]["sacct_psv"]["records"] == rows_before - 1
    landed = tmp_path / "data" / "landed" / "q" / str(MONTH)
    quarantined = [json.loads(line) for line in (landed / "quarantine.jsonl").read_text().splitlines()]
    assert {(Path(q["file"]).name, q["line"], q["field"]) for q in quarantined} == {
        ("sacct.psv", 4, "Elapsed"),
        ("xid.log", len((sim / "xid.log").read_text().splitlines()), "timestamp"),
    }
    html = Path(summary.report).read_text()
    assert "quarantined" in html and "field Elapsed=&#39;12:xx:00&#39;" in html


def test_failed_expectation_is_named(month_run, tmp_path):
    config = load_config(month_run["config"])
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "strict.json").write_text(
        json.dumps(
            {
                "name": "strict",
                "meta": {"table": "fct_attempts", "filter_by_month": True},
                "expectations": [
                    {
                        "type": "expect_column_values_to_be_between",
                        "kwargs": {"column": "gpus", "min_value": 0, "max_value": 4},
                    }
                ],
            }
        )
    )
    with pytest.raises(DataQualityError, match="strict: expect_column_values_to_be_between on gpus"):
        validate_month(config.warehouse_path, MONTH, suites)


def test_a_warning_expectation_is_reported_without_failing_the_run(month_run, tmp_path):
    config = load_config(month_run["config"])
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "soft.json").write_text(
        json.dumps(
            {
                "name": "soft",
                "meta": {"table": "fct_attempts", "filter_by_month": True},
                "expectations": [
                    {
                        "type": "expect_column_values_to_be_between",
                        "kwargs": {"column": "gpus", "min_value": 0, "max_value": 4},
                        "meta": {"severity": "warning"},
                    }
                ],
            }
        )
    )
    (result,) = validate_month(config.warehouse_path, MONTH, suites, results_dir=tmp_path / "runs")
    assert result.success and [w["column"] for w in result.warnings] == ["gpus"]
    assert result.warnings[0]["unexpected_count"] > 0
    (stored,) = (tmp_path / "runs").glob("*.json")
    assert json.loads(stored.read_text())[0]["warnings"][0]["expectation"] == "expect_column_values_to_be_between"


@pytest.mark.parametrize(
    ("corruption", "named"),
    [
        (
            "update fct_attempts set runtime_hours = -1 where attempt_id = (select min(attempt_id) from fct_attempts)",
            "fct_attempts: expect_column_values_to_be_between on runtime_hours",
        ),
        # a repeated key is dbt's test when the month is built (fct_attempts.yml); a row repeated
        # after the build no longer matches the layers' row counts
        (
            "insert into fct_attempts select * from fct_attempts where attempt_id = (select min(attempt_id) from fct_attempts)",
            "layer_row_counts: expect_column_pair_values_to_be_equal",
        ),
        (
            "delete from fct_attempts where attempt_id in (select attempt_id from fct_attempts order by attempt_id limit 5)",
            "layer_row_counts: expect_column_pair_values_to_be_equal",
        ),
    ],
    ids=["negative-runtime", "duplicate-key", "lost-rows"],
)
def test_a_corrupted_mart_fails_naming_the_expectation(month_run, tmp_path, corruption, named):
    import duckdb

    config = load_config(month_run["config"])
    warehouse = tmp_path / "corrupt.duckdb"
    shutil.copy(config.warehouse_path, warehouse)
    with duckdb.connect(str(warehouse)) as con:
        con.execute(corruption)
    landed = month_run["workdir"] / "data" / "landed" / CLUSTER / str(MONTH)
    with pytest.raises(DataQualityError, match=re.escape(named)):
        validate_month(warehouse, MONTH, landed_dir=landed)


@pytest.mark.parametrize(
    ("landed_as", "named"),
    [
        (
            "select * replace (cast(gpus as double) as gpus)",
            "landed_schema: expect_column_values_to_be_in_set on field",
        ),
        ("select * exclude (sluid)", "landed_schema: expect_column_distinct_values_to_contain_set on field"),
        (
            "select * replace (if(source_line = (select min(source_line) from a), null, submit_at) as submit_at)",
            "landed_attempts: expect_column_values_to_not_be_null on submit_at",
        ),
    ],
    ids=["wrong-type", "missing-column", "null-required-field"],
)
def test_landed_attempts_off_the_registry_schema_fail_naming_it(month_run, tmp_path, landed_as, named):
    """The landed tables' columns, types and required fields are checked from the registry."""
    import duckdb

    config = load_config(month_run["config"])
    landed = tmp_path / "landed"
    shutil.copytree(month_run["workdir"] / "data" / "landed" / CLUSTER / str(MONTH), landed)
    attempts = landed / "attempts.parquet"
    with duckdb.connect() as con:
        con.execute(f"create table a as select * from read_parquet('{attempts}')")
        con.execute(f"copy ({landed_as} from a) to '{attempts}' (format parquet)")
    with pytest.raises(DataQualityError, match=re.escape(named)):
        validate_month(config.warehouse_path, MONTH, landed_dir=landed)


def test_unknown_expectation_type_is_not_silently_dropped(month_run, tmp_path):
    config = load_config(month_run["config"])
    suites = tmp_path / "suites"
    suites.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "expectations" / "fct_attempts.json", suites / "a.json")
    spec = json.loads((suites / "a.json").read_text())
    spec["expectations"].append({"type": "expect_column_values_to_be_nul", "kwargs": {"column": "month"}})
    (suites / "a.json").write_text(json.dumps(spec))
    with pytest.raises(DataQualityError, match="could not be loaded"):
        validate_month(config.warehouse_path, MONTH, suites)


def test_attributed_attempts_are_exactly_the_predicted_ones(month_run):
    import duckdb

    config = load_config(month_run["config"])
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        rows = con.execute(
            "select job_id_raw, strftime(submit_at, '%Y-%m-%dT%H:%M:%S'), cause_category from fct_attempts "
            "where month = ? and is_infra_failure",
            [str(MONTH)],
        ).fetchall()
    expected = {(f["job_id_raw"], f["submit"], f["expected_cause"]) for f in attributed_by_rule(month_run["truth"])}
    assert set(rows) == expected


def test_a_marked_user_or_admin_requeue_next_to_a_drain_is_not_an_infra_failure(month_run):
    """The month's user and admin requeues with a critical event in their window: those AdminComment
    marks stay `requeued`, the unmarked ones are infra failures with the rule's cause."""
    import duckdb

    near = month_run["truth"]["manual_requeues_near_critical"]
    assert any(r["marked"] for r in near) and any(not r["marked"] for r in near)
    config = load_config(month_run["config"])
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        found = {
            (job, submit): (outcome, cause)
            for job, submit, outcome, cause in con.execute(
                "select job_id_raw, strftime(submit_at, '%Y-%m-%dT%H:%M:%S'), outcome, cause_category "
                "from fct_attempts where month = ? and slurm_state = 'REQUEUED'",
                [str(MONTH)],
            ).fetchall()
        }
    for r in near:
        expected = ("infra_failed", r["cause"]) if r["expected_attributed"] else ("requeued", None)
        assert found[(r["job_id_raw"], r["submit"])] == expected, r


def test_every_health_source_reaches_the_classified_events(month_run):
    import duckdb

    config = load_config(month_run["config"])
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        by_source = dict(
            con.execute(
                "select source, count(*) from fct_health_events where severity = 'critical' group by source"
            ).fetchall()
        )
    assert set(by_source) == {"xid", "slurm_event", "nhc", "dcgm"}
    sources = month_run["metrics"]["inputs"]
    assert {"nhc_syslog", "dcgm_health_dir"} <= set(sources)


MARTS = (
    "fct_attempts",
    "fct_job_runs",
    "fct_failures",
    "fct_months_built",
    "fct_node_faults",
    "fct_node_days",
)


def mart_rows(warehouse: Path, month: Month) -> dict[str, list]:
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as con:
        return {
            mart: sorted(map(repr, con.execute(f"select * from {mart} where month = ?", [str(month)]).fetchall()))
            for mart in MARTS
        }


@pytest.fixture(scope="module")
def two_months(tmp_path_factory, fresh_warehouse) -> dict:
    """September and October of one cluster built October first, then September twice, then
    October again (now after September): each month's mart rows after its first build, after
    September's rebuild, and the metrics of the last builds. The first two builds are the dbt
    stage alone (landed, then built as the pipeline builds them: their reports would be replaced
    unread); the last two are whole runs. Kept in memory: the warehouse is the worker's scratch
    one (conftest.fresh_warehouse)."""
    september, october = Month.parse("2026-09"), Month.parse("2026-10")
    work = tmp_path_factory.mktemp("two-months")
    config = write_demo_config(work, "hist", work / "reports")
    warehouse = fresh_warehouse(config)
    built: dict = {"config": config, "truth": {}, "params": {}}
    for month, seed in ((september, 3), (october, 4)):
        params = SimParams("hist", month, nodes=16, seed=seed, r_f=30.0)
        built["truth"][str(month)] = simulate(params, work / "sim" / "hist" / str(month))
        built["params"][str(month)] = params
    loaded = load_config(config)
    build_months(loaded, {october: land_month(loaded, october)})
    built["october_first"] = mart_rows(warehouse, october)
    build_months(loaded, {september: land_month(loaded, september)})
    built["september_first"] = mart_rows(warehouse, september)
    monthly_report(cluster="hist", config=str(config), month=str(september))
    built["september_rebuilt"], built["october_after"] = mart_rows(warehouse, september), mart_rows(warehouse, october)
    summary = monthly_report(cluster="hist", config=str(config), month=str(october))
    built["october_metrics"] = json.loads(Path(summary.metrics).read_text())
    built["september_metrics"] = json.loads((work / "reports" / "hist" / "2026-09" / "metrics.json").read_text())
    # the explanation tests read the warehouse after later tests empty the scratch one: a copy
    kept = work / "kept.toml"
    shutil.copy(warehouse, work / "kept.duckdb")
    kept.write_text(config.read_text().replace(str(warehouse), str(work / "kept.duckdb")))
    built["config"] = kept
    return built


def test_months_build_in_any_order_and_a_rebuild_replaces_exactly_its_month(two_months):
    """September, then October, then September again: each month's mart rows are the same as when
    it was first built, and rebuilding September leaves October alone."""
    assert all(two_months["october_first"][m] for m in ("fct_attempts", "fct_job_runs", "fct_node_days"))
    assert two_months["september_rebuilt"] == two_months["september_first"]
    assert two_months["october_after"] == two_months["october_first"]


def test_job_run_ettr_recovers_the_simulated_runs(month_run):
    """ETTR of each long job run (R / W with the configured u0 and checkpoint interval) is within
    0.02 of the simulator's realised ETTR, for every run whose whole history is in the month."""
    import duckdb

    from flows.figures.month_metrics import job_runs

    config = load_config(month_run["config"])
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        ours = {r["first_job_id_raw"]: r for r in job_runs(con, MONTH)}
    compared = []
    for run in month_run["truth"]["training_runs"]:
        mine = ours.get(run["job_ids"][0]) if run["job_ids"] else None
        if mine is None or abs(mine["runtime_seconds"] - run["runtime_seconds"]) > 120:
            continue  # part of the run lies outside the month
        truth = run["productive_seconds"] / (run["runtime_seconds"] + run["queue_seconds"])
        compared.append((mine["ettr"], truth, mine["interruptions"]))
    assert len(compared) >= 10 and any(interruptions for *_, interruptions in compared)
    assert all(abs(mine - truth) <= 0.02 for mine, truth, _ in compared)


def test_month_over_month_change_is_a_poisson_test():
    from flows.figures.rates import rate_change

    same = rate_change(10, 1000.0, 12, 1000.0)
    assert not same["significant"] and same["p_value"] > 0.5
    worse = rate_change(40, 1000.0, 10, 1000.0)
    assert worse["significant"] and worse["change"] == pytest.approx(3.0)
    assert rate_change(5, 1000.0, 0, 0.0)["p_value"] is None  # no previous month: nothing to test


def test_trailing_windows_sum_the_months_built(two_months):
    """Two months built: the trailing windows add both months' failures and node-days, and the
    monthly series has both; a window longer than the history says how many months it had."""
    metrics = two_months["october_metrics"]
    series = {row["month"]: row for row in metrics["history"]["monthly"]}
    assert set(series) == {"2026-09", "2026-10"}
    assert series["2026-10"]["all"]["failures"] == metrics["node_failure_rate"]["all"]["failures"]
    three = next(w for w in metrics["history"]["trailing"] if w["months"] == 3)
    assert three["months_available"] == 2
    assert three["all"]["failures"] == sum(row["all"]["failures"] for row in series.values())
    assert three["all"]["node_days"] == pytest.approx(sum(row["all"]["node_days"] for row in series.values()))
    assert three["this_month_vs_window"]["previous"] == series["2026-09"]["all"]["value"]
    # every failure has one cause and one size bucket (`all` leaves out CPU-only attempts)
    by_cause = sum(c["failures"] for c in three["by_cause"])
    assert by_cause >= three["all"]["failures"] and by_cause == sum(b["infra_failures"] for b in three["mttf_by_size"])
    # each cause's rate this month is tested against September's and against the window's earlier months
    september_metrics = two_months["september_metrics"]
    september_causes = {c["category"]: c["failures"] for c in september_metrics["failures_by_cause"]}
    september_node_days = september_metrics["node_failure_rate"]["all"]["node_days"]
    window_causes = {c["category"]: c for c in three["by_cause"]}
    assert metrics["failures_by_cause"]
    for cause in metrics["failures_by_cause"]:
        change = metrics["month_over_month_by_cause"][cause["category"]]
        assert change["value"] == pytest.approx(cause["per_1000_node_days"])
        assert change["previous"] == pytest.approx(
            september_causes.get(cause["category"], 0) * 1000 / september_node_days
        )
        assert window_causes[cause["category"]]["this_month_vs_window"]["value"] == pytest.approx(change["value"])
        assert isinstance(change["significant"], bool)


def explained_months(month_run, two_months) -> list[tuple[Path, str, dict, SimParams]]:
    """Three seeds' simulated months, built: (config, month, truth, params)."""
    built = [(month_run["config"], str(MONTH), month_run["truth"], month_run["params"])]
    return built + [
        (two_months["config"], m, two_months["truth"][m], two_months["params"][m]) for m in two_months["truth"]
    ]


def test_explain_loses_the_gpu_hours_the_month_counts(month_run):
    """The GPU-hours `explain` says each infrastructure failure lost (first order) and each restart's
    preemptions cost (second order) add up to the month's lost goodput, over every failed job."""
    import duckdb

    from flows.explain.job import explain_jobs
    from flows.explain.job_ids import JobQuery
    from flows.explain.warehouse import opened

    config = load_config(month_run["config"])
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        failed = [
            j for (j,) in con.execute("select distinct job_id from fct_attempts where is_infra_failure").fetchall()
        ]
        restarts = con.execute(
            "select distinct restarts.job_id from fct_second_order_preemptions as p inner join fct_attempts as restarts"
            " on restarts.month = p.month and restarts.attempt_id = p.restart_attempt_id"
        ).fetchall()
    with opened(config) as wh:
        answers = explain_jobs(
            wh, [JobQuery(j, whole_job=False) for j in {*failed, *(j for (j,) in restarts)}], (str(MONTH),)
        )
    attempts = {a.attempt_id: a for answer in answers.values() for a in answer.attempts}.values()
    lost = month_run["metrics"]["lost_goodput"]
    infra = [a for a in attempts if a.outcome == "infra_failed"]
    assert len(infra) == lost["infra_failures"] > 0
    assert sum(a.lost_gpu_hours for a in infra) == pytest.approx(lost["first_order_gpu_hours"])
    preempted = [p for a in attempts for p in a.restart_preempted]
    assert len(preempted) == lost["second_order_preemptions"]
    assert sum(p.lost_gpu_hours for p in preempted) == pytest.approx(lost["second_order_gpu_hours"])


def test_explain_names_the_true_cause_and_its_evidence_on_three_seeds(month_run, two_months):
    """For every infrastructure failure the attribution names (the simulator predicts which, and
    the cause the rule gives), `explain` gives it that cause and shows the chosen event: on the
    failure's own node, of its true cause, wherever the rule's cause is the true one."""
    from flows.explain.job import explain_jobs
    from flows.explain.job_ids import job_query
    from flows.explain.warehouse import opened

    checked = true_node = 0
    for config, month, truth, _ in explained_months(month_run, two_months):
        failures = [f for f in truth["infra_failures"] if f["expected_attributed"]]
        with opened(load_config(config)) as wh:
            answers = explain_jobs(wh, [job_query(f["job_id_raw"]) for f in failures], (month,))
        for f in failures:
            (attempt,) = [a for a in answers[f["job_id_raw"]].attempts if str(a.end_at) == f["end"].replace("T", " ")]
            assert (attempt.outcome, attempt.cause_category) == ("infra_failed", f["expected_cause"]), (month, f)
            chosen = [e for e in attempt.evidence.events if e.chosen]
            assert attempt.evidence.not_measured is None and chosen, (month, f)
            assert (
                chosen[0].category == f["expected_cause"] and chosen[0].in_window and chosen[0].severity == "critical"
            )
            if f["expected_cause"] == f["cause"]:
                assert chosen[0].node == f["node"], (month, f)
                true_node += 1
            checked += 1
    assert checked >= 20 and true_node >= 15


def injected_incidents(critical: list[tuple[int, str]], start: int, end: int) -> list[int]:
    """The starts of the node's incidents beginning in [start, end): its injected critical signals
    (its faults' and the drains injected next to manual requeues), an hour apart at most within one
    (the macro starts_incident), from the hour before the month that its logs hold."""
    starts, previous = [], None
    for t, _ in sorted(critical):
        if t >= start - 3600 and (previous is None or t > previous + 3600):
            starts.append(t)
        previous = t if t >= start - 3600 else None
    return [t for t in starts if start <= t < end]


def test_node_lists_exactly_the_injected_faults_and_repairs(month_run, two_months):
    """`node` lists, month by month, exactly the faults the simulator injected on each node (at
    their first critical signal) and the outages its node events hold."""
    from flows.explain.node import node_history
    from flows.explain.warehouse import opened
    from simulator.history import run_history
    from simulator.repairs import outages

    compared = 0
    for config, month, _, params in explained_months(month_run, two_months):
        history = run_history(params)
        (window,) = [w for w in history.windows if str(w.month) == month]
        repairs = outages(history.ctx.signals.events, params.nodes, window)

        def seconds(ts: datetime, clock=history.clock) -> int:
            return clock.seconds(ts.replace(tzinfo=clock.t0.tzinfo))

        with opened(load_config(config)) as wh:
            for n, name in enumerate(history.node_names[: params.nodes]):
                faults = injected_incidents(history.ctx.signals.critical.get(n, []), window.start, window.end)
                began = [o[0] for o in repairs.get(n, []) if window.start <= o[0] < min(window.end, window.as_of)]
                if not (faults or began):
                    continue
                (shown,) = node_history(wh, name, (month,)).months
                assert [seconds(f.at) for f in shown.faults] == faults, (month, name)
                assert [seconds(o.out_at) for o in shown.outages] == began, (month, name)
                compared += len(faults)
    assert compared >= 20


def test_explain_and_node_refuse_in_one_line(month_run, tmp_path, capsys):
    """A job id that is not there, a malformed one, a month not built, a node not seen, and a
    warehouse another version built: each one `error:` line and exit 2; a found one prints text
    and its --json document."""
    import duckdb

    from flows.cli import main

    config = str(month_run["config"])
    failed = month_run["truth"]["infra_failures"][0]["job_id_raw"]
    assert main(["explain", "--job", failed, "--config", config]) == 0
    assert f"Job {failed} on {CLUSTER}" in capsys.readouterr().out
    assert main(["explain", "--job", failed, "--config", config, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["attempts"] and answer["explanation_version"] == 1
    cases = {
        ("explain", "--job", "987654321"): "job 987654321 is not in the job records of 2026-10",
        ("explain", "--job", "12;rm -rf /"): "not a Slurm job id",
        ("explain", "--job", failed, "--month", "2026-04"): "2026-04 is not built",
        ("node", "nosuchnode"): "node nosuchnode is not in",
        ("node", "gpu[1-2]"): "not a node's name",
    }
    for args, said in cases.items():
        assert main([*args, "--config", config]) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("error: ") and said in err and err.count("\n") == 1, (args, err)
    older = tmp_path / "older.duckdb"
    shutil.copy(load_config(config).warehouse_path, older)
    with duckdb.connect(str(older)) as con:
        con.execute("update meta.built_by set schema_version = '000000000000'")
    other = tmp_path / "older.toml"
    other.write_text(
        re.sub(r'^warehouse = ".*"$', f'warehouse = "{older}"', month_run["config"].read_text(), flags=re.M)
    )
    assert main(["node", "gpu0001", "--config", str(other)]) == 2
    err = capsys.readouterr().err
    assert "built by another version" in err and "reliability-report backfill --from 2026-10 --to 2026-10" in err
    assert err.count("\n") == 1
