"""The simulator checked against itself: mixes, realised failure rate, evidence timing, formats."""

import json
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from ClusterShell.NodeSet import NodeSet
from job_records import sacct_attempts

from flows.core.months import Month
from flows.figures.measured import codes_of
from flows.figures.rates import poisson_interval
from flows.ingest.sources.sacct import SacctReadStats
from flows.ingest.sources.sacctmgr_events import read_sacctmgr_events
from flows.ingest.sources.xid_syslog import read_xid_syslog
from simulator import SimParams, simulate
from simulator.hostlist import fold_hostlist
from simulator.params import Clock
from simulator.records import Attempt
from simulator.writers.sacct import elapsed_texts, sacct_order
from simulator.writers.sacctmgr_events import elapsed_text

UTC = ZoneInfo("UTC")
MONTH = Month.parse("2026-10")


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    truth = simulate(SimParams("s", MONTH, nodes=160, seed=21, r_f=15.0, outside_window_share=0.3), out)
    attempts = sacct_attempts(out / "sacct.psv", UTC, SacctReadStats())
    return {"out": out, "truth": truth, "attempts": attempts}


def test_deterministic_from_seed(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    simulate(SimParams("d", MONTH, nodes=12, seed=5), a)
    simulate(SimParams("d", MONTH, nodes=12, seed=5), b)
    for name in ("sacct.psv", "events.psv", "xid.log", "nhc.log", "truth.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_state_mix_is_the_papers(sim):
    ended = [a for a in sim["attempts"] if a.state not in ("RUNNING", "PENDING")]
    share = {state: n / len(ended) for state, n in Counter(a.state for a in ended).items()}
    assert share["COMPLETED"] == pytest.approx(0.60, abs=0.04)
    assert share["FAILED"] == pytest.approx(0.24, abs=0.03)
    assert share["PREEMPTED"] == pytest.approx(0.10, abs=0.02)
    assert share["CANCELLED"] == pytest.approx(0.033, abs=0.01)
    for state in ("REQUEUED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"):
        assert share[state] > 0
    assert any(a.cancelled_by_uid == 0 for a in ended) and any(a.cancelled_by_uid for a in ended)
    # attempts that ran past the month's end are shown as they were at the dump time
    month_end = MONTH.end.replace(tzinfo=None)
    assert any(a.state == "RUNNING" or (a.end_at is not None and a.end_at > month_end) for a in sim["attempts"])


def test_size_mix_is_the_papers(sim):
    # the paper counts jobs: first records only (a requeue repeats its job's size)
    first = [a for a in sim["attempts"] if a.start_at is not None and a.gpus > 0 and a.reason != "BeginTime"]
    one_gpu = sum(a.gpus == 1 for a in first) / len(first)
    below_node = sum(a.gpus < 8 for a in first) / len(first)
    assert one_gpu > 0.40 and below_node > 0.90
    assert max(a.gpus for a in first) >= 256


def test_realised_node_failures_match_the_asked_rate(sim):
    fleet = sim["truth"]["fleet"]
    lower, upper = poisson_interval(fleet["node_failures"], 0.99)
    assert lower <= fleet["expected_node_failures"] <= upper


def test_lemon_nodes_fail_more(sim):
    truth = sim["truth"]
    assert len(truth["lemon_nodes"]) == round(160 * 0.005)
    factors = truth["node_rate_factor"]
    assert all(factors[n] == 25.0 for n in truth["lemon_nodes"])
    healthy = [f for n, f in factors.items() if n not in truth["lemon_nodes"]]
    assert sum(healthy) / len(healthy) == pytest.approx(1.0, abs=0.2)


def test_every_failure_is_in_the_dump_with_its_state(sim):
    records = {(a.job_id_raw, a.submit_at.strftime("%Y-%m-%dT%H:%M:%S")): a for a in sim["attempts"]}
    failures = sim["truth"]["infra_failures"]
    assert failures
    for f in failures:
        attempt = records[(f["job_id_raw"], f["submit"])]
        assert attempt.state == f["state"]
        assert attempt.end_at.strftime("%Y-%m-%dT%H:%M:%S") == f["end"]
        assert f["node"] in attempt.nodes


def test_evidence_is_in_the_attribution_window_exactly_where_truth_says(sim):
    out = sim["out"]
    evidence: dict[str, list[datetime]] = {}
    for x in read_xid_syslog(out / "xid.log", UTC, MONTH.year).to_pylist():
        if x["xid"] not in (13, 31, 43, 45, 63, 92):  # the critical ones
            evidence.setdefault(x["node"], []).append(x["ts"].replace(tzinfo=UTC))
    for e in read_sacctmgr_events(out / "events.psv", UTC):
        if "maintenance" not in e.reason and "Reboot" not in e.reason:
            evidence.setdefault(e.node, []).append(e.started_at)
    outside = 0
    for f in sim["truth"]["infra_failures"]:
        if f["cause"] == "node_unresponsive":
            continue
        end = datetime.fromisoformat(f["end"]).replace(tzinfo=UTC)
        in_window = [
            t for t in evidence.get(f["node"], []) if end - timedelta(minutes=10) <= t <= end + timedelta(minutes=5)
        ]
        assert bool(in_window) == f["in_attribution_window"], f
        outside += not f["in_attribution_window"]
    assert outside > 0  # the suite exercises evidence that lands just outside the window


def test_training_runs_lose_work_to_failures(sim):
    runs = sim["truth"]["training_runs"]
    assert runs
    for run in runs:
        assert 0 <= run["productive_seconds"] <= run["runtime_seconds"]
    interrupted = [r for r in runs if r["attempts"] > 1]
    assert interrupted and all(r["productive_seconds"] < r["runtime_seconds"] for r in interrupted)
    names = Counter(a.job_name for a in sim["attempts"] if "_pretrain_" in a.job_name)
    assert any(len({a.job_id_raw for a in sim["attempts"] if a.job_name == name}) > 1 for name in names)


def test_arrays_and_requeues_look_like_sacct(sim):
    tasks = [a for a in sim["attempts"] if "_" in a.job_id]
    assert tasks
    masters = {a.job_id.split("_")[0] for a in tasks}
    # the last task of an array keeps the master's id as JobIDRaw
    assert all(any(a.job_id_raw == m for a in tasks) for m in masters)
    per_job = Counter((a.job_id_raw, a.job_id) for a in sim["attempts"])
    requeued = [key for key, n in per_job.items() if n > 1]
    assert requeued
    lines = (sim["out"] / "sacct.psv").read_text().splitlines()[1:]
    first_index = {}
    for i, line in enumerate(lines):
        first_index.setdefault(line.split("|")[1], i)
    later = [a for a in sim["attempts"] if a.reason == "BeginTime"]
    first_records = [a for a in sim["attempts"] if a.reason != "BeginTime"]
    # requeue records follow every first record (a job's first record may lie before the dump's window)
    assert later and min(a.source_line for a in later) > max(a.source_line for a in first_records)
    assert any(a.source_line - 2 > first_index[a.job_id_raw] for a in later)
    records: dict[str, list] = {}
    for a in sim["attempts"]:
        records.setdefault(a.job_id_raw, []).append(a)
    for same_id in records.values():  # every later record of a job id is a requeue, after the first
        same_id.sort(key=lambda a: a.submit_at)
        assert all(a.reason == "BeginTime" and a.source_line > same_id[0].source_line for a in same_id[1:])


def test_slurm_2411_field_set(tmp_path):
    simulate(SimParams("n", MONTH, nodes=64, seed=2, r_f=40.0, slurm_version="24.11"), tmp_path)
    header = (tmp_path / "sacct.psv").read_text().splitlines()[0].split("|")
    assert header[-2:] == ["Restarts", "FailedNode"]
    attempts = sacct_attempts(tmp_path / "sacct.psv", UTC)
    rows = [line.split("|") for line in (tmp_path / "sacct.psv").read_text().splitlines()[1:]]
    node_fail = [r for r in rows if r[7] == "NODE_FAIL"]
    assert node_fail and all(r[-1] in NodeSet(r[15]) for r in node_fail)
    assert any(int(r[-2]) > 0 for r in rows)
    # the reader lands the newer fields
    assert [(a.restarts, a.failed_node) for a in attempts] == [(int(r[-2]), r[-1] or None) for r in rows]
    assert all(a.sluid is None for a in attempts)


@pytest.mark.parametrize("indices", [[1], [1, 2, 3, 4, 7], [9, 10, 12, 100, 101], list(range(1, 513))])
def test_fold_hostlist_round_trips_through_clustershell(indices):
    folded = fold_hostlist("gpu", indices, 4)
    assert list(NodeSet(folded)) == [f"gpu{i:04d}" for i in indices]


def test_vectorised_sacct_texts_are_the_ones_a_loop_writes():
    """sacct.psv's Elapsed, times and record order come from numpy; here against the one-at-a-time code."""
    seconds = np.array([0, 1, 59, 60, 3599, 3600, 86399, 86400, 86401, 7 * 86400 + 3723, 21 * 86400 - 1])
    assert elapsed_texts(seconds) == [elapsed_text(int(s)) for s in seconds]
    clock = Clock(datetime(2026, 9, 24, tzinfo=UTC))
    assert clock.texts(seconds) == [clock.text(int(s)) for s in seconds]
    rng = np.random.default_rng(0)
    attempts = [
        Attempt(str(raw), int(raw), "j", 0, 1, int(submit), int(submit), restarts=int(restarts))
        for raw, submit, restarts in zip(
            rng.integers(1000, 1040, 300), rng.integers(0, 50, 300), rng.integers(0, 3, 300), strict=True
        )
    ]
    expected = sorted((a for a in attempts if not a.restarts), key=lambda a: (a.job_id_raw, a.submit))
    expected += sorted((a for a in attempts if a.restarts), key=lambda a: (a.submit, a.job_id_raw))
    assert [id(a) for a in sacct_order(attempts)] == [id(a) for a in expected]


def test_truth_is_json_with_parameters(sim):
    truth = json.loads((sim["out"] / "truth.json").read_text())
    assert truth["parameters"]["r_f"] == 15.0 and truth["parameters"]["seed"] == 21
    assert set(truth["r_f_per_1000_node_days"]) == {"paper", "all"}
    assert sum(b["infra_failures"] for b in truth["size_buckets"].values()) == len(truth["infra_failures"])


def test_large_jobs_preempt_small_ones_after_two_hours(sim):
    by_key = {(a.job_id_raw, a.submit_at.strftime("%Y-%m-%dT%H:%M:%S")): a for a in sim["attempts"]}
    preemptions = sim["truth"]["preemptions"]
    assert preemptions and any(p["by_restart_after_failure"] for p in preemptions)
    for p in preemptions:
        victim = by_key[(p["job_id_raw"], p["submit"])]
        preemptor = by_key[(p["by_job_id_raw"], p["by_submit"])]
        assert victim.state == "PREEMPTED" and victim.end_at.strftime("%Y-%m-%dT%H:%M:%S") == p["preempted_at"]
        assert victim.end_at - victim.start_at >= timedelta(hours=2) - timedelta(seconds=1)
        assert timedelta(0) <= preemptor.start_at - victim.end_at <= timedelta(minutes=5)
        assert set(victim.nodes) & set(preemptor.nodes)
        assert p["gpus"] < p["by_gpus"]
        requeued = [a for a in sim["attempts"] if a.job_id_raw == p["job_id_raw"] and a.submit_at > victim.submit_at]
        assert requeued  # PreemptMode=REQUEUE: the same job id comes back


def test_dcgm_health_checks_in_dcgmi_json_layout(sim):
    files = sorted((sim["out"] / "dcgm").glob("*/*.json"))
    assert files
    failed_nodes = set()
    for path in files:
        report = json.loads(path.read_text())
        assert report["header"] == ["Health Monitor Report"]
        overall = report["body"]["Overall Health"]["value"]
        assert overall in ("Healthy", "Warning", "Failure")
        for gpu in report["body"].get("GPU", {}).get("children", {}).values():
            for system in gpu["children"]["Errors"]["children"].values():
                assert system["value"] in ("Warning", "Failure")
                assert all(len(line) <= 54 for line in system["overflow"])
        if overall == "Failure":
            failed_nodes.add(path.parent.name)
    gpu_causes = {"gpu_memory", "gpu_nvlink", "pcie", "gpu_unavailable", "gpu_driver_firmware"}
    assert {f["node"] for f in sim["truth"]["infra_failures"] if f["cause"] in gpu_causes} <= failed_nodes


def test_array_tasks_copy_their_first_task(sim):
    """Every task of an array has its first task's size, user, name and submit time, never a training job's."""
    tasks: dict[str, list] = {}
    for a in sim["attempts"]:
        if "_" in a.job_id and a.reason != "BeginTime":
            tasks.setdefault(a.job_id.split("_")[0], []).append(a)
    assert len(tasks) >= 5
    for same_array in tasks.values():
        first = min(same_array, key=lambda a: int(a.job_id.split("_")[1]))
        assert "_sweep_" in first.job_name
        for a in same_array:
            assert (a.user_name, a.job_name, a.submit_at) == (first.user_name, first.job_name, first.submit_at)
            assert a.gpus in (0, 1)  # 0: never allocated (AllocTRES is empty)


# --- a continuous history over several months ---------------------------------------------------
FIRST, SECOND = Month.parse("2026-09"), Month.parse("2026-10")  # past months: the reader refuses future times


@pytest.fixture(scope="module")
def two_months(tmp_path_factory):
    out = tmp_path_factory.mktemp("history")
    truth = simulate(SimParams("h", FIRST, nodes=96, seed=6, r_f=15.0, last_month=SECOND), out)
    dumps = {m: sacct_attempts(out / str(m) / "sacct.psv", UTC, SacctReadStats()) for m in (FIRST, SECOND)}
    return {"out": out, "truth": truth, "dumps": dumps}


def _key(a) -> tuple[str, str]:
    return a.job_id_raw, a.submit_at.strftime("%Y-%m-%dT%H:%M:%S")


def test_history_writes_one_directory_per_month(two_months):
    out, truth = two_months["out"], two_months["truth"]
    assert set(truth["months"]) == {"2026-09", "2026-10"}
    for month in ("2026-09", "2026-10"):
        names = {p.name for p in (out / month).iterdir()}
        assert {"sacct.psv", "events.psv", "xid.log", "nhc.log", "dcgm", "truth.json"} <= names
        assert json.loads((out / month / "truth.json").read_text()) == json.loads(json.dumps(truth["months"][month]))
    assert truth["months"]["2026-09"]["as_of"] == "2026-10-02T06:00:00"


def test_open_attempts_end_in_the_next_months_dump(two_months):
    first, second = two_months["dumps"][FIRST], two_months["dumps"][SECOND]
    later = {_key(a): a for a in second}
    open_ones = [a for a in first if a.end_at is None]
    assert any(a.state == "RUNNING" for a in open_ones)
    for a in open_ones:  # the same attempt, as it was at the next dump
        again = later[_key(a)]
        assert a.state in ("RUNNING", "PENDING") and a.start_at is None or a.state == "RUNNING"
        assert again.start_at == a.start_at or a.start_at is None
    assert any(later[_key(a)].end_at is not None for a in open_ones if a.state == "RUNNING")
    as_of = datetime(2026, 10, 2, 6)
    for a in first:  # the first dump shows what happened up to its dump time, after the month's end too
        assert a.submit_at < datetime(2026, 10, 1)
        assert a.end_at is None or a.end_at < as_of
        assert (a.end_at is None) == (a.state in ("RUNNING", "PENDING"))


def test_job_ids_are_never_reused_and_requeues_continue(two_months):
    jobs: dict[str, set] = {}
    sizes: dict[str, set] = {}
    for attempts in two_months["dumps"].values():
        for a in attempts:
            jobs.setdefault(a.job_id_raw, set()).add((a.job_name, a.user_name))
            if a.gpus:  # 0 when never allocated (AllocTRES is empty)
                sizes.setdefault(a.job_id_raw, set()).add(a.gpus)
    assert all(len(v) == 1 for v in jobs.values()) and all(len(v) == 1 for v in sizes.values())
    records: dict[str, dict] = {}
    for attempts in two_months["dumps"].values():
        for a in attempts:
            records.setdefault(a.job_id_raw, {})[_key(a)] = a
    spanning = 0
    for same_id in records.values():
        ordered = sorted(same_id.values(), key=lambda a: a.submit_at)
        assert all(a.reason == "BeginTime" for a in ordered[1:])
        spanning += len({a.submit_at.month for a in ordered}) > 1
    assert spanning > 0  # some jobs are requeued across the month boundary


def test_in_month_runtimes_sum_to_the_attempts_runtime(two_months):
    """Split at the boundary and clipped at the dump time, an attempt's runtimes over the months sum
    to its whole runtime; the truth's training runs add up the same way."""
    bounds = {
        FIRST: (datetime(2026, 9, 1), datetime(2026, 10, 1)),
        SECOND: (datetime(2026, 10, 1), datetime(2026, 11, 1)),
    }
    total: dict[tuple, float] = {}
    final: dict[tuple, object] = {}
    for month, attempts in two_months["dumps"].items():
        lo, hi = bounds[month]
        for a in attempts:
            if a.start_at is None:
                continue
            end = a.end_at or datetime(2026, 11, 2, 6)
            total[_key(a)] = total.get(_key(a), 0) + max((min(end, hi) - max(a.start_at, lo)).total_seconds(), 0)
            final[_key(a)] = a
    checked = 0
    for key, a in final.items():
        if a.end_at is not None and a.start_at >= bounds[FIRST][0] and a.end_at < bounds[SECOND][1]:
            assert total[key] == (a.end_at - a.start_at).total_seconds()
            checked += 1
    assert checked > 1000
    truth = two_months["truth"]
    whole = {r["run_id"]: r for r in truth["training_runs"]}
    per_month = Counter()
    for month in truth["months"].values():
        for r in month["training_runs"]:
            per_month[r["run_id"]] += r["runtime_seconds"]
            assert 0 <= r["ettr"] <= 1 and r["productive_seconds"] <= r["runtime_seconds"]
    inside = [r for r in whole.values() if r["completed"] and r["run_id"] in per_month]
    crossing = [r for m in truth["months"].values() for r in m["training_runs"] if r["crosses_month_end"]]
    assert crossing and inside
    for run in truth["months"]["2026-09"]["training_runs"]:
        if not run["crosses_month_start"] and run["completed"]:
            assert per_month[run["run_id"]] == whole[run["run_id"]]["runtime_seconds"]


def test_a_history_is_deterministic_from_its_seed(tmp_path):
    params = {"nodes": 12, "seed": 5, "last_month": SECOND}
    simulate(SimParams("d", FIRST, **params), tmp_path / "a")
    simulate(SimParams("d", FIRST, **params), tmp_path / "b")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len(files) > 10
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


# --- a replayed fault trace ---------------------------------------------------------------------
# five faults on a 40-node cluster (node, failed_at, repaired_at, category), replayed exactly
TRACE = (Path(__file__).parent / "data" / "fault_trace.csv").read_text()


def test_a_fault_trace_is_replayed_exactly(tmp_path):
    trace = tmp_path / "faults.csv"
    trace.write_text(TRACE)
    truth = simulate(SimParams("t", MONTH, nodes=40, seed=3, fault_trace=trace), tmp_path / "sim")
    assert truth["fleet"]["node_failures"] == 5 and truth["lemon_nodes"] == []
    faults = {(row.split(",")[0], row.split(",")[1][:19]) for row in TRACE.splitlines()[1:]}
    assert {(f["node"], f["failure_at"]) for f in truth["infra_failures"]} <= faults
    assert truth["infra_failures"]  # the cluster is busy: faults end jobs
    events = read_sacctmgr_events(tmp_path / "sim" / "events.psv", UTC)
    signalled = {(e.node, e.started_at.strftime("%Y-%m-%dT%H")) for e in events if "maintenance" not in e.reason}
    for node, at in faults:  # each fault leaves its node event (DOWN, DRAIN or DOWN*) within minutes
        assert (node, at[:13]) in signalled
    xids = {
        x["node"] for x in read_xid_syslog(tmp_path / "sim" / "xid.log", UTC, 2026).to_pylist() if x["xid"] in (48, 74)
    }
    assert {"gpu0003", "gpu0030"} <= xids


# Faults a real trace has: repaired when they failed (zero-length), within the same second, a few
# seconds later, and in the last second of a month (its event is written with the next month's dump).
SHORT_FAULTS = """node,failed_at,repaired_at,category
gpu0004,2026-10-06T10:00:00Z,2026-10-06T10:00:00Z,gpu_memory
gpu0005,2026-10-07T11:00:00Z,2026-10-07T11:00:00Z,node_unresponsive
gpu0006,2026-10-08T12:00:00.200Z,2026-10-08T12:00:00.700Z,gpu_nvlink
gpu0007,2026-10-09T13:00:00Z,2026-10-09T13:00:00.500Z,infiniband_link
gpu0008,2026-10-10T14:00:00Z,2026-10-10T14:00:01Z,pcie
gpu0009,2026-10-11T15:00:00Z,2026-10-11T15:00:00Z,gpu_nvlink
gpu0011,2026-10-13T17:00:00Z,2026-10-13T17:00:20Z,gpu_memory
gpu0013,2026-10-31T23:59:59Z,2026-11-01T00:00:00Z,gpu_memory
gpu0014,2026-11-03T09:00:00Z,2026-11-03T09:00:00Z,gpu_driver_firmware
"""


def test_a_trace_of_zero_length_faults_writes_well_formed_events(tmp_path):
    """Every node event of every month reads without a quarantined row (a strict reader raises at
    the first): a fault shorter than Slurm's notice is an event with TimeEnd = TimeStart at its repair."""
    trace = tmp_path / "faults.csv"
    trace.write_text(SHORT_FAULTS)
    last = MONTH.next()
    truth = simulate(SimParams("t", MONTH, last_month=last, nodes=40, seed=3, fault_trace=trace), tmp_path / "sim")
    assert sum(truth["months"][str(m)]["fleet"]["node_failures"] for m in (MONTH, last)) == 9  # each fault replayed
    rows = [row.split(",") for row in SHORT_FAULTS.splitlines()[1:]]
    repaired = {(node, back[:19]) for node, _, back, _ in rows}
    zero_length = set()
    for month in (MONTH, last):
        for e in read_sacctmgr_events(tmp_path / "sim" / str(month) / "events.psv", UTC):  # strict
            assert e.ended_at is None or e.ended_at >= e.started_at, e
            if e.ended_at == e.started_at:
                zero_length.add((e.node, e.started_at.strftime("%Y-%m-%dT%H:%M:%S")))
    # each fault repaired before Slurm noticed leaves its event at the repair, none shorter
    assert zero_length <= repaired and len(zero_length) >= 6


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("gpu9999,2026-10-05T10:00:00Z,2026-10-05T20:00:00Z,gpu_memory", "line 2: node: 'gpu9999'"),
        ("gpu0003,yesterday,2026-10-05T20:00:00Z,gpu_memory", "line 2: failed_at: 'yesterday'"),
        ("gpu0003,2026-10-05T10:00:00Z,2026-10-05T09:00:00Z,gpu_memory", "line 2: repaired_at"),
        # reversed within one second: refused, not replayed as a zero-length fault
        ("gpu0003,2026-10-05T10:00:00.900Z,2026-10-05T10:00:00.100Z,gpu_memory", "line 2: repaired_at"),
        ("gpu0003,2026-10-05T10:00:00Z,2026-10-05T20:00:00Z,cosmic_rays", "line 2: category: 'cosmic_rays'"),
    ],
)
def test_a_bad_fault_trace_names_file_line_and_field(tmp_path, row, message):
    trace = tmp_path / "faults.csv"
    trace.write_text("node,failed_at,repaired_at,category\n" + row + "\n")
    with pytest.raises(ValueError, match=f"faults.csv: {message}"):
        simulate(SimParams("t", MONTH, nodes=40, seed=3, fault_trace=trace), tmp_path / "sim")


