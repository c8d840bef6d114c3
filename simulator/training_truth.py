"""The ground truth of the training runs: per month, with their ETTR as the pipeline measures it,
and over their whole life."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from simulator.history import History
from simulator.lifecycle import SimContext
from simulator.params import MonthWindow
from simulator.records import NEVER, Attempt
from simulator.rules import CKPT_INTERVAL_MINUTES, RESTART_OVERHEAD_MINUTES

# The work an interruption loses, at most: the restart overhead and, on average, half a checkpoint interval
LOST_CAP = int((RESTART_OVERHEAD_MINUTES + CKPT_INTERVAL_MINUTES / 2) * 60)


def kept_interval(a: Attempt, horizon: int) -> tuple[int, int]:
    """When the attempt did the training work it kept: from its start plus the restart overhead, for
    the work its checkpoints saved (all progress for one still running at the horizon)."""
    begin = a.start + a.overhead
    if a.start >= NEVER or a.no_alloc:
        return begin, begin
    if a.end >= NEVER:
        return begin, max(begin, horizon)
    return begin, begin + a.kept


def is_interruption(a: Attempt, attributed: bool) -> bool:
    """An attempt the pipeline counts as an interruption of its job run."""
    return a.state in ("NODE_FAIL", "PREEMPTED", "REQUEUED") or (a.state == "FAILED" and attributed)


def month_training_runs(
    history: History,
    w: MonthWindow,
    training: np.ndarray,  # shown attempts of training runs
    runtime: np.ndarray,
    queue: np.ndarray,
    false_positives: list[dict],
) -> list[dict]:
    ctx = history.ctx
    attributed = {id(f["attempt"]) for f in ctx.failures if f["expected_attributed"]}
    attributed |= {(f["job_id_raw"], f["submit"]) for f in false_positives}
    by_run: dict[int, list[int]] = defaultdict(list)
    for i in np.flatnonzero(training).tolist():
        if ctx.attempts[i].run_id:
            by_run[ctx.attempts[i].run_id].append(i)
    if history.run_life is None:
        history.run_life = _run_life(ctx)
    life = history.run_life
    result = []
    for run_id in sorted(by_run):
        rows = sorted(by_run[run_id], key=lambda i: (ctx.attempts[i].submit, ctx.attempts[i].job_id_raw))
        run = ctx.runs[run_id]
        job_ids: list[str] = []
        lost = productive = interruptions = 0
        for i in rows:
            a = ctx.attempts[i]
            if a.job_id not in job_ids:
                job_ids.append(a.job_id)
            key = (str(a.job_id_raw), history.clock.text(a.submit))
            if w.start <= a.end < w.end and is_interruption(a, id(a) in attributed or key in attributed):
                interruptions += 1
                lost += min(int(runtime[i]), LOST_CAP)
            begin, end = kept_interval(a, ctx.horizon)
            productive += max(0, min(end, w.end) - max(begin, w.start))
        run_seconds = int(runtime[rows].sum())
        queue_seconds = int(queue[rows].sum())
        wall = run_seconds + queue_seconds
        first_eligible, last_end, completed_at = life[run_id]
        result.append(
            {
                "run_id": run_id,
                "name": run.name,
                "user": run.user,
                "gpus": run.gpus,
                "job_ids": job_ids,
                "first_job_id_raw": str(ctx.attempts[rows[0]].job_id_raw),
                "attempts": len(rows),
                "runtime_seconds": run_seconds,
                "queue_seconds": queue_seconds,
                "interruptions": interruptions,
                "lost_seconds": lost,
                "ettr": (run_seconds - lost) / wall if wall else None,
                "productive_seconds": productive,
                "realised_ettr": productive / wall if wall else None,
                "completed": completed_at < w.end,
                "crosses_month_start": first_eligible < w.start,
                "crosses_month_end": last_end >= w.end,
            }
        )
    return result


def _run_life(ctx: SimContext) -> dict[int, tuple[int, int, int]]:
    """Per training run: its first eligible time, its last end (NEVER if still going) and when it completed."""
    life: dict[int, list[int]] = {}
    for a in ctx.attempts:
        if a.run_id:
            first, last, done = life.setdefault(a.run_id, [NEVER, 0, NEVER])
            end = a.end if a.start < NEVER else NEVER
            life[a.run_id] = [min(first, a.eligible), max(last, end), a.end if a.state == "COMPLETED" else done]
    return {k: (v[0], v[1], v[2]) for k, v in life.items()}


def whole_training_runs(history: History) -> list[dict]:
    ctx = history.ctx
    per_run: dict[int, list[Attempt]] = defaultdict(list)
    for a in ctx.attempts:
        if a.run_id:
            per_run[a.run_id].append(a)
    result = []
    for run_id in sorted(per_run):
        attempts = sorted(per_run[run_id], key=lambda a: (a.submit, a.job_id_raw))
        run = ctx.runs[run_id]
        job_ids: list[str] = []
        for a in attempts:
            if a.job_id not in job_ids:
                job_ids.append(a.job_id)
        started = [a for a in attempts if a.start < NEVER and not a.no_alloc]
        runtime = sum(min(a.end, ctx.horizon) - a.start for a in started)
        queue = sum(min(a.start, ctx.horizon) - a.eligible for a in attempts)
        productive = sum(max(0, e - b) for b, e in (kept_interval(a, ctx.horizon) for a in started))
        result.append(
            {
                "run_id": run_id,
                "name": run.name,
                "user": run.user,
                "gpus": run.gpus,
                "work_hours": run.work_seconds / 3600,
                "job_ids": job_ids,
                "attempts": len(attempts),
                "runtime_seconds": runtime,
                "queue_seconds": queue,
                "productive_seconds": productive,
                "completed": any(a.state == "COMPLETED" for a in attempts),
            }
        )
    return result
