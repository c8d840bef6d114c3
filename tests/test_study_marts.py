"""A study's period (dim_periods, kind `study`) in the figures' marts (dbt_project/models/marts/periods)
over a continuous three-month history of a 72-node cluster: over the whole range and over two of its
months (one without the first month, so that job runs bring history from before the range), the
failures by cause, the MTTF by size and the ETTR of the runs that ended equal the simulator's truth;
the job mix counts each attempt once, with its final outcome in the range (an attempt across a month
end is open in the earlier month's period only); the lost goodput by size equals the months'
periods summed over the range; a month's own build has its own periods, not an earlier study's."""

from __future__ import annotations

import csv
import statistics
from collections import Counter, defaultdict

import duckdb
import pytest

from flows import DBT_PROJECT_DIR
from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.warehouse.build import build_months, build_study, landed_months
from simulator import SimParams, simulate
from simulator.records import HIGH_QOS_MIN_GPUS
from simulator.truth import BUCKET_OF
from simulator.workload import TRAINING_MIN_GPUS

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

FIRST, LAST = Month.parse("2026-05"), Month.parse("2026-07")
MONTHS = [FIRST, FIRST.next(), LAST]
CLUSTER = "study"
# (first, last) of each study: the first two months (built before the third), the last two, all three
RANGES = [(MONTHS[0], MONTHS[1]), (MONTHS[1], MONTHS[2]), (MONTHS[0], MONTHS[2])]
# the figures' marts a study's period is read from
STUDY_TABLES = [
    "fct_period_job_mix",
    "fct_period_failures_by_cause",
    "fct_period_mttf_by_size",
    "fct_period_ettr_by_size",
    "fct_period_lost_goodput_by_size",
]
with open(DBT_PROJECT_DIR / "seeds" / "job_size_buckets.csv") as seed:
    # the GPU buckets (macro gpu_size_buckets): bucket 0 holds the CPU-only attempts, in no GPU figure
    BUCKETS = [row["size_bucket"] for row in csv.DictReader(seed) if int(row["max_gpus"]) > 0]
with open(DBT_PROJECT_DIR / "seeds" / "failure_categories.csv") as seed:
    DOMAIN = {row["category"]: row["failure_domain"] for row in csv.DictReader(seed)}


def rows(config: ClusterConfig, sql: str, parameters: list | None = None) -> list[dict]:
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        cursor = con.execute(sql, parameters or [])
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def study_tables(config: ClusterConfig, first: Month, last: Month) -> dict[str, list[dict]]:
    """The study period's rows of every figure's mart, in a fixed order, and its totals (`totals`:
    fct_period_totals, fct_period_node_failure_rate and fct_period_lost_goodput in one row)."""
    period = [f"study:{first}:{last}"]
    tables = {
        table: sorted(rows(config, f"select * from {table} where period_id = ?", period), key=repr)
        for table in STUDY_TABLES
    }
    [totals] = rows(
        config,
        """select t.first_month as from_month, t.last_month as to_month, t.*, r.*, l.*
        from fct_period_totals as t
        inner join fct_period_node_failure_rate as r using (period_id)
        inner join fct_period_lost_goodput as l using (period_id)
        where t.period_id = ?""",
        period,
    )
    return {**tables, "totals": [totals]}


def monthly_rows(config: ClusterConfig, table: str, first: Month, last: Month) -> list[dict]:
    """The rows of `table` of each month's period (kind `month`) from `first` to `last`, with its `month`."""
    return rows(
        config,
        f"""select p.last_month as month, t.* from {table} as t inner join dim_periods as p using (period_id)
        where p.kind = 'month' and p.last_month between ? and ?""",
        [str(first), str(last)],
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory, fresh_warehouse) -> dict:
    """The first two months built in one build (a backfill's land and dbt stages: the study reads
    nothing else), the study of them, the third month's own build (and the periods it has), then
    the studies of the last two months and of all three."""
    work = tmp_path_factory.mktemp("study")
    truth = simulate(SimParams(CLUSTER, FIRST, last_month=LAST, nodes=72, seed=5, r_f=40.0), work / "sim" / CLUSTER)
    config_path = write_demo_config(work, CLUSTER, work / "reports")
    fresh_warehouse(config_path, "module")
    config = load_config(config_path)
    build_months(config, {month: land_month(config, month) for month in MONTHS[:2]})
    studies = {}

    def study(first: Month, last: Month) -> None:
        build_study(config, first, last, landed_months(config)[last])
        studies[first, last] = study_tables(config, first, last)

    study(*RANGES[0])
    build_months(config, {LAST: land_month(config, LAST)})  # the third month's own build, after a study
    month_build = {"periods": {r["period_id"] for r in rows(config, "select period_id from dim_periods")}}
    study(*RANGES[1])
    study(*RANGES[2])
    return {"truth": truth, "config": config, "studies": studies, "month_build": month_build}