# --- scheduling like a real cluster, on a 3-month history ----------------------------------------
REALISM_MONTHS = (Month.parse("2026-08"), Month.parse("2026-10"))


@pytest.fixture(scope="module", params=[2025, 1, 4])
def busy_quarter(request, tmp_path_factory):
    """The demo's size (256 nodes, r_f 6.5) over three months."""
    out = tmp_path_factory.mktemp(f"quarter{request.param}")
    first, last = REALISM_MONTHS
    truth = simulate(SimParams("q", first, nodes=256, seed=request.param, last_month=last), out)
    return {"out": out, "truth": truth}


def test_the_queue_does_not_grow(busy_quarter):
    """The median wait (Start - Eligible) of the attempts of 64+ GPU jobs, by week of eligibility,
    stays within 2x of the first full week's (the first month's; the 7-day warm-up is before it)
    plus 1 h. The hour: on a stable queue most large attempts start when they become eligible, so
    the first week's median is 0 h and a purely relative bound would demand exactly 0 h every week;
    1 h is the scale of one backfill gap or restart, far below the 10-20 h weekly swings of a queue
    that builds up (which this guards against)."""
    weekly = busy_quarter["truth"]["scheduler"]["weekly_wait_64_plus_gpus"]
    weeks = [w["median_wait_hours"] for w in weekly if w["days"] == 7]  # full weeks
    assert len(weeks) == 13 and all(w is not None for w in weeks)
    assert all(w["attempts"] >= 10 for w in weekly if w["days"] == 7)
    assert max(weeks) <= 2 * weeks[0] + 1.0, weeks


