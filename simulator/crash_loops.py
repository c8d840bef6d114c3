"""Crash loops: the jobs that fall into one (a share of those that end on their own, requeued 3-40
times, a few minutes each round, as Slurm's RequeueExit does to a job that crashes at start), and
the truth of a month's loops as the pipeline must count them (docs/methodology.md "Crash loops")."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simulator.params import MonthWindow

if TYPE_CHECKING:
    from simulator.history import History
    from simulator.lifecycle import SimContext
    from simulator.records import Job
    from simulator.truth import AttemptColumns

INTERRUPTED = ("FAILED", "NODE_FAIL", "BOOT_FAIL", "REQUEUED", "PREEMPTED")
CRASH_LOOP_MIN_INTERRUPTIONS = 3


def crash_loop(ctx: SimContext, job: Job) -> int | None:
    """Whether `job`'s attempt crashes into a requeue as a round of a crash loop, and then the
    seconds its next attempt runs before it crashes again: a share of the jobs (`crash_loop_share`)
    that end on their own loop 3-40 times; the last round ends as the job would have. Training runs
    do not loop (their launcher resubmits)."""
    left = ctx.crash_loops.get(job.job_id_raw)
    if left is None:
        share = ctx.params.crash_loop_share
        if job.run_id or job.restarts or not share or ctx.loop_rng.random() >= share:
            return None
        left = int(ctx.loop_rng.integers(3, 41))
    if left == 0:
        return None
    ctx.crash_loops[job.job_id_raw] = left - 1
    return int(ctx.loop_rng.integers(60, 1200))


def crash_loop_truth(history: History, w: MonthWindow, columns: AttemptColumns) -> dict:
    """The month's crash loops: each job whose attempts ended failed, requeued or preempted (as the
    month's dump shows them ended) at least CRASH_LOOP_MIN_INTERRUPTIONS times in the month, with
    those counts and the GPU-hours of those attempts inside the month: `min_interruptions`, `jobs`,
    `interruptions`, `gpu_hours` and `by_job` (job id -> `interruptions`, `failures`, `requeues`,
    `preemptions`, `gpus`, `gpu_hours`)."""
    ended = columns.in_dump(w) & (columns.end >= w.start) & (columns.end < w.end) & (columns.end <= w.as_of)
    runtime = columns.runtime_in(w)
    jobs: dict[int, dict] = {}
    for i in np.flatnonzero(ended).tolist():
        a = history.ctx.attempts[i]
        if a.state not in INTERRUPTED:
            continue
        counts = dict.fromkeys(("interruptions", "failures", "requeues", "preemptions"), 0)
        job = jobs.setdefault(a.job_id_raw, {"job_id": a.job_id, "gpus": a.gpus, "gpu_hours": 0.0, **counts})
        job["interruptions"] += 1
        kind = {"REQUEUED": "requeues", "PREEMPTED": "preemptions"}.get(a.state, "failures")
        job[kind] += 1
        job["gpu_hours"] += float(runtime[i]) * a.gpus / 3600
    loops = {job.pop("job_id"): job for job in jobs.values() if job["interruptions"] >= CRASH_LOOP_MIN_INTERRUPTIONS}
    return {
        "min_interruptions": CRASH_LOOP_MIN_INTERRUPTIONS,
        "jobs": len(loops),
        "interruptions": sum(j["interruptions"] for j in loops.values()),
        "gpu_hours": sum(j["gpu_hours"] for j in loops.values()),
        "by_job": loops,
    }
