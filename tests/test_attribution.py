"""Attribution (docs/methodology.md "Attribution"): the simulator's truth applies the rule apart from
the dbt model (the incident nearest the End wins, ties by priority, then the earlier, then the node),
names each lone fault its true cause on every seed, and a requeue the records mark as a user's or
an admin's reaches the landing. The pipeline's side, attempt by attempt, is in test_pipeline.py and
test_history.py; the model's own cases are its dbt unit tests."""

from __future__ import annotations

import json
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from job_records import json_attempts, sacct_attempts

from flows.core.months import Month
from simulator import SimParams
from simulator.attribution import attribute_failures, rule_match
from simulator.history import run_history
from simulator.records import Attempt

UTC = ZoneInfo("UTC")
SEEDS = (1, 2, 3, 4, 5)
END = 100_000  # an attempt's End, in simulated seconds
# user and admin requeues: half marked in AdminComment, 2% followed by an unrelated critical drain
MANUAL_REQUEUES = {"marked_requeue_share": 0.5, "requeue_drain_share": 0.02}


def history_of(critical: dict[int, list[tuple[int, str]]]) -> SimpleNamespace:
    """What `rule_match` reads of a history: the critical signals per node and the nodes' names."""
    return SimpleNamespace(critical=critical, node_names=[f"gpu{i:03d}" for i in range(8)])


def ended(nodes: tuple[int, ...]) -> Attempt:
    return Attempt("1", 1, "job", 0, 8 * len(nodes), 0, 0, start=0, end=END, state="FAILED", nodes=nodes)


@pytest.mark.parametrize(
    ("critical", "expected"),
    [
        # a node stopped answering at the End; an ECC drain of the other node 54 s later
        ({0: [(END, "node_unresponsive")], 1: [(END + 54, "gpu_memory")]}, ("node_unresponsive", 0)),
        # one node's incident is caused by its first signal: Xid 79, then DCGM's PCIe failure
        (
            {0: [(END - 120, "gpu_unavailable"), (END - 60, "pcie")], 1: [(END - 90, "infiniband_link")]},
            ("gpu_unavailable", 0),
        ),
        # equal distance, before and after the End: the better priority
        ({0: [(END - 120, "gpu_nvlink")], 1: [(END + 120, "gpu_memory")]}, ("gpu_memory", 1)),
        # equal distance and the same cause: the earlier
        ({0: [(END + 60, "infiniband_link")], 1: [(END - 60, "infiniband_link")]}, ("infiniband_link", 1)),
        # outside [End - 10 min, End + 5 min]: nothing
        ({0: [(END - 601, "gpu_memory"), (END + 301, "gpu_memory")]}, None),
    ],
    ids=["nearest-beats-priority", "first-event-of-an-incident", "tie-priority", "tie-earlier", "outside"],
)
def test_the_truth_applies_the_rule(critical, expected) -> None:
    assert rule_match(history_of(critical), ended((0, 1))) == expected


@pytest.fixture(scope="module")
def histories() -> list:
    """Five seeds of a small month (~1 s each), their failures attributed by the truth's rule."""
    result = []
    for seed in SEEDS:
        params = SimParams("attr", Month.parse("2026-10"), nodes=32, seed=seed, r_f=20.0, **MANUAL_REQUEUES)
        history = run_history(params)
        attribute_failures(history)
        result.append(history)
    return result


def test_a_lone_fault_is_named_its_true_cause_on_every_seed(histories) -> None:
    """Where the only critical signals in a failure's window are its own fault's (on its node, from
    the fault on), the rule names the fault's true cause, on every seed: the nearest-incident rule
    never lets a later symptom (DCGM's PCIe failure after Xid 79) take the cause."""
    for history in histories:
        critical, lone = history.ctx.signals.critical, 0
        for f in history.ctx.failures:
            a = f["attempt"]
            window = [(n, t) for n in a.nodes for t, _ in critical.get(n, ()) if a.end - 600 <= t <= a.end + 300]
            if window and all(n == f["node"] and t >= f["failure_at"] for n, t in window):
                lone += 1
                assert f["expected_cause"] == f["cause"], (history.ctx.params.seed, f)
        assert lone >= 5


def test_the_simulator_marks_manual_requeues_and_drains_next_to_some(histories) -> None:
    """The simulator's user and admin requeues: about half are marked in AdminComment and about 2%
    are followed by an unrelated critical drain inside the window (MANUAL_REQUEUES), so over the seeds
    both marked and unmarked ones meet a critical event."""
    near, requeues = [], []
    for history in histories:
        requeues += history.ctx.manual_requeues
        near += [r for r in history.ctx.manual_requeues if rule_match(history, r["attempt"]) is not None]
    for r in requeues:
        assert r["attempt"].state == "REQUEUED"
        assert r["attempt"].admin_comment == (f"requeue={r['by']}" if r["marked"] else "")
    assert 0.4 < sum(r["marked"] for r in requeues) / len(requeues) < 0.6
    assert 0.01 < sum(r["drain_injected"] for r in requeues) / len(requeues) < 0.05
    assert sum(r["marked"] for r in near) >= 5 and sum(not r["marked"] for r in near) >= 5


def test_admin_comment_lands_from_the_psv_and_the_json(slurm_fixtures, tmp_path) -> None:
    """Real Slurm 22.05 records carry no mark (empty AdminComment, `comment.administrator` null);
    a site's mark on the REQUEUED record (job 8) is read from both formats."""
    lines = (slurm_fixtures / "sacct_fields_allocations.psv").read_text().splitlines()
    marked = [lines[0] + "|AdminComment"]
    marked += [line + ("|requeue=admin" if "|REQUEUED|" in line else "|") for line in lines[1:]]
    (tmp_path / "sacct.psv").write_text("\n".join(marked) + "\n")
    comments = {(a.job_id, a.state): a.admin_comment for a in sacct_attempts(tmp_path / "sacct.psv", UTC)}
    assert comments[("8", "REQUEUED")] == "requeue=admin"
    assert {c for key, c in comments.items() if key != ("8", "REQUEUED")} == {None}

    assert {a.admin_comment for a in json_attempts(slurm_fixtures / "sacct.json")} == {None}
    document = json.loads((slurm_fixtures / "sacct.json").read_text())
    for job in document["jobs"]:
        if job["state"]["current"] == "REQUEUED":
            job["comment"]["administrator"] = "requeue=user"
    (tmp_path / "sacct.json").write_text(json.dumps(document))
    comments = {(a.job_id, a.state): a.admin_comment for a in json_attempts(tmp_path / "sacct.json")}
    assert comments[("8", "REQUEUED")] == "requeue=user"
    assert {c for key, c in comments.items() if key != ("8", "REQUEUED")} == {None}