def test_high_qos_jobs_start_quickly(busy_quarter):
    truth = busy_quarter["truth"]
    assert truth["scheduler"]["high_qos_attempts"] > 100
    assert truth["scheduler"]["high_qos_median_wait_hours"] < 2.0
    for month, figures in truth["months"].items():  # cross-checked from the month's sacct dump
        attempts = sacct_attempts(busy_quarter["out"] / month / "sacct.psv", UTC, SacctReadStats())
        as_of = datetime.fromisoformat(figures["as_of"])
        lo, hi = datetime.fromisoformat(figures["month_start"]), datetime.fromisoformat(figures["month_end"])
        waits = sorted(
            ((a.start_at or as_of) - a.eligible_at).total_seconds()
            for a in attempts
            if a.qos == "high" and lo <= a.eligible_at < hi
        )
        assert waits and waits[len(waits) // 2] < 2 * 3600, month
        assert figures["scheduler"]["high_qos_median_wait_hours"] < 2.0


def test_whole_nodes_do_not_idle_while_a_pending_job_fits(busy_quarter):
    truth = busy_quarter["truth"]
    assert truth["scheduler"]["gpu_pool_idle_while_fit_share"] < 0.05
    for figures in truth["months"].values():
        assert figures["scheduler"]["gpu_pool_idle_while_fit_share"] < 0.05
        assert 0.7 < figures["scheduler"]["gpu_pool_busy_share"] < 0.95


def test_large_training_runs_get_a_high_ettr(busy_quarter):
    for figures in busy_quarter["truth"]["months"].values():
        assert figures["scheduler"]["long_high_qos_runs"] >= 10
        assert figures["scheduler"]["long_high_qos_runs_mean_ettr"] >= 0.85


# --- a real site's shapes (issue 42): a mixed cluster, only job records, a dump that ends mid-month,
# a month with a handful of GPU jobs, a month with no records; and which figures each cannot support


def _sacct_rows(path: Path) -> list[dict[str, str]]:
    lines = path.read_text().splitlines()
    header = lines[0].split("|")
    return [dict(zip(header, line.split("|"), strict=True)) for line in lines[1:]]


def _expected_failed_rules(month: dict) -> dict[str, str]:
    """The contract's rules, stated once more from the truth's own figures (docs/metrics.md)."""
    rates, node_source = month["r_f_per_1000_node_days"], month["parameters"]["sources"] == "all"
    gpu = None
    if month["gpu_attempts"] == 0:
        gpu = "no_gpu_jobs"
    elif rates["all"]["node_days"] < 100:
        gpu = "thin_gpu_exposure"
    rules = {}
    if month["gpu_attempts"] == 0:  # no GPU attempt, nothing a failure could have ended (none of these months
        rules["gpu_attempt_ended"] = "no_gpu_jobs"  # has GPU attempts that all run on past its end)
    if rates["paper"]["node_days"] < 100:
        rules["paper_exposure"] = "no_gpu_jobs" if gpu == "no_gpu_jobs" else "thin_gpu_exposure"
    if gpu:
        rules["gpu_exposure"] = gpu
    if not node_source:
        rules["node_source"] = "no_node_source"
        if rates["all"]["rule_failures"] < 10:
            rules["node_source_or_failures"] = "no_node_source_few_failures"
        rules["node_event_source"] = "no_node_event_source"  # the simulator's node events come with its health logs
    return rules


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_mixed_cluster_runs_cpu_only_jobs_beside_the_gpu_ones(tmp_path, seed):
    """CPU-only nodes in a `cpu` partition run CPU-only jobs whose TRES has no GPU (as sacct writes
    them), many more than the GPU jobs; their nodes' faults end them NODE_FAIL; and the GPU side is
    the history the same seed gives without CPU nodes, so its truth is unchanged."""
    shape = dict(nodes=4, seed=seed, duration_scale=4.0)
    mixed = simulate(SimParams("m", MONTH, **shape, cpu_nodes=8, cpus_per_node=16, cpu_r_f=60.0), tmp_path / "mixed")
    alone = simulate(SimParams("m", MONTH, **shape), tmp_path / "alone")
    rows = _sacct_rows(tmp_path / "mixed" / "sacct.psv")
    cpu = [r for r in rows if r["Partition"] == "cpu"]
    gpu = [r for r in rows if r["Partition"] != "cpu"]
    assert len(cpu) == mixed["cpu_only_attempts"] > len(gpu)
    assert len(gpu) == mixed["gpu_attempts"] == alone["gpu_attempts"] and alone["cpu_only_attempts"] == 0
    assert all("gres/gpu" not in r["AllocTRES"] + r["ReqTRES"] and "cpu=" in r["ReqTRES"] for r in cpu)
    assert all(r["NodeList"].startswith("cpu") or r["State"] == "PENDING" or not r["AllocTRES"] for r in cpu)
    node_fail = [r for r in cpu if r["State"] == "NODE_FAIL" and r["End"] < mixed["month_end"]]
    assert node_fail and mixed["cpu_nodes"]["node_fail_attempts"] == len(node_fail)
    # the GPU records, their faults' logs and the GPU truth are the GPU-only cluster's
    alone_rows = (tmp_path / "alone" / "sacct.psv").read_text().splitlines()[1:]
    assert ["|".join(r.values()) for r in gpu] == alone_rows
    for key in ("r_f_per_1000_node_days", "size_buckets", "infra_failures", "training_runs", "failed_rules"):
        assert mixed[key] == alone[key], key
    for name in ("xid.log", "nhc.log"):
        assert (tmp_path / "mixed" / name).read_bytes() == (tmp_path / "alone" / name).read_bytes()
    cpu_events = [line for line in (tmp_path / "mixed" / "events.psv").read_text().splitlines() if "|cpu0" in line]
    assert cpu_events and all("|Not responding|" in line for line in cpu_events)
    # the pipeline's reader sees no GPU on a CPU-only record
    parsed = sacct_attempts(tmp_path / "mixed" / "sacct.psv", UTC, SacctReadStats())
    assert sum(a.gpus == 0 and not a.req_gpus for a in parsed) == len(cpu)


@pytest.mark.parametrize("seed", [4, 5])
def test_a_site_with_only_job_records_has_only_sacct(tmp_path, seed):
    """`sources = "jobs_only"`: only sacct.psv (the same records as with every log), and a truth
    whose attribution sees no health signal: only NODE_FAIL is an infrastructure failure."""
    params = dict(nodes=12, seed=seed, r_f=40.0, last_month=MONTH.next(), cpu_nodes=2, duration_scale=4.0)
    jobs = simulate(SimParams("j", MONTH, sources="jobs_only", **params), tmp_path / "jobs")
    every = simulate(SimParams("j", MONTH, **params), tmp_path / "all")
    for month in (str(MONTH), str(MONTH.next())):
        assert sorted(p.name for p in (tmp_path / "jobs" / month).iterdir()) == ["sacct.psv", "truth.json"]
        assert (tmp_path / "jobs" / month / "sacct.psv").read_bytes() == (
            tmp_path / "all" / month / "sacct.psv"
        ).read_bytes()
        truth, full = jobs["months"][month], every["months"][month]
        assert truth["window_false_positives"] == [] and truth["manual_requeues_near_critical"] == []
        for f in truth["infra_failures"]:
            assert f["expected_attributed"] == (f["state"] == "NODE_FAIL")
            assert f["expected_cause"] == ("unattributed_node_failure" if f["state"] == "NODE_FAIL" else None)
        nodefail = sum(f["state"] == "NODE_FAIL" for f in full["infra_failures"])
        assert truth["r_f_per_1000_node_days"]["all"]["rule_failures"] == nodefail
        assert codes_of(truth["failed_rules"])["fleet_fault_rate"] == "no_node_source"
        assert "fleet_fault_rate" not in codes_of(full["failed_rules"])
        assert truth["failed_rules"] == _expected_failed_rules(truth)
        assert full["failed_rules"] == _expected_failed_rules(full)


@pytest.mark.parametrize(
    "ends", [15, datetime(2026, 10, 20, 13, 47, 11, tzinfo=UTC)], ids=["day-15", "2026-10-20T13:47:11"]
)
def test_a_dump_that_ends_mid_month_has_no_record_after_it(tmp_path, ends):
    """`dump_ends`: the last month's records, node events and health logs stop there; what runs
    then is RUNNING with End Unknown and its Elapsed up to the dump (as sacct prints a running job,
    and as the pipeline reads the dump time); the truth's exposure stops there too."""
    truth = simulate(
        SimParams(
            "e", MONTH.previous(), nodes=16, seed=7, last_month=MONTH, dump_ends=ends, cpu_nodes=2, duration_scale=4.0
        ),
        tmp_path,
    )
    month = truth["months"][str(MONTH)]
    dump = ends if isinstance(ends, datetime) else datetime(2026, 10, ends, tzinfo=UTC)
    dump_text = dump.strftime("%Y-%m-%dT%H:%M:%S")
    assert month["as_of"] == truth["as_of"] == dump_text and month["month_end"] == "2026-11-01T00:00:00"
    rows = _sacct_rows(tmp_path / str(MONTH) / "sacct.psv")
    times = [r[k] for r in rows for k in ("Submit", "Eligible", "Start", "End") if r[k] != "Unknown"]
    assert max(times) < dump_text and max(times) == month["records_span"]["last"]
    running = [r for r in rows if r["State"] == "RUNNING"]
    assert running and all(r["End"] == "Unknown" for r in running)
    parsed = sacct_attempts(tmp_path / str(MONTH) / "sacct.psv", UTC, SacctReadStats())
    ends_at = {a.start_at + timedelta(seconds=a.elapsed_seconds) for a in parsed if a.state == "RUNNING"}
    assert ends_at == {dump.replace(tzinfo=None)}
    for e in read_sacctmgr_events(tmp_path / str(MONTH) / "events.psv", UTC):
        assert e.started_at < dump
    for x in read_xid_syslog(tmp_path / str(MONTH) / "xid.log", UTC, MONTH.year).to_pylist():
        assert x["ts"].replace(tzinfo=UTC) < dump
    days = (dump - datetime(2026, 10, 1, tzinfo=UTC)).total_seconds() / 86400
    assert 0 < month["r_f_per_1000_node_days"]["all"]["node_days"] <= 16 * days
    assert all(f["end"] < dump_text for f in month["infra_failures"])
    with pytest.raises(ValueError, match="dump_ends"):
        SimParams("e", MONTH, nodes=4, seed=1, dump_ends=datetime(2026, 11, 2, tzinfo=UTC)).validate()


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_month_with_a_handful_of_gpu_jobs_is_not_measurable_by_its_gpu_exposure(tmp_path, seed):
    """Two GPU nodes at 0.1% utilisation beside busy CPU nodes: a handful of GPU jobs (or none),
    under a GPU node-day, so every GPU-exposure figure is not measurable, for the rule's reason."""
    truth = simulate(
        SimParams("h", MONTH, nodes=2, seed=seed, utilization=0.001, cpu_nodes=2, cpu_utilization=0.3), tmp_path
    )
    assert truth["gpu_attempts"] <= 15 and truth["cpu_only_attempts"] > 100 * max(1, truth["gpu_attempts"])
    assert truth["r_f_per_1000_node_days"]["all"]["node_days"] < 1
    code = "no_gpu_jobs" if truth["gpu_attempts"] == 0 else "thin_gpu_exposure"
    assert codes_of(truth["failed_rules"])["mttf_by_size"] == codes_of(truth["failed_rules"])["breakdowns"] == code
    assert truth["failed_rules"] == _expected_failed_rules(truth)


def test_a_month_with_no_records_is_a_dump_of_other_months(tmp_path):
    """The recipe (docs/simulator.md): a dump of 2026-08..09 given for 2026-11 has no record in
    November; its truth's records_span says what it covers."""
    truth = simulate(
        SimParams("n", MONTH.previous().previous(), nodes=8, seed=2, last_month=MONTH.previous()), tmp_path
    )
    span = truth["months"]["2026-09"]["records_span"]
    rows = _sacct_rows(tmp_path / "2026-09" / "sacct.psv")
    times = [r[k] for r in rows for k in ("Submit", "Eligible", "Start", "End") if r[k] != "Unknown"]
    assert (min(times), max(times)) == (span["first"], span["last"])
    assert span["last"] < "2026-11-01T00:00:00"
    assert "2026-08" < span["first"] < "2026-09" and span["last"] < truth["months"]["2026-09"]["as_of"]


@pytest.mark.parametrize(
    "params",
    [
        dict(nodes=16, seed=1),
        dict(nodes=48, seed=11, r_f=20.0, sources="jobs_only"),
        dict(nodes=40, seed=3, r_f=60.0, sources="jobs_only", cpu_nodes=3),
        dict(nodes=2, seed=4, utilization=0.0005, cpu_nodes=1),
        dict(nodes=200, seed=21, sources="jobs_only", duration_scale=2.0, utilization=0.9),
    ],
    ids=["gpu-16", "jobs-only-48", "jobs-only-mixed-40", "no-gpu-jobs", "jobs-only-200-paper"],
)
def test_not_measurable_is_exactly_the_rules(tmp_path, params):
    truth = simulate(SimParams("r", MONTH, **params), tmp_path)
    assert truth["failed_rules"] == _expected_failed_rules(truth)
    assert truth["gpu_attempts"] == len([r for r in _sacct_rows(tmp_path / "sacct.psv") if r["Partition"] != "cpu"])