def in_range(first: Month, last: Month) -> list[str]:
    return [str(m) for m in MONTHS if first <= m <= last]


def months_sql(first: Month, last: Month) -> str:
    """The rows of a row-level mart (keyed by month) of the months first..last."""
    return f"month between '{first}' and '{last}'"


def attempts_once(config: ClusterConfig, first: Month, last: Month) -> dict[tuple[str, str], list]:
    """(outcome, size bucket) -> [attempts, GPU-hours] of the range's GPU attempts, each once: its
    last row in the range (fct_attempts, one per month it touches) decides its outcome and bucket,
    its rows' GPU-hours all count."""
    final: dict[str, dict] = {}
    gpu_hours: dict[str, float] = defaultdict(float)
    for r in rows(
        config,
        f"select * from fct_attempts where is_gpu_attempt and {months_sql(first, last)} order by month",
    ):
        final[r["attempt_id"]] = r
        gpu_hours[r["attempt_id"]] += r["gpu_seconds"] / 3600
    counted: dict[tuple[str, str], list] = defaultdict(lambda: [0, 0.0])
    for attempt, r in final.items():
        counted[r["outcome"], r["size_bucket"]][0] += 1
        counted[r["outcome"], r["size_bucket"]][1] += gpu_hours[attempt]
    return counted


def truth_failures(truth: dict, months: list[str]) -> list[dict]:
    """The infrastructure failures the rules find in the months, with their cause and GPUs: the
    attributable ones, and the attempts that failed for their own reasons with a critical signal
    in the attribution window (the rule attributes them too)."""
    found = []
    for m in months:
        month = truth["months"][m]
        found += [
            {"cause": f["expected_cause"], "gpus": f["gpus"]}
            for f in month["infra_failures"]
            if f["expected_attributed"]
        ]
        found += [{"cause": f["cause"], "gpus": f["gpus"]} for f in month["window_false_positives"]]
    return found


@pytest.mark.parametrize("first,last", RANGES, ids=lambda m: str(m))
def test_failures_by_cause_and_the_rates_equal_the_truth(history, first: Month, last: Month) -> None:
    truth, config, months = history["truth"], history["config"], in_range(first, last)
    tables = history["studies"][first, last]
    [totals] = tables["totals"]
    assert (totals["from_month"], totals["to_month"], totals["months_built"]) == (str(first), str(last), len(months))
    rates = [truth["months"][m]["r_f_per_1000_node_days"] for m in months]
    for definition in ("paper", "all"):
        assert totals[f"{definition}_failures"] == sum(r[definition]["rule_failures"] for r in rates), definition
        node_days = sum(r[definition]["node_days"] for r in rates)
        assert totals[f"{definition}_node_days"] == pytest.approx(node_days, rel=1e-12), definition
    assert totals["paper_failures"] > 0

    node_days = sum(r["all"]["node_days"] for r in rates)
    gpu_hours = sum(r["gpu_hours"] for r in monthly_rows(config, "fct_period_totals", first, last))
    expected = Counter(f["cause"] for f in truth_failures(truth, months))
    by_cause = {r["cause_category"]: r for r in tables["fct_period_failures_by_cause"]}
    assert {cause: r["failures"] for cause, r in by_cause.items()} == expected
    assert len(expected) >= 5
    for cause, r in by_cause.items():
        assert r["failure_domain"] == DOMAIN[cause]
        assert r["node_days"] == pytest.approx(node_days, rel=1e-12)
        assert r["per_1000_node_days"] == pytest.approx(expected[cause] * 1000 / node_days, rel=1e-12)
        assert r["per_million_gpu_hours"] == pytest.approx(expected[cause] * 1e6 / gpu_hours, rel=1e-12)


