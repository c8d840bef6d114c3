"""Crash loops: GPU jobs that fail, are requeued or are preempted again and again within a period
(mart fct_period_crash_loops; docs/methodology.md "Crash loops"). The paper's worst job was requeued
35 times and preempted 548 times across more than 7,000 GPUs: each round burns GPU-hours and
scheduler time, and a loop is a job to stop or a node to drain, not a rate to average."""

from __future__ import annotations

from flows.figures.figure import Figure, Reading
from flows.figures.figure_types import Count, Real, Strict
from flows.figures.period import Mart

LOOPS = Mart(
    "fct_period_crash_loops",
    (
        *("loop_rank", "job_id", "job_name", "account", "gpus", "interruptions", "failures", "requeues"),
        *("preemptions", "gpu_hours", "min_interruptions", "loop_jobs", "loop_interruptions", "loop_gpu_hours"),
    ),
)
PERIOD_COLUMNS = ("min_interruptions", "loop_jobs", "loop_interruptions", "loop_gpu_hours")


class LoopingJob(Strict):
    loop_rank: Count
    job_id: str
    job_name: str | None
    account: str | None
    gpus: Count
    interruptions: Count
    failures: Count
    requeues: Count
    preemptions: Count
    gpu_hours: Real


class CrashLoops(Strict):
    """The jobs interrupted at least `min_interruptions` times in the period and the worst of them."""

    min_interruptions: Count | None  # the mart's threshold; null in a document written before the figure
    jobs: Count | None  # null where not measured
    interruptions: Count | None
    gpu_hours: Real | None
    worst: list[LoopingJob]
    not_measured: str | None = None


def crash_loops(reading: Reading) -> dict:
    """The period's crash loops: how many jobs, their interruptions and the GPU-hours their
    interrupted attempts ran, and the `breakdown_top` worst (most interruptions first)."""
    rows = reading.period.rows(reading.con, LOOPS, order="loop_rank")  # the period's row first when no job looped
    period = rows[0]
    return {
        "min_interruptions": period["min_interruptions"],
        "jobs": period["loop_jobs"],
        "interruptions": period["loop_interruptions"],
        "gpu_hours": period["loop_gpu_hours"],
        "worst": [
            {k: v for k, v in row.items() if k not in PERIOD_COLUMNS}
            for row in rows
            if row["loop_rank"] is not None and row["loop_rank"] <= reading.params.breakdown_top
        ],
    }


FIGURE = Figure(
    "crash_loops",
    "crash loops",
    CrashLoops,
    crash_loops,
    (
        'the GPU jobs interrupted again and again (methodology "Crash loops"; `fct_period_crash_loops`): '
        "`min_interruptions` (3; null in a document upgraded from version 3, which did not record it), "
        "`jobs`, `interruptions` and `gpu_hours` (of their interrupted attempts), and `worst[]` (at most "
        "`breakdown_top`: `loop_rank`, `job_id`, `job_name`, `account`, `gpus`, `interruptions`, `failures`, "
        "`requeues`, `preemptions`, `gpu_hours`). 0 jobs: none looped. Not measured where no GPU attempt "
        "ended (`no_gpu_jobs`, `no_gpu_attempt_ended`): a count of jobs, not a rate, it needs no more "
        "exposure"
    ),
    marts=(LOOPS.table,),
    needs=("gpu_attempt_ended",),  # a count of jobs, not a rate: any GPU attempt that ended could show one
    keep=("min_interruptions",),
    section="crash_loops",
    since=4,
)
