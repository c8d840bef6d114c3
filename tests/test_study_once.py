"""A study counts every attempt once (issue 51 item 3): over two continuous simulated months of a
24-node cluster, with attempts running across the month end, the study's attempts (GPU and
CPU-only), open attempts, distinct GPU jobs, GPU node-days and GPU-hours equal a count over the
records the simulator dumped (each attempt once, its last record in the range deciding it), and its
job mix equals the months' attempts counted once each with their final outcome and all their
GPU-hours in the range; a trailing window over the same months counts the same. Over several
simulator seeds (one with CPU-only nodes); each month's own period is unchanged (an attempt open at
its end is open there)."""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from lemon_history import NO_TESTS

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.warehouse.build import dbt_command
from simulator import SimParams, simulate

pytestmark = pytest.mark.slow  # builds months: `make test`, not `make test-fast`

FIRST, LAST = Month.parse("2026-05"), Month.parse("2026-06")
START, END = datetime(2026, 5, 1), datetime(2026, 7, 1)  # the range (the demo config's zone is UTC)
SEEDS = [3, 17, 29]  # the last with CPU-only nodes beside the GPU nodes (a mixed site)
STUDY = f"study:{FIRST}:{LAST}"
GPUS = re.compile(r"gres/gpu=(\d+)")


def rows(config: ClusterConfig, sql: str, parameters: list | None = None) -> list[dict]:
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        cursor = con.execute(sql, parameters or [])
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@pytest.fixture(scope="module", params=SEEDS, ids=lambda s: f"seed{s}")
def built(request, tmp_path_factory, fresh_warehouse) -> dict:
    """Both months landed and built, with the study of both, in one build."""
    work = tmp_path_factory.mktemp(f"once{request.param}")
    cpu_nodes = 4 if request.param == SEEDS[-1] else 0
    params = SimParams("once", FIRST, last_month=LAST, nodes=24, seed=request.param, cpu_nodes=cpu_nodes)
    simulate(params, work / "sim" / "once")
    config_path = write_demo_config(work, "once", work / "reports")
    fresh_warehouse(config_path, "module")
    config = load_config(config_path)
    # the months and the study's period in one build, without the data tests (other builds run them)
    done = dbt_command(config, {m: land_month(config, m) for m in (FIRST, LAST)}, "build", *NO_TESTS, study_from=FIRST)
    assert done.success, [r.message for r in done.result.results if str(r.status) != "success"]
    return {"config": config, "sim": work / "sim" / "once", "cpu_nodes": cpu_nodes}


def when(text: str) -> datetime | None:
    return None if text in ("", "Unknown", "None") else datetime.fromisoformat(text)


def dumped_attempts(sim: Path) -> dict[tuple[str, str], dict]:
    """Each attempt (JobID with its array index, Submit: the landing's key) of the months' sacct
    dumps that touches the range, as its last dump has it (a later month's record supersedes)."""
    found: dict[tuple[str, str], dict] = {}
    for month in (FIRST, LAST):
        with open(sim / str(month) / "sacct.psv", newline="") as dump:
            for record in csv.DictReader(dump, delimiter="|"):
                end = when(record["End"])
                if when(record["Submit"]) < END and (end is None or end >= START):
                    found[record["JobID"], record["Submit"]] = record
    return found


def tres_gpus(record: dict, key: str) -> int:
    found = GPUS.search(record[key])
    return int(found.group(1)) if found else 0


def size(record: dict) -> int:
    """The attempt's size: its GPUs, or those it asked for when it got none (int_attempts_month_scoped)."""
    return tres_gpus(record, "AllocTRES") or tres_gpus(record, "ReqTRES")


def runtime(record: dict) -> float:
    """The attempt's seconds run inside the range (a running one's up to the range's end)."""
    start, end = when(record["Start"]), when(record["End"])
    if start is None:
        return 0.0
    return max((min(end or END, END) - max(start, START)).total_seconds(), 0.0)


