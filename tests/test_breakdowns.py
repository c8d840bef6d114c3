"""Infrastructure failures, lost GPU-hours and ETTR by account and by partition (fct_period_breakdowns,
metrics.json `breakdowns`, the report's table, a study's period) on two simulated months: each
key's figures equal the simulator's truth read through its job records, the report shows the top
`breakdown_top` of each and counts the rest, and a study of the two months sums them."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.figures.month_metrics import month_figures
from flows.ingest.land import land_month
from flows.ingest.manifest import read_manifest
from flows.pipeline import render
from flows.warehouse.build import build_months, build_study, landed_months
from flows.warehouse.engines import open_marts
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

CLUSTER = "brk"
FIRST, LAST = Month.parse("2026-03"), Month.parse("2026-04")
MONTHS = (FIRST, LAST)
TOP = 2  # of 5 accounts and 2 partitions: accounts are left out, partitions not
CAP_SECONDS = 30 * 60  # lost_work_cap_minutes' default


def record_key(job_id_raw: str, submit: str) -> tuple[str, str]:
    return job_id_raw, submit


def job_records(sacct: Path) -> dict[tuple[str, str], dict]:
    """The simulated month's sacct records by (JobIDRaw, Submit)."""
    header, *lines = sacct.read_text().splitlines()
    names = header.split("|")
    records = (dict(zip(names, line.split("|"), strict=True)) for line in lines)
    return {record_key(r["JobIDRaw"], r["Submit"]): r for r in records}


def blank_account(sacct: Path) -> tuple[str, str]:
    """Empty the Account of the first short COMPLETED job's record (as Slurm prints a job without
    one): it must count under '(none)'. Returns the record's key."""
    header, *lines = sacct.read_text().splitlines()
    for i, line in enumerate(lines):
        fields = line.split("|")
        if fields[7] == "COMPLETED" and "gres/gpu=8," in fields[16]:
            fields[4] = ""
            lines[i] = "|".join(fields)
            sacct.write_text("\n".join([header, *lines]) + "\n")
            return record_key(fields[1], fields[9])
    raise AssertionError("no short COMPLETED job to blank")


def seconds(text: str) -> int:
    """A record's time (UTC, the demo site's zone) in Unix seconds."""
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def gpus_of(record: dict) -> int:
    tres = dict(item.split("=", 1) for item in record["AllocTRES"].split(",") if "=" in item)
    return int(tres.get("gres/gpu", 0))


def keys_of(record: dict) -> dict[str, str]:
    return {"account": record["Account"] or "(none)", "partition": record["Partition"] or "(none)"}


