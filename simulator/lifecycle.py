"""How an attempt starts and ends (normally, by a node fault, or preempted), and what its job submits next."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from simulator.catalog import CAUSES, USERS
from simulator.crash_loops import crash_loop
from simulator.failures import NodeFaults, SignalLog, emit_fault_signals
from simulator.params import SimParams
from simulator.records import NEVER, Attempt, Job
from simulator.rules import (
    ATTRIBUTION_AFTER_MINUTES,
    ATTRIBUTION_BEFORE_MINUTES,
    CKPT_INTERVAL_MINUTES,
    RESTART_OVERHEAD_MINUTES,
)
from simulator.workload import MAX_TIME_LIMIT, USER_EXIT_CODES, TrainingRun

# How a job on a failing node ends, and the cumulative shares `Generator.choice(kinds, p=shares)`
# searches with one `random()` draw (the same draw and the same pick as choice, without its ~20 us)
FAULT_KINDS = ("NODE_FAIL", "FAILED", "REQUEUED")
FAULT_KIND_CDF = np.cumsum([0.4, 0.45, 0.15])
FAULT_KIND_CDF = (FAULT_KIND_CDF / FAULT_KIND_CDF[-1]).tolist()
# Training runs checkpoint and restart as the pipeline's ETTR estimator assumes (simulator/rules.py), in seconds
CKPT_INTERVAL = int(CKPT_INTERVAL_MINUTES * 60)
RESTART_OVERHEAD = int(RESTART_OVERHEAD_MINUTES * 60)


@dataclass
class SimContext:
    """Everything the schedulers share: parameters, randomness, faults, and the record being written."""

    params: SimParams
    rng: np.random.Generator
    faults: NodeFaults
    horizon: int  # the last dump time: nothing after it is simulated
    next_raw_id: int
    runs: dict[int, TrainingRun]
    signals: SignalLog = field(default_factory=SignalLog)
    attempts: list[Attempt] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)  # every attempt a node fault ended
    preemptions: list[dict] = field(default_factory=list)
    consumed: set[tuple[int, int]] = field(default_factory=set)  # (node, fault index) that ended a job
    manual_requeues: list[dict] = field(default_factory=list)  # requeues by a user or an admin
    crash_loops: dict[int, int] = field(default_factory=dict)  # job id (raw) in a crash loop -> crashes left
    seq: int = 0
    # Draws for the manual requeues' marks and drains, and for the crash loops: streams of their
    # own, so adding them left the rest of the history (faults, jobs, schedule) as it was.
    requeue_rng: np.random.Generator = field(init=False)
    loop_rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.requeue_rng = np.random.default_rng([self.params.seed, 22])
        self.loop_rng = np.random.default_rng([self.params.seed, 23])

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def new_raw_id(self) -> int:
        self.next_raw_id += 1
        return self.next_raw_id - 1


@dataclass(slots=True)
class Ending:
    """How a started attempt will end: at `at`, normally or by fault `fault` = (time, node, index)."""

    at: int
    fault: tuple[int, int, int] | None = None
    kind: str = ""  # NODE_FAIL, FAILED or REQUEUED for a fault
    outside_window: bool = False


def planned_runtime(job: Job) -> int:
    """Seconds the attempt runs if nothing interrupts it."""
    if job.run_id:
        return min(job.work + job.overhead, MAX_TIME_LIMIT)
    return job.work


def start_attempt(ctx: SimContext, job: Job, start: int, nodes: tuple[int, ...]) -> Attempt:
    attempt = Attempt(  # positionally: job_id .. eligible, start, end, state, exit_code, nodes, reason, restarts
        job.job_id,
        job.job_id_raw,
        job.name,
        job.user,
        job.gpus,
        job.submit,
        job.eligible,
        start,
        NEVER,
        "RUNNING",
        "0:0",
        nodes,
        "BeginTime" if job.restarts else "None",
        job.restarts,
    )
    if job.run_id or job.overhead:
        attempt.run_id, attempt.overhead = job.run_id, job.overhead
    ctx.attempts.append(attempt)
    return attempt


def never_started(ctx: SimContext, job: Job, cancelled_at: int = NEVER) -> None:
    """Record a job that never started: cancelled while pending (no allocation), or pending at the horizon."""
    attempt = Attempt(
        job_id=job.job_id,
        job_id_raw=job.job_id_raw,
        name=job.name,
        user=job.user,
        gpus=job.gpus,
        submit=job.submit,
        eligible=job.eligible,
        reason="BeginTime" if job.restarts else "Resources",
        restarts=job.restarts,
        run_id=job.run_id,
    )
    if cancelled_at < ctx.horizon:  # sacct shows Start = End = the cancel time
        attempt.start = attempt.end = cancelled_at
        attempt.state, attempt.no_alloc, attempt.reason = cancelled_state(ctx, job.user), True, "None"
    ctx.attempts.append(attempt)


def cancelled_state(ctx: SimContext, user: int) -> str:
    uid = USERS[user][2] if ctx.rng.random() < 0.9 else 0  # the user, or root
    return f"CANCELLED by {uid}"


def fault_ending(ctx: SimContext, attempt: Attempt, t_fail: int, node: int, index: int) -> Ending:
    """The attempt's end after fault `index` of `node`; the fault's signals are written now."""
    p, rng = ctx.params, ctx.rng
    cause = CAUSES[ctx.faults.causes[node][index]][0]
    kind = "NODE_FAIL" if cause == "node_unresponsive" else FAULT_KINDS[bisect_right(FAULT_KIND_CDF, rng.random())]
    # The job notices within seconds (NODE_FAIL) or a few minutes (the application crashes).
    end = t_fail + (int(rng.uniform(30, 90)) if kind == "NODE_FAIL" else int(rng.uniform(12, 300)))
    outside = kind == "FAILED" and rng.random() < p.outside_window_share
    if outside:  # the application hung before dying: the evidence is older than the window
        before = ATTRIBUTION_BEFORE_MINUTES
        end = t_fail + int(rng.uniform(before + 3, before + 20) * 60)
    emit_fault_signals(ctx.signals, rng, ctx.faults, node, index, kind)
    ctx.consumed.add((node, index))
    return Ending(end, (t_fail, node, index), kind, outside)


def saved_work(progress: int) -> int:
    """Work kept by checkpoints after `progress` seconds of training."""
    return progress // CKPT_INTERVAL * CKPT_INTERVAL


def finish(ctx: SimContext, job: Job, attempt: Attempt, ending: Ending) -> Job | None:
    """End `attempt` as `ending` says; return what its job submits next (a requeue or resubmission)."""
    attempt.end = ending.at
    if ending.fault is not None:
        return _finish_by_fault(ctx, job, attempt, ending)
    rng = ctx.rng
    if (crash_after := crash_loop(ctx, job)) is not None:
        attempt.state, attempt.exit_code = "REQUEUED", "1:0"
        return requeue(ctx, job, ending.at, crash_after, after_failure=False)
    if job.run_id:
        if job.work + job.overhead > MAX_TIME_LIMIT:  # the time limit: continue from the last checkpoint
            attempt.state = "TIMEOUT"
            attempt.kept = saved_work(MAX_TIME_LIMIT - job.overhead)
            return resubmit(ctx, job, ending.at, job.work - attempt.kept, after_failure=False)
        attempt.state, attempt.kept = "COMPLETED", job.work
        return None
    attempt.state = job.outcome
    if job.outcome == "FAILED":
        attempt.exit_code = USER_EXIT_CODES[int(rng.integers(len(USER_EXIT_CODES)))]
        if rng.random() < 0.15:  # the application's own GPU error: an Xid that is not the node's fault
            t = ending.at - int(rng.integers(0, 60))
            ctx.signals.xids.append(
                (
                    t,
                    attempt.nodes[0],
                    (13, 31)[rng.integers(2)],
                    int(rng.integers(8)),
                    0,
                    int(rng.integers(1000, 99999)),
                )
            )
    elif job.outcome == "OUT_OF_MEMORY":
        attempt.exit_code = "0:125"
    elif job.outcome == "CANCELLED":
        attempt.state = cancelled_state(ctx, job.user)
    elif job.outcome == "REQUEUED":
        manual_requeue(ctx, attempt)
        return requeue(ctx, job, ending.at, job.work, after_failure=False)
    return None


# Causes whose drain reason an unrelated drain next to a manual requeue may carry
UNRELATED_DRAIN_CAUSES = tuple(i for i, c in enumerate(CAUSES) if c[0] != "node_unresponsive" and c[3])


def manual_requeue(ctx: SimContext, attempt: Attempt) -> None:
    """`attempt` ended REQUEUED by a user or an admin (`scontrol requeue`), no node at fault: the
    site marks a share of these in AdminComment, and a share are followed, within the attribution
    window, by a critical drain of one of their nodes that has nothing to do with the requeue."""
    p, rng = ctx.params, ctx.requeue_rng
    by = "user" if rng.random() < 0.7 else "admin"
    marked = bool(rng.random() < p.marked_requeue_share)
    if marked:
        attempt.admin_comment = f"requeue={by}"
    drained = bool(rng.random() < p.requeue_drain_share)
    if drained:
        node = attempt.nodes[int(rng.integers(len(attempt.nodes)))]
        at = attempt.end + int(rng.integers(0, ATTRIBUTION_AFTER_MINUTES * 60 + 1))
        cause, _, _, reason, _ = CAUSES[UNRELATED_DRAIN_CAUSES[int(rng.integers(len(UNRELATED_DRAIN_CAUSES)))]]
        back = at + int(rng.uniform(0.5, 4) * 3600)
        ctx.signals.events.append((at, back, node, "DRAIN", reason.format(gpu=int(rng.integers(8)))))
        ctx.signals.critical.setdefault(node, []).append((at, cause))
    ctx.manual_requeues.append({"attempt": attempt, "by": by, "marked": marked, "drain_injected": drained})


def _finish_by_fault(ctx: SimContext, job: Job, attempt: Attempt, ending: Ending) -> Job | None:
    rng = ctx.rng
    t_fail, node, index = ending.fault
    cause = CAUSES[ctx.faults.causes[node][index]][0]
    kind = ending.kind
    attempt.state = kind
    attempt.exit_code = "0:0" if kind != "FAILED" else ("1:0", "0:6", "134:0")[rng.integers(3)]
    attempt.failed_node = node if kind == "NODE_FAIL" else -1
    window_sees_it = cause != "node_unresponsive" and not ending.outside_window
    ctx.failures.append(
        {
            "attempt": attempt,
            "cause": cause,
            "node": node,
            "failure_at": t_fail,
            "in_attribution_window": window_sees_it,
            # what the attribution rule of domain.md must find: NODE_FAIL always, FAILED/REQUEUED with evidence
            "expected_attributed": kind == "NODE_FAIL" or window_sees_it,
            "expected_cause": cause
            if (window_sees_it or (cause == "node_unresponsive" and kind == "NODE_FAIL"))
            else ("unattributed_node_failure" if kind == "NODE_FAIL" else None),
        }
    )
    if job.run_id:
        attempt.kept = saved_work(max(ending.at - attempt.start - job.overhead, 0))
        remaining = job.work - attempt.kept
        if kind == "FAILED" or (kind == "NODE_FAIL" and rng.random() < 0.5):
            return resubmit(ctx, job, ending.at, remaining, after_failure=True)
        return requeue(ctx, job, ending.at, remaining, after_failure=True)
    if kind == "REQUEUED" or (kind == "NODE_FAIL" and rng.random() < 0.5):
        return requeue(ctx, job, ending.at, job.work, after_failure=True)
    return None


def preempt(ctx: SimContext, job: Job, attempt: Attempt, at: int) -> Job:
    """End `attempt` PREEMPTED at `at`; Slurm requeues its job (PreemptMode=REQUEUE)."""
    attempt.end, attempt.state = at, "PREEMPTED"
    if job.run_id:
        attempt.kept = saved_work(max(at - attempt.start - job.overhead, 0))
        return requeue(ctx, job, at, job.work - attempt.kept, after_failure=False)
    return requeue(ctx, job, at, job.work, after_failure=False)


def requeue(ctx: SimContext, job: Job, at: int, remaining: int, after_failure: bool) -> Job:
    """Slurm requeues the same job id: a new record with a later Submit, eligible after a short BeginTime."""
    return Job(
        job_id=job.job_id,
        job_id_raw=job.job_id_raw,
        name=job.name,
        user=job.user,
        gpus=job.gpus,
        submit=at,
        eligible=at + int(ctx.rng.uniform(36, 180)),
        work=remaining,
        limit=job.limit,
        outcome="COMPLETED" if job.run_id or job.outcome == "REQUEUED" else job.outcome,
        run_id=job.run_id,
        restarts=job.restarts + 1,
        overhead=RESTART_OVERHEAD if job.run_id else 0,
        after_failure=after_failure,
        seq=ctx.next_seq(),
    )


def resubmit(ctx: SimContext, job: Job, at: int, remaining: int, after_failure: bool) -> Job:
    """The training run's launcher submits a new job (new id, same name) to continue."""
    raw = ctx.new_raw_id()
    submit = at + int(ctx.rng.uniform(*ctx.params.resubmit_delay_min) * 60)
    return Job(
        job_id=str(raw),
        job_id_raw=raw,
        name=job.name,
        user=job.user,
        gpus=job.gpus,
        submit=submit,
        eligible=submit,
        work=remaining,
        limit=job.limit,
        run_id=job.run_id,
        overhead=RESTART_OVERHEAD,
        after_failure=after_failure,
        seq=ctx.next_seq(),
    )
