"""The jobs users submit: sizes and runtimes shaped like the paper's RSC-1, training runs, arrays, outcomes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from simulator.catalog import USERS
from simulator.params import SimParams
from simulator.records import Job

# GPUs per job and their probabilities. With the runtimes below: ~45% of jobs on 1 GPU, >90% below a
# node, and most of the GPU-hours in jobs of 256+ GPUs (paper.md §10).
SIZE_CHOICES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096])
SIZE_WEIGHTS = np.array([0.45, 0.20, 0.26, 0.06, 0.012, 0.008, 0.005, 0.003, 0.0015, 0.0008, 0.0004, 0.00015, 0.00005])
TRAINING_MIN_GPUS = 64  # jobs this large are training runs that resubmit themselves after failures
# Outcome mix of attempts that no node failure ends (paper Fig. 3; CANCELLED takes the rest).
OUTCOMES = ("COMPLETED", "FAILED", "PREEMPTED", "REQUEUED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED")
OUTCOME_WEIGHTS = np.array([0.60, 0.24, 0.10, 0.02, 0.006, 0.001, 0.033])
USER_EXIT_CODES = ("1:0", "2:0", "0:9", "0:11", "127:0", "0:6")
MAX_TIME_LIMIT = 7 * 86400
MIN_RUN_BEFORE_PREEMPTION = 2 * 3600  # the preemption guarantee (paper.md §3)
LOGNORMAL_SIGMA = 1.6
TRAINING_MEDIAN_HOURS = 24.0


@dataclass
class TrainingRun:
    """A training run: a chain of jobs (same name) that continues from checkpoints until its work is done."""

    run_id: int
    name: str
    user: str
    gpus: int
    work_seconds: int


@dataclass
class Workload:
    jobs: list[Job]  # in submit order
    runs: dict[int, TrainingRun]
    next_raw_id: int  # the next free job id


def allowed_sizes(max_gpus: int) -> tuple[np.ndarray, np.ndarray]:
    """The sizes a cluster of `max_gpus` GPUs (per pool) runs, and their probabilities."""
    allowed = SIZE_CHOICES <= max(max_gpus // 2, 1)
    return SIZE_CHOICES[allowed], SIZE_WEIGHTS[allowed] / SIZE_WEIGHTS[allowed].sum()


def mean_gpu_hours(sizes: np.ndarray, weights: np.ndarray, duration_scale: float) -> np.ndarray:
    """Expected GPU-hours per submission of each size (the weights included), before outcomes."""
    median = np.where(sizes < 8, 0.1, 0.75) * duration_scale
    hours = np.minimum(median * math.exp(LOGNORMAL_SIGMA**2 / 2), MAX_TIME_LIMIT / 3600)
    hours = np.where(sizes >= TRAINING_MIN_GPUS, TRAINING_MEDIAN_HOURS * duration_scale * math.exp(0.5), hours)
    return weights * sizes * hours


def draw_workload(
    params: SimParams, rng: np.random.Generator, horizon: int, capacity_gpus: int, max_job_gpus: int
) -> Workload:
    """Submissions over [0, horizon) whose run time (the work actually submitted) is `utilization` of
    `capacity_gpus` over the horizon."""
    p = params
    sizes, weights = allowed_sizes(max_job_gpus)
    budget = p.utilization * capacity_gpus * horizon  # GPU-seconds
    expected = float(mean_gpu_hours(sizes, weights, p.duration_scale).sum()) * 3600
    n = max(16, int(budget / expected * 1.3) + 16)
    gpus = rng.choice(sizes, n, p=weights)
    training = gpus >= TRAINING_MIN_GPUS
    median = np.where(gpus < 8, 0.1, 0.75) * p.duration_scale * 3600
    work = np.clip(rng.lognormal(np.log(median), LOGNORMAL_SIGMA), 60, MAX_TIME_LIMIT)
    median_run = TRAINING_MEDIAN_HOURS * p.duration_scale * 3600
    work[training] = np.clip(rng.lognormal(np.log(median_run), 1.0, int(training.sum())), 2 * 3600, 21 * 86400)
    work = work.astype(np.int64)
    outcome = rng.choice(len(OUTCOMES), n, p=OUTCOME_WEIGHTS / OUTCOME_WEIGHTS.sum())
    outcome[training] = 0  # training runs end by completing, by failures, or at the time limit
    fraction = rng.uniform(0.02, 1.0, n)
    runs_for = _planned_runtime(work, outcome, fraction, training)
    # The prefix of submissions whose run time fills the budget.
    count = int(np.searchsorted(np.cumsum(runs_for * gpus), budget)) + 1
    count = min(count, n)
    gpus, work, outcome, fraction, runs_for, training = (
        a[:count] for a in (gpus, work, outcome, fraction, runs_for, training)
    )
    submit = _arrivals(rng, horizon, training, runs_for * gpus)
    order = np.argsort(submit, kind="stable")
    submit, gpus, work, outcome, fraction, runs_for, training = (
        a[order] for a in (submit, gpus, work, outcome, fraction, runs_for, training)
    )
    users = rng.integers(len(USERS), size=count)
    in_array = (gpus[:count] == 1) & (rng.random(count) < p.array_share)
    limits = _time_limits(runs_for, outcome, rng.uniform(1.2, 3.0, count), training).tolist()
    jobs: list[Job] = []
    runs: dict[int, TrainingRun] = {}
    next_id = 1001
    array: tuple[Job, int, int, int] | None = None  # (first task, master id, task index, tasks left)
    kinds = [(account, f"{account}_train_", f"{account}_exp_") for _, account, _ in USERS]
    columns = (gpus, submit, runs_for, users, outcome, training, in_array, fraction, limits, work)
    for i, (g, at, runs_i, u, o, train, arrayed, frac, limit, work_i) in enumerate(
        zip(*(c if isinstance(c, list) else c.tolist() for c in columns), strict=True)
    ):
        state = OUTCOMES[o]
        if not (train or arrayed or array):  # most jobs: their own id
            job = Job(
                str(next_id), next_id, f"{kinds[u][1 if g >= 8 else 2]}{i % 97}", u, g, at, at, runs_i, limit, state
            )
            next_id += 1
            if state == "CANCELLED" and frac < 0.3:
                job.cancel_at = at + int(frac * 3600)
            jobs.append(job)
            continue
        job = Job("", 0, f"{kinds[u][1 if g >= 8 else 2]}{i % 97}", u, g, at, at, runs_i, limit, state)
        if train:
            run_id = len(runs) + 1
            job.name = f"{kinds[u][0]}_pretrain_{run_id}"
            job.run_id, job.work = run_id, work_i
            runs[run_id] = TrainingRun(run_id, job.name, USERS[u][0], g, work_i)
        elif array is None and arrayed:
            job.name = f"{kinds[u][0]}_sweep_{next_id}"
            array = (job, next_id, 0, int(rng.integers(2, 11)))
            next_id += 1
        if array is not None and not train:
            first, master, task, left = array
            if task > 0:  # later tasks share the first task's size, submit time, user and name
                job.gpus, job.submit, job.eligible, job.user, job.name = (
                    first.gpus,
                    first.submit,
                    first.eligible,
                    first.user,
                    first.name,
                )
            job.job_id = f"{master}_{task}"
            if left == 1:  # the last task of an array keeps the master's id as JobIDRaw
                job.job_id_raw = master
                array = None
            else:
                job.job_id_raw = next_id
                next_id += 1
                array = (first, master, task + 1, left - 1)
        else:
            job.job_id_raw = next_id
            job.job_id = str(next_id)
            next_id += 1
        if state == "CANCELLED" and frac < 0.3:  # cancelled while pending, unless it starts first
            job.cancel_at = job.submit + int(frac * 3600)
        jobs.append(job)
    jobs.sort(key=attrgetter("submit", "job_id_raw"))
    return Workload(jobs, runs, next_id)


def _arrivals(rng: np.random.Generator, horizon: int, training: np.ndarray, load: np.ndarray) -> np.ndarray:
    """Submit times: uniform for most jobs. Training runs, which hold most GPU-hours, are planned at a
    steady pace of GPU-hours (in random order, each after the previous one's share of the horizon, as
    teams plan their runs against their allocation); the `gpu` partition submits each when the runs
    in flight leave room for it (closed loop), since heavy-tailed runs still overlap beyond the pool."""
    submit = rng.integers(0, horizon, len(training))
    runs = rng.permutation(np.flatnonzero(training))
    if len(runs):
        share = load[runs] / load[runs].sum() * horizon
        jitter = rng.uniform(-0.5, 0.5, len(runs)) * np.minimum(share, 86400)
        submit[runs] = np.clip(np.cumsum(share) - share + jitter, 0, horizon - 1).astype(np.int64)
    return submit


def _planned_runtime(work: np.ndarray, outcome: np.ndarray, fraction: np.ndarray, training: np.ndarray) -> np.ndarray:
    """Seconds each submission runs if nothing interrupts it: the whole work for COMPLETED and TIMEOUT
    (and training runs), a fraction of it for other outcomes, at least 2 h for PREEMPTED ones."""
    names = np.array(OUTCOMES)[outcome]
    full = np.isin(names, ("COMPLETED", "TIMEOUT")) | training
    runtime = np.where(full, work, (work * fraction).astype(np.int64))
    runtime = np.where((names == "PREEMPTED") & ~training, np.maximum(runtime, MIN_RUN_BEFORE_PREEMPTION), runtime)
    return np.maximum(runtime, 1)


def _time_limits(runtime: np.ndarray, outcome: np.ndarray, slack: np.ndarray, training: np.ndarray) -> np.ndarray:
    """The time limits asked for: 7 days for training runs, the run time for TIMEOUT, else a rounded
    overestimate of the run time (as users ask), at most 7 days."""
    asked = np.minimum(MAX_TIME_LIMIT, np.maximum(runtime, np.ceil(runtime * slack / 600).astype(np.int64) * 600))
    asked = np.where(outcome == OUTCOMES.index("TIMEOUT"), runtime, asked)
    return np.where(training, MAX_TIME_LIMIT, asked)