def test_the_studys_counts_equal_a_count_over_the_records(built) -> None:
    dumped = dumped_attempts(built["sim"])
    gpu = [r for r in dumped.values() if size(r) > 0]
    [totals] = rows(built["config"], "select * from fct_period_totals where period_id = ?", [STUDY])
    assert len(dumped) > 1000 and len(gpu) > 100
    assert (len(dumped) > len(gpu)) == bool(built["cpu_nodes"])  # CPU-only attempts where CPU nodes ran
    month_end = datetime(2026, 6, 1)
    assert [
        r for r in gpu if when(r["Start"]) and when(r["Start"]) < month_end <= (when(r["End"]) or END)
    ]  # attempts run across the month end: the case counted twice before
    assert (totals["attempts"], totals["gpu_attempts"], totals["cpu_only_attempts"]) == (
        len(dumped),
        len(gpu),
        len(dumped) - len(gpu),
    )
    assert totals["gpu_jobs"] == len({r["JobIDRaw"] for r in gpu})
    assert totals["open_attempts"] == sum(1 for r in dumped.values() if when(r["End"]) is None or when(r["End"]) >= END)
    node_days = sum(runtime(r) * int(r["NNodes"]) for r in gpu) / 86400
    assert totals["gpu_node_days"] == pytest.approx(node_days, rel=1e-9)
    gpu_hours = sum(runtime(r) * tres_gpus(r, "AllocTRES") for r in dumped.values()) / 3600
    assert totals["gpu_hours"] == pytest.approx(gpu_hours, rel=1e-9)
    # a trailing window over the same months built (April is not) counts them the same way
    [window] = rows(built["config"], "select * from fct_period_totals where period_id = ?", [f"trailing:3:{LAST}"])
    counts = ("attempts", "gpu_attempts", "cpu_only_attempts", "gpu_jobs", "open_attempts", "gpu_hours")
    assert {k: window[k] for k in counts} == {k: totals[k] for k in counts}


def test_the_job_mix_counts_each_attempt_once_with_its_final_outcome(built) -> None:
    """The study's job mix (and its attempts by size, fct_period_mttf_by_size) equals the months'
    attempt rows counted once per attempt: with the outcome and size of its last row in the range
    and the GPU-hours of all its rows. An attempt that ended in the range is never "open"."""
    config = built["config"]
    final: dict[str, dict] = {}
    gpu_hours: dict[str, float] = defaultdict(float)
    for r in rows(config, "select * from fct_attempts where is_gpu_attempt order by month"):
        final[r["attempt_id"]] = r
        gpu_hours[r["attempt_id"]] += r["gpu_seconds"] / 3600
    expected: dict[tuple[str, str], list] = defaultdict(lambda: [0, 0.0])
    for attempt, r in final.items():
        expected[r["outcome"], r["size_bucket"]][0] += 1
        expected[r["outcome"], r["size_bucket"]][1] += gpu_hours[attempt]
    mix = {
        (r["outcome"], r["size_bucket"]): r
        for r in rows(config, "select * from fct_period_job_mix where period_id = ?", [STUDY])
    }
    assert set(mix) == set(expected)
    for key, (attempts, hours) in expected.items():
        assert (mix[key]["attempts"], mix[key]["gpu_hours"]) == (attempts, pytest.approx(hours, rel=1e-12)), key
    # the records' own count: every attempt once, open only if its last record is still running
    dumped = [r for r in dumped_attempts(built["sim"]).values() if size(r) > 0]
    by_outcome = Counter(outcome for (outcome, _), r in mix.items() for _ in range(r["attempts"]))
    ended = [r for r in dumped if when(r["End"]) is not None and when(r["End"]) < END]  # (a dump is taken after)
    assert by_outcome["open"] == len(dumped) - len(ended)
    assert by_outcome["completed"] == sum(1 for r in ended if r["State"] == "COMPLETED")
    assert sum(by_outcome.values()) == len(dumped)
    by_size = rows(
        config, "select size_bucket, attempts, gpu_hours from fct_period_mttf_by_size where period_id = ?", [STUDY]
    )
    for r in by_size:
        in_bucket = [m for (_, bucket), m in mix.items() if bucket == r["size_bucket"]]
        assert r["attempts"] == sum(m["attempts"] for m in in_bucket)
        assert r["gpu_hours"] == pytest.approx(sum(m["gpu_hours"] for m in in_bucket), rel=1e-12)


def test_a_months_period_still_counts_its_open_attempts(built) -> None:
    """Each month's own period counts every attempt row of the month, those open at its end as open."""
    config = built["config"]
    for month in (FIRST, LAST):
        [counted] = rows(
            config,
            "select count(*) as attempts, count(*) filter (where is_open) as open_attempts from fct_attempts where month = ?",
            [str(month)],
        )
        [totals] = rows(config, "select * from fct_period_totals where period_id = ?", [f"month:{month}"])
        assert (totals["attempts"], totals["open_attempts"]) == (counted["attempts"], counted["open_attempts"])
    [first] = rows(config, "select open_attempts from fct_period_totals where period_id = ?", [f"month:{FIRST}"])
    assert first["open_attempts"] > 0  # the attempts across the month end, open in the first month
