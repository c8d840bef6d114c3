"""Jobs waiting for a start and the attempts (sacct records) they become; times in simulated seconds."""

from __future__ import annotations

from dataclasses import dataclass

NEVER = 2**62  # a start or end beyond the simulated history
HIGH_QOS_MIN_GPUS = 256  # jobs this large run at QOS `high` and may preempt `normal` ones


@dataclass(slots=True)
class Job:
    """A submission waiting for its start: a first submission, a requeue (same id) or a resubmission."""

    job_id: str
    job_id_raw: int
    name: str
    user: int  # index into USERS
    gpus: int
    submit: int
    eligible: int
    work: int  # seconds the attempt runs if nothing interrupts it (training runs: work left)
    limit: int  # the time limit the user asked for; the scheduler plans with it
    outcome: str = "COMPLETED"  # how an uninterrupted attempt ends (training runs: by completing)
    cancel_at: int = NEVER  # the user cancels it then if it is still pending
    run_id: int = 0  # training run this job belongs to (0: none)
    restarts: int = 0  # requeues of this job id so far
    overhead: int = 0  # restart overhead paid first (a training run's restart)
    after_failure: bool = False  # restarts a job an infrastructure failure ended
    seq: int = 0

    @property
    def high_qos(self) -> bool:
        return self.gpus >= HIGH_QOS_MIN_GPUS


@dataclass(slots=True)
class Attempt:
    """One sacct record with its final state; the writers show it as it was at each dump time."""

    job_id: str
    job_id_raw: int
    name: str
    user: int
    gpus: int
    submit: int
    eligible: int
    start: int = NEVER
    end: int = NEVER
    state: str = "PENDING"
    exit_code: str = "0:0"
    nodes: tuple[int, ...] = ()
    reason: str = "None"
    restarts: int = 0
    failed_node: int = -1
    no_alloc: bool = False  # cancelled while pending
    run_id: int = 0
    overhead: int = 0  # restart overhead at the start (training runs)
    kept: int = 0  # seconds of training work this attempt kept (its checkpoints), from start + overhead
    admin_comment: str = ""  # sacct AdminComment: a site's mark of a user's or admin's requeue
    cpus: int = 0  # a CPU-only job's cores (gpus 0; a GPU job's are 12 per GPU)