@pytest.mark.parametrize("first,last", RANGES, ids=lambda m: str(m))
def test_the_fleet_fault_rate_sums_the_months_and_equals_the_injected_faults(
    history, first: Month, last: Month
) -> None:
    """The study's fleet fault rate (docs/methodology.md "The fleet's node fault rate"): the months'
    node faults and fleet node-days summed; every fault the simulator injected, idle nodes' included,
    but two of a node within an hour (one fault to the logs)."""
    config, months = history["config"], in_range(first, last)
    [totals] = history["studies"][first, last]["totals"]
    fleets = [history["truth"]["months"][m]["fleet"] for m in months]
    months_rates = monthly_rows(config, "fct_period_node_failure_rate", first, last)
    monthly = {
        "faults": sum(r["fleet_faults"] for r in months_rates),
        "nodes": max(r["fleet_nodes"] for r in months_rates),
    }
    assert (
        (totals["fleet_faults"], totals["fleet_nodes"])
        == (monthly["faults"], monthly["nodes"])
        == (
            totals["fleet_faults"],
            72,
        )
    )
    assert totals["fleet_node_days"] == pytest.approx(sum(f["node_days"] for f in fleets), rel=1e-12)
    injected = sum(f["node_failures"] for f in fleets)
    assert 0 <= injected - totals["fleet_faults"] <= max(1, injected // 50), (injected, totals["fleet_faults"])


@pytest.mark.parametrize("first,last", RANGES, ids=lambda m: str(m))
def test_mttf_by_size_equals_the_truth(history, first: Month, last: Month) -> None:
    truth, config, months = history["truth"], history["config"], in_range(first, last)
    runtime_hours: dict[str, float] = defaultdict(float)
    node_days: dict[str, float] = defaultdict(float)
    for m in months:
        for bucket, figures in truth["months"][m]["size_buckets"].items():
            runtime_hours[bucket] += figures["runtime_hours"]
            node_days[bucket] += figures["node_days"]
    failures = Counter(BUCKET_OF[f["gpus"]] for f in truth_failures(truth, months))
    monthly: dict[str, list[int | float]] = defaultdict(lambda: [0, 0.0])
    for (_, bucket), (attempts, gpu_hours) in attempts_once(config, first, last).items():
        monthly[bucket][0] += attempts
        monthly[bucket][1] += gpu_hours

    study = history["studies"][first, last]["fct_period_mttf_by_size"]
    assert sorted(r["size_bucket"] for r in study) == sorted(monthly)  # the buckets with attempts
    for r in study:
        bucket = r["size_bucket"]
        assert r["infra_failures"] == failures[bucket], bucket
        assert r["runtime_hours"] == pytest.approx(runtime_hours[bucket], rel=1e-12, abs=1e-9), bucket
        assert r["gpu_node_days"] == pytest.approx(node_days[bucket], rel=1e-12, abs=1e-9), bucket
        assert (r["attempts"], r["gpu_hours"]) == (monthly[bucket][0], pytest.approx(monthly[bucket][1], rel=1e-12))
        mttf = runtime_hours[bucket] / failures[bucket] if failures[bucket] else None
        assert r["mttf_hours"] == (pytest.approx(mttf, rel=1e-12) if mttf else None), bucket
    assert sum(1 for r in study if r["infra_failures"] > 0) >= 4


def bucket_figures(runs: list[tuple[int, float]]) -> dict:
    """What fct_period_ettr_by_size holds for a bucket's runs, each (gpus, ettr)."""
    ettr = [e for _, e in runs]
    return {
        "runs": len(runs),
        "mean_gpus": pytest.approx(statistics.fmean(g for g, _ in runs), rel=1e-12),
        "mean_ettr": pytest.approx(statistics.fmean(ettr), abs=1e-12),
        "stddev_ettr": pytest.approx(statistics.stdev(ettr), abs=1e-9) if len(ettr) > 1 else None,
        "median_ettr": pytest.approx(statistics.median(ettr), abs=1e-12),
        "min_ettr": pytest.approx(min(ettr), abs=1e-12),
    }


@pytest.mark.parametrize("first,last", RANGES, ids=lambda m: str(m))
def test_ettr_of_runs_that_ended_in_the_range_equals_the_truth(history, first: Month, last: Month) -> None:
    """Each training run (the simulator's, 64 GPUs or more) that ended in the range counts with its
    whole history, its months before the range included; the highest-priority runs are the
    largest jobs' QOS `high` ones. The smaller buckets also hold other long jobs: they equal the
    runs of fct_job_run_histories that ended in the range."""
    truth, config, months = history["truth"], history["config"], in_range(first, last)
    min_runtime = config.analysis.ettr_min_run_hours * 3600
    whole: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    ended: list[tuple[int, float]] = []  # (gpus, ettr) of the long training runs that ended in the range
    before_range = {run["run_id"] for m in MONTHS if m < first for run in truth["months"][str(m)]["training_runs"]}
    began_before = 0
    for m in MONTHS[: MONTHS.index(last) + 1]:
        for run in truth["months"][str(m)]["training_runs"]:
            totals = whole[run["run_id"]]
            for i, key in enumerate(("runtime_seconds", "queue_seconds", "lost_seconds")):
                totals[i] += run[key]
        for run in truth["months"][str(m)]["training_runs"]:
            runtime, queue, lost = whole[run["run_id"]]
            if str(m) in months and not run["crosses_month_end"] and runtime >= min_runtime and runtime + queue > 0:
                ended.append((run["gpus"], (runtime - lost) / (runtime + queue)))
                began_before += run["run_id"] in before_range
    study = {(r["run_set"], r["size_bucket"]): r for r in history["studies"][first, last]["fct_period_ettr_by_size"]}
    expected: dict[tuple[str, str], list] = defaultdict(list)
    for gpus, ettr in ended:
        expected["all", BUCKET_OF[gpus]].append((gpus, ettr))
        if gpus >= HIGH_QOS_MIN_GPUS:
            expected["priority", BUCKET_OF[gpus]].append((gpus, ettr))
    assert expected["priority", str(HIGH_QOS_MIN_GPUS)]
    if first != FIRST:
        assert began_before > 0  # runs that began before the range are there, with their earlier months
    # the smaller buckets' long runs, from the monthly mart's rows
    for r in rows(
        config,
        f"select gpus, size_bucket, ettr from fct_job_run_histories where {months_sql(first, last)} and is_ettr_run",
    ):
        if r["gpus"] < TRAINING_MIN_GPUS:
            expected["all", r["size_bucket"]].append((r["gpus"], r["ettr"]))
    assert set(study) == set(expected)
    for key, runs in expected.items():
        found = {k: study[key][k] for k in ("runs", "mean_gpus", "mean_ettr", "stddev_ettr", "median_ettr", "min_ettr")}
        assert found == bucket_figures(runs), key
    assert len(expected) >= 6


@pytest.mark.parametrize("first,last", RANGES, ids=lambda m: str(m))
def test_job_mix_counts_each_attempt_once(history, first: Month, last: Month) -> None:
    """Each attempt once, under its final outcome in the range with all its GPU-hours there: only
    those still running at the range's end are open (the months' periods summed would list an
    attempt across a month end open in the earlier month and again with its outcome)."""
    config, tables = history["config"], history["studies"][first, last]
    summed = attempts_once(config, first, last)
    monthly_open = sum(
        r["attempts"] for r in monthly_rows(config, "fct_period_job_mix", first, last) if r["outcome"] == "open"
    )
    [totals] = tables["totals"]
    study = {(r["outcome"], r["size_bucket"]): r for r in tables["fct_period_job_mix"]}
    assert set(study) == set(summed)
    for key, (attempts, gpu_hours) in summed.items():
        r = study[key]
        assert (r["attempts"], r["gpu_hours"]) == (attempts, pytest.approx(gpu_hours, rel=1e-12)), key
        assert r["attempt_share"] == pytest.approx(attempts / totals["gpu_attempts"], rel=1e-12)
        assert r["gpu_hours_share"] == pytest.approx(gpu_hours / totals["gpu_hours"], rel=1e-12, abs=1e-15)
    assert sum(r["attempts"] for r in study.values()) == totals["gpu_attempts"]
    last_open = [r for r in monthly_rows(config, "fct_period_job_mix", last, last) if r["outcome"] == "open"]
    assert sum(r["attempts"] for k, r in study.items() if k[0] == "open") == sum(r["attempts"] for r in last_open)
    assert monthly_open > sum(r["attempts"] for r in last_open)  # attempts across a month end in the range


@pytest.mark.parametrize("first,last", RANGES, ids=lambda m: str(m))
def test_lost_goodput_by_size(history, first: Month, last: Month) -> None:
    """First order: min(runtime, cap) x GPUs of each infrastructure failure in the range, in the
    failed attempt's bucket (the failures per bucket are the truth's); second order: of each
    preemption found for a restart, in the preempted attempt's bucket; beside the bucket's
    GPU-hours. The buckets add up to the months' lost goodput over the range."""
    truth, config, months = history["truth"], history["config"], in_range(first, last)
    cap = config.analysis.lost_work_cap_minutes * 60
    where = months_sql(first, last)
    first_order: dict[str, float] = defaultdict(float)
    for r in rows(
        config, f"select size_bucket, runtime_seconds, gpus from fct_attempts where {where} and is_infra_failure"
    ):
        first_order[r["size_bucket"]] += min(r["runtime_seconds"], cap) * r["gpus"] / 3600
    second_order: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for r in rows(
        config,
        f"""select a.size_bucket, p.runtime_seconds, p.gpus from fct_second_order_preemptions as p
            inner join fct_attempts as a on a.attempt_id = p.attempt_id and a.month = p.month where p.{where}""",
    ):
        second_order[r["size_bucket"]][0] += 1
        second_order[r["size_bucket"]][1] += min(r["runtime_seconds"], cap) * r["gpus"] / 3600
    gpu_hours: dict[str, float] = defaultdict(float)
    for r in monthly_rows(config, "fct_period_job_mix", first, last):
        gpu_hours[r["size_bucket"]] += r["gpu_hours"]
    failures = Counter(BUCKET_OF[f["gpus"]] for f in truth_failures(truth, months))

    study = history["studies"][first, last]["fct_period_lost_goodput_by_size"]
    assert sorted(r["size_bucket"] for r in study) == sorted(BUCKETS)
    for r in study:
        bucket = r["size_bucket"]
        assert r["infra_failures"] == failures[bucket], bucket
        assert r["first_order_gpu_hours"] == pytest.approx(first_order[bucket], rel=1e-12), bucket
        assert (r["second_order_preemptions"], r["second_order_gpu_hours"]) == (
            second_order[bucket][0],
            pytest.approx(second_order[bucket][1], rel=1e-12),
        ), bucket
        lost = first_order[bucket] + second_order[bucket][1]
        assert r["lost_gpu_hours"] == pytest.approx(lost, rel=1e-12)
        assert r["gpu_hours"] == pytest.approx(gpu_hours[bucket], rel=1e-12)
        assert r["share_of_gpu_hours"] == (
            pytest.approx(lost / gpu_hours[bucket], rel=1e-12) if gpu_hours[bucket] else None
        )
    monthly = monthly_rows(config, "fct_period_lost_goodput", first, last)
    [totals] = history["studies"][first, last]["totals"]
    for column in ("infra_failures", "second_order_preemptions", "first_order_gpu_hours", "second_order_gpu_hours"):
        summed = sum(r[column] for r in monthly)
        assert sum(r[column] for r in study) == pytest.approx(summed, rel=1e-12) == totals[column], column
    assert totals["second_order_preemptions"] > 0 and totals["infra_failures"] > 0


def test_a_months_build_has_its_own_periods(history) -> None:
    """The third month's own build rebuilds every period of the months built (each month, each
    trailing window ending at one) and no study's: a study builds its range's period when it reads
    it, and a build of months adds none (the periods never depend on how months were grouped)."""
    periods = history["month_build"]["periods"]
    assert {f"month:{m}" for m in MONTHS} | {f"trailing:3:{LAST}"} <= periods
    assert not [p for p in periods if p.startswith("study:")]
    assert history["studies"][RANGES[0]] != history["studies"][RANGES[1]]