def truth_breakdown(truth: dict, records: dict, month: Month, preempted: list[tuple]) -> dict:
    """{(dimension, key): [infra_failures, lost_gpu_hours, gpu_hours]} of the month from the truth:
    the failures the attribution rule finds (injected ones and the window's false positives), each
    in-month runtime capped x GPUs; the mart's second-order preemptions charged to their own
    records; GPU-hours of every record with time in the month (the dump is taken after its end)."""
    start, end = int(month.start.timestamp()), int(month.end.timestamp())
    result: dict = defaultdict(lambda: [0, 0.0, 0.0])

    def runtime_in_month(record: dict) -> int:
        if record["Start"] == "Unknown":
            return 0
        stop = end if record["End"] == "Unknown" else min(seconds(record["End"]), end)
        return max(stop - max(seconds(record["Start"]), start), 0)

    for record in records.values():
        if seconds(record["Submit"]) < end and (record["End"] == "Unknown" or seconds(record["End"]) >= start):
            for dimension, key in keys_of(record).items():
                result[dimension, key][2] += runtime_in_month(record) * gpus_of(record) / 3600
    month_truth = truth["months"][str(month)]
    failed = [f for f in month_truth["infra_failures"] if f["expected_attributed"]]
    failed += month_truth["window_false_positives"]
    assert failed
    for f in failed:
        record = records[record_key(f["job_id_raw"], f["submit"])]
        for dimension, key in keys_of(record).items():
            result[dimension, key][0] += 1
            result[dimension, key][1] += min(runtime_in_month(record), CAP_SECONDS) * f["gpus"] / 3600
    for job_id_raw, submit, gpus, runtime in preempted:
        for dimension, key in keys_of(records[record_key(job_id_raw, submit)]).items():
            result[dimension, key][1] += min(runtime, CAP_SECONDS) * gpus / 3600
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory, fresh_warehouse) -> dict:
    work = tmp_path_factory.mktemp("breakdowns")
    truth = simulate(SimParams(CLUSTER, FIRST, last_month=LAST, nodes=64, seed=23, r_f=25.0), work / "sim" / CLUSTER)
    blanked = blank_account(work / "sim" / CLUSTER / str(FIRST) / "sacct.psv")
    config = write_demo_config(work, CLUSTER, work / "reports")
    config.write_text(config.read_text() + f"\n[analysis]\nbreakdown_top = {TOP}\n")
    fresh_warehouse(config, "module")
    loaded = load_config(config)
    # the pipeline's stages without Prefect, the data-quality suites or the first month's report
    # (test_pipeline.py and test_history.py run them whole)
    build_months(loaded, {month: land_month(loaded, month) for month in MONTHS})
    landed = landed_months(loaded)[LAST]
    with open_marts(loaded) as marts:
        figures = month_figures(marts, LAST, loaded.analysis, read_manifest(landed).sources)
    report_dir = work / "report"
    render.fn(loaded, LAST, figures, [], read_manifest(landed), report_dir)
    build_study(loaded, FIRST, LAST, landed)
    with duckdb.connect(str(loaded.warehouse_path), read_only=True) as con:

        def query(sql: str, args: list | None = None) -> list[tuple]:
            return con.execute(sql, args or []).fetchall()

        columns = "dimension, key, rank, infra_failures, lost_gpu_hours, gpu_hours, ettr_runs, mean_ettr"
        marts = {
            str(m): query(
                f"select {columns} from fct_period_breakdowns where period_id = 'month:' || ? order by all", [str(m)]
            )
            for m in MONTHS
        }
        study = query(
            f"select {columns} from fct_period_breakdowns where period_id = ? order by all", [f"study:{FIRST}:{LAST}"]
        )
        preempted = {
            str(m): query(
                "select job_id_raw, strftime(submit_at, '%Y-%m-%dT%H:%M:%S'), gpus, runtime_seconds "
                "from fct_second_order_preemptions where month = ?",
                [str(m)],
            )
            for m in MONTHS
        }
        runs = {
            str(m): query(
                "select account, partition, job_run_id, ettr from fct_job_run_histories where month = ? and is_ettr_run",
                [str(m)],
            )
            for m in MONTHS
        }
        lost = dict(
            query(
                "select last_month, lost_gpu_hours from fct_period_lost_goodput inner join dim_periods using (period_id) "
                "where kind = 'month'"
            )
        )
    return {
        "work": work,
        "report_dir": report_dir,
        "truth": truth,
        "blanked": blanked,
        "config": loaded,
        "marts": marts,
        "study": study,
        "preempted": preempted,
        "runs": runs,
        "lost": lost,
    }


def by_key(rows: list[tuple]) -> dict[tuple[str, str], tuple]:
    return {(row[0], row[1]): row[2:] for row in rows}


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_each_account_and_partition_equals_the_truth(built, month: Month) -> None:
    records = job_records(built["work"] / "sim" / CLUSTER / str(month) / "sacct.psv")
    truth = truth_breakdown(built["truth"], records, month, built["preempted"][str(month)])
    ours = by_key(built["marts"][str(month)])
    assert set(ours) == set(truth)  # every account and partition with attempts, none more
    for key, (failures, lost, gpu_hours) in truth.items():
        _, our_failures, our_lost, our_gpu_hours, _, _ = ours[key]
        assert our_failures == failures, key
        assert our_lost == pytest.approx(lost, rel=1e-9, abs=1e-9), key
        assert our_gpu_hours == pytest.approx(gpu_hours, rel=1e-9), key
    # second-order preemptions charged to their own accounts: each dimension adds up to the month
    for dimension in ("account", "partition"):
        total = sum(row[4] for row in built["marts"][str(month)] if row[0] == dimension)
        assert total == pytest.approx(built["lost"][str(month)], rel=1e-9)
    assert built["preempted"][str(FIRST)] or built["preempted"][str(LAST)]
    assert ("account", "(none)") in ours if month == FIRST else ("account", "(none)") not in ours
    assert {key for dimension, key in ours if dimension == "partition"} == {"gpu", "shared"}


