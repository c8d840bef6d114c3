"""The typed answers of `explain` and `node`: what --json writes, what the text and the archive's
pages format. Times are naive UTC, as the warehouse holds them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

EXPLANATION_VERSION = 1  # the --json documents' layout; raised when a key changes meaning or goes


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Evidence(Answer):
    """A health or node event on one of an attempt's nodes near its end."""

    node: str
    at: datetime
    source: str  # fct_health_events.source: xid, nhc, dcgm, slurm_event, ...
    what: str  # the event as its log gave it: "Xid 79", "DRAIN: NHC: check_hw_ib ...", ...
    category: str
    severity: str  # critical events are the attribution's candidates; others are shown, never chosen
    seconds_before_end: int  # negative: after the attempt ended
    in_window: bool  # inside the attribution window
    chosen: bool  # the event the attribution named as the cause


class EvidenceWindow(Answer):
    """The attribution window of an ended attempt and what its nodes' logs held in it."""

    window_start: datetime
    window_end: datetime
    minutes_before: int
    minutes_after: int
    node_sources: list[str]  # the health and node sources landed for the attempt's month
    not_measured: str | None  # why nothing could be found (no node source landed), else None
    events: list[Evidence]


class Preemption(Answer):
    """An attempt of another job preempted to make room for this job's restart (second order)."""

    job_id_raw: str
    gpus: int
    preempted_at: datetime
    lost_gpu_hours: float


class LemonMark(Answer):
    """A node of the attempt that its month's report listed as a lemon-node candidate."""

    node: str
    window: str  # "own" (the month's own lemon window) or "trailing"
    rules: list[str]
    p_value: float


class AttemptAnswer(Answer):
    attempt_id: str
    job_id: str
    job_id_raw: str
    job_name: str | None
    user_name: str | None
    partition: str | None
    months: list[str]  # every month the attempt touches; its outcome is its end month's
    nodes: list[str]
    host_list: str | None  # the nodes as Slurm folded them (NodeList)
    n_nodes: int
    gpus: int
    size_bucket: str
    submit_at: datetime | None
    start_at: datetime | None
    end_at: datetime | None
    slurm_state: str
    exit_code: int | None
    exit_signal: int | None
    outcome: str
    rule: str  # why the taxonomy gave that outcome, in words
    cause_category: str | None
    failure_domain: str | None
    evidence: EvidenceWindow | None  # None: not a candidate for attribution (its state rules it out)
    gpu_hours: float
    lost_gpu_hours: float | None  # first order (an infrastructure failure's capped lost work), else None
    restart_preempted: list[Preemption]  # second order: what this job's restart preempted
    preempted_by_restart: str | None  # this attempt was preempted for another job's restart (its JobIDRaw)
    lemon_candidates: list[LemonMark]
    source: str  # the job-record file and line it was read from


class JobAnswer(Answer):
    explanation_version: int = EXPLANATION_VERSION
    cluster: str
    job: str  # as asked
    months_searched: list[str]  # the months built, or --month's, or a page's up to its month
    attempts: list[AttemptAnswer]


class Fault(Answer):
    at: datetime
    last_event_at: datetime
    category: str
    source: str
    critical_events: int


class Outage(Answer):
    out_at: datetime
    back_at: datetime | None  # None: still out when the month's records were dumped
    state: str
    reason: str | None
    category: str
    repair_hours: float | None


class NodeFailure(Answer):
    attempt_id: str
    job_id: str
    failed_at: datetime
    cause_category: str
    gpus: int
    n_nodes: int
    size_bucket: str


class LemonSignals(Answer):
    """The node's lemon signals over its month's own window, against that window's thresholds."""

    window: str
    window_start: datetime
    window_end: datetime
    incident_hours: int
    min_incident_hours: int  # lemon_min_incidents
    fleet_mean_incident_hours: float | None
    failure_incidents: int
    most_incidents_within_repeat_days: int
    repeat_days: int
    repeat_threshold: int | None
    xid_cnt: int
    out_count: int
    tickets: int
    candidate: bool
    rules: list[str]
    p_value: float | None


class NodeMonth(Answer):
    month: str
    node_sources: list[str]
    not_measured: str | None  # why its faults and outages are unknown, else None
    faults: list[Fault]
    outages: list[Outage]
    failures: list[NodeFailure]
    lemon: list[LemonSignals]  # its own window, then the trailing one; [] when the report had none


class NodeAnswer(Answer):
    explanation_version: int = EXPLANATION_VERSION
    cluster: str
    node: str
    is_gpu_node: bool
    first_seen: str | None
    last_seen: str | None
    months_searched: list[str]  # the months built, or --month's, or a page's up to its month
    months: list[NodeMonth]