@pytest.mark.parametrize("month", MONTHS, ids=str)
def test_ranks_and_ettr(built, month: Month) -> None:
    """Rank 1 lost the most GPU-hours (ties by failures, then key); ETTR is the mean over the long
    job runs that ended in the month, under each run's account and partition."""
    rows = built["marts"][str(month)]
    for dimension in ("account", "partition"):
        ranked = sorted((row for row in rows if row[0] == dimension), key=lambda r: r[2])
        assert [r[2] for r in ranked] == list(range(1, len(ranked) + 1))
        assert [r[1] for r in ranked] == [r[1] for r in sorted(ranked, key=lambda r: (-r[4], -r[3], r[1]))]
        runs = defaultdict(list)
        for account, partition, _, ettr in built["runs"][str(month)]:
            runs[(account if dimension == "account" else partition) or "(none)"].append(ettr)
        for _, key, _, _, _, _, ettr_runs, mean_ettr in ranked:
            assert ettr_runs == len(runs.get(key, []))
            assert mean_ettr == (pytest.approx(sum(runs[key]) / len(runs[key]), abs=1e-12) if key in runs else None)
    assert any(row[6] for row in rows)  # long runs ended in each month


def test_the_report_shows_the_top_of_each_and_counts_the_rest(built) -> None:
    report_dir = built["report_dir"]
    metrics = json.loads((report_dir / "metrics.json").read_text())
    shown = metrics["breakdowns"]
    mart = built["marts"][str(LAST)]
    assert shown["top"] == TOP == metrics["parameters"]["breakdown_top"]
    for dimension in ("account", "partition"):
        keys = sorted((row for row in mart if row[0] == dimension), key=lambda r: r[2])
        assert [r["key"] for r in shown[dimension]["rows"]] == [r[1] for r in keys[:TOP]]
        assert shown[dimension]["not_shown"] == len(keys) - TOP
        assert shown[dimension]["rows"][0]["lost_gpu_hours"] == keys[0][4]
    assert shown["account"]["not_shown"] == 3 and shown["partition"]["not_shown"] == 0
    html, text = (
        (report_dir / "report.html").read_text().replace("&nbsp;", " "),
        (report_dir / "report.txt").read_text(),
    )
    assert "<h2>By account and partition</h2>" in html and "And 3 more accounts" in html
    top = shown["account"]["rows"][0]
    assert f'<td class="name">{top["key"]}</td>' in html
    assert (
        "BY ACCOUNT (most lost GPU-hours first)" in text
        and f"  {top['key']}: " in text
        and "and 3 more accounts" in text
    )


def test_the_study_sums_its_months(built) -> None:
    """A study's period over both months: each key's counts and GPU-hours the sum of its months',
    its ETTR the mean over both months' runs (not a mean of the months' means), ranked anew."""
    months = [by_key(built["marts"][str(m)]) for m in MONTHS]
    study = by_key(built["study"])
    assert set(study) == set(months[0]) | set(months[1])
    for key, (_, failures, lost, gpu_hours, ettr_runs, mean_ettr) in study.items():
        parts = [m[key] for m in months if key in m]
        assert failures == sum(p[1] for p in parts)
        assert lost == pytest.approx(sum(p[2] for p in parts), rel=1e-12)
        assert gpu_hours == pytest.approx(sum(p[3] for p in parts), rel=1e-12)
        assert ettr_runs == sum(p[4] for p in parts)
        if ettr_runs:
            weighted = sum(p[4] * p[5] for p in parts if p[4])
            assert mean_ettr == pytest.approx(weighted / ettr_runs, abs=1e-12)
    for dimension in ("account", "partition"):
        ranked = sorted(((k, v) for k, v in study.items() if k[0] == dimension), key=lambda kv: kv[1][0])
        assert [k[1] for k, _ in ranked] == [
            k[1] for k, _ in sorted(ranked, key=lambda kv: (-kv[1][2], -kv[1][1], kv[0][1]))
        ]
