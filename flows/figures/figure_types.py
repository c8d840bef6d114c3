"""The typed figures of a period (docs/metrics.md): the classes a month's and a study's metrics.json
share (flows/figures/document.py assembles them into the two documents).

A month and a study share every figure class (`PeriodFigures`: r_f, the fleet's fault rate, MTTF by
size, failures by cause, ETTR against the model, the breakdowns, lost goodput, the lemon nodes),
under the same keys (schema version 3 unified them: flows/figures/moved_keys.py); what only one of
them shows is its own document's (`MonthDocument`, `StudyDocument`). Every class forbids a key it
does not declare, so a figure added, renamed or dropped without its class fails the write
(flows/report/render.py and study_report.py validate what they write). An unmeasured figure keeps
its keys with null numbers and says why in its own `not_measured` (flows/figures/measured.py).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, WithJsonSchema, create_model

from flows.config.cluster import AnalysisConfig

# A JSON number kept as written: an int stays an int and a float a float (a float type would write
# 30 as 30.0, changing the bytes of metrics.json); a bool is refused.
Real = Annotated[StrictInt | StrictFloat, WithJsonSchema({"type": "number"})]
Count = StrictInt


class Strict(BaseModel):
    """A block of metrics.json: every key declared, none other allowed."""

    model_config = ConfigDict(extra="forbid")


class Rate(Strict):
    """A rate: failures per 1000 node-days with its exact Poisson interval (`value` null: no exposure)."""

    value: Real | None
    lower: Real | None
    upper: Real | None
    failures: Count | None
    node_days: Real | None
    unit: str
    definition: str | None = Field(None, description="what the rate counts (a month's r_f, the fleet's fault rate)")
    not_measured: str | None = Field(None, description="why the figure is not measured (its numbers null)")


class RateGap(Strict):
    """A cluster without a row in a month of a study's side-by-side trend: not measured, with why."""

    value: None
    lower: None
    upper: None
    not_measured: str


class NodeFailureRate(Strict):
    paper: Rate
    all: Rate


class FleetFaultRate(Rate):
    """The fleet's node fault rate over every GPU node, busy or idle."""

    nodes: Count | None


class Change(Strict):
    """A rate against an earlier one: the exact conditional Poisson test of the change."""

    value: Real | None
    previous: Real | None
    change: Real | None
    p_value: Real | None
    significant: bool


class ModelMttf(Strict):
    paper: Real | None
    all: Real | None


class MttfBucket(Strict):
    """Observed MTTF of a size bucket with its interval, beside the model's under each r_f."""

    size_bucket: str
    bucket_order: Count
    min_gpus: Count
    max_gpus: Count
    attempts: Count
    ended_attempts: Count
    runtime_hours: Real
    gpu_hours: Real
    gpu_node_days: Real
    infra_failures: Count
    mttf_hours: Real | None
    mttf_lower_hours: Real | None
    mttf_upper_hours: Real | None
    model_mttf_hours: ModelMttf


class Projection(Strict):
    gpus: Count
    mttf_hours_paper: Real | None
    mttf_hours_all: Real | None


class FlagTest(Strict):
    """A test of change as the report flags it: its p-value (its change's `p_value`) Holm-adjusted
    within its family (null: nothing to test)."""

    p_adjusted: Real | None
    flagged: bool


class CauseFigure(Strict):
    """A cause's failures with their rate over all GPU node-days (`per_1000_node_days`, its exact
    interval). What a month compares it with is its document's (MonthDocument.causes_compared)."""

    category: str
    failure_domain: str
    failures: Count
    node_days: Real | None
    node_fail: Count = Field(description="failures by final state: NODE_FAIL, FAILED, REQUEUED")
    failed: Count
    requeued: Count
    per_1000_node_days: Real | None
    per_1000_node_days_lower: Real | None
    per_1000_node_days_upper: Real | None
    per_million_gpu_hours: Real | None


class EttrBucket(Strict):
    """The long job runs that ended in the period, of a size bucket, beside E[ETTR] at their mean size."""

    size_bucket: str
    bucket_order: Count
    min_gpus: Count
    max_gpus: Count
    runs: Count
    runs_from_earlier_months: Count
    mean_gpus: Real
    mean_ettr: Real | None
    mean_lower: Real | None
    mean_upper: Real | None
    stddev_ettr: Real | None
    median_ettr: Real | None
    min_ettr: Real | None
    expected_ettr: Real | None
    formula_valid: bool | None
    model_applies: bool


class EttrVsExpected(Strict):
    """ETTR as the paper measured it, for every long run and for the highest-priority runs."""

    r_f_definition: str
    r_f: Real | None
    ckpt_minutes: Real
    all: list[EttrBucket]
    priority: list[EttrBucket]
    priority_qos: str | None
    priority_partition: str | None
    min_run_hours: Real | None
    not_measured: str | None = None


class BreakdownRow(Strict):
    key: str
    rank: Count
    infra_failures: Count
    lost_gpu_hours: Real
    gpu_hours: Real
    ettr_runs: Count
    mean_ettr: Real | None


class BreakdownDimension(Strict):
    """The keys of an account or partition with the most lost GPU-hours, and how many more there are."""

    rows: list[BreakdownRow] = Field(description="the keys shown")
    not_shown: Count | None


class Breakdowns(Strict):
    top: Count | None = Field(description="how many keys are shown")
    account: BreakdownDimension
    partition: BreakdownDimension


class LemonCandidate(Strict):
    node: str
    rules: list[str]
    p_value: Real
    incident_p_value: Real | None
    repeat_p_value: Real | None
    incident_hours: Real
    failure_incidents: Count
    most_incidents_within_repeat_days: Count
    xid_cnt: Count
    out_count: Count
    tickets: Count
    multi_node_node_fails: Count
    single_node_node_fails: Count
    single_node_node_failure_rate: Real | None
    failures: list[str]


class LemonWindow(Strict):
    """The lemon-node candidates of one window with the fleet's fits they were judged against."""

    window_start: str
    window_end: str
    window_days: Count
    fleet_nodes: Count | None
    fleet_mean_incident_hours: Real | None
    fleet_incident_dispersion: Real | None
    fleet_mean_failure_incidents: Real | None
    fleet_failure_dispersion: Real | None
    repeat_threshold: Count | None
    signal_distribution: dict[str, list[list[Real]]] = Field(description="signal -> [value, share at or below it]")
    candidates: list[LemonCandidate]
    not_measured: str | None = None


class LemonNodes(LemonWindow):
    trailing: LemonWindow | None = Field(None, description="absent when lemon_trailing_days is 0")


class RepairSummary(Strict):
    """Repairs of a set of node outages, with the mean's and the median's 95% intervals (hours); every
    number null when not measured."""

    outages: Count | None
    repairs: Count | None
    still_out: Count | None
    mean_hours: Real | None
    mean_lower_hours: Real | None
    mean_upper_hours: Real | None
    median_hours: Real | None
    median_lower_hours: Real | None
    median_upper_hours: Real | None
    out_node_hours: Real | None


class CauseRepairs(RepairSummary):
    category: str
    failure_domain: str | None
    severity: str | None


class Availability(Strict):
    value: Real | None
    out_node_hours: Real | None
    fleet_node_hours: Real | None


class NodeOutTime(Strict):
    node: str
    outages: Count
    out_node_hours: Real
    longest_outage_hours: Real
    longest_outage_category: str | None


class NodeRepairs(Strict):
    """Node repair time and availability over the GPU nodes (flows/figures/repair.py)."""

    unit: str
    failures: RepairSummary
    all: RepairSummary
    by_cause: list[CauseRepairs]
    availability: Availability
    nodes_out_longest: list[NodeOutTime]
    not_measured: str | None = None


class Totals(Strict):
    """The period's counts."""

    attempts: Count
    gpu_attempts: Count
    cpu_only_attempts: Count
    gpu_hours: Real
    gpu_node_days: Real
    infra_failures: Count | None = Field(description="of GPU attempts; null where none ended (not_measured)")
    cpu_only_nodes: Count
    open_attempts: Count
    unknown_states: Count
    months_built: Count


def _number(annotation: object) -> object:
    """A config field's type as metrics.json keeps it: a float as Real (an int stays an int), a tuple a list."""
    if getattr(annotation, "__origin__", None) is tuple:
        return list[_number(annotation.__args__[0])]  # type: ignore[attr-defined]
    return Real if getattr(annotation, "__origin__", annotation) is float else annotation


# every [analysis] parameter in force (flows/config/cluster.py AnalysisConfig, its descriptions), and
# the intervals' confidence: a parameter added to the config is in the schema without a line here
Parameters = create_model(
    "Parameters",
    __base__=Strict,
    __doc__="Every parameter in force: the [analysis] section of the config and the intervals' confidence.",
    confidence=(Real, ...),
    **{
        name: (_number(field.annotation), Field(description=field.description))
        for name, field in AnalysisConfig.__pydantic_fields__.items()
    },
)


class LostGoodput(Strict):
    lost_gpu_hours: Real | None
    first_order_gpu_hours: Real | None
    second_order_gpu_hours: Real | None
    infra_failures: Count | None
    second_order_preemptions: Count | None
    share_of_gpu_hours: Real | None
    estimator: str
    not_measured: str | None = None


class JobMixRow(Strict):
    """The attempts of an outcome (a month's job mix: fct_period_outcomes)."""

    outcome: str
    attempts: Count
    gpu_hours: Real
    attempt_share: Real | None
    gpu_hours_share: Real | None


class JobMixBySizeRow(JobMixRow):
    """The attempts of an outcome in a size bucket (a study's job mix: fct_period_job_mix)."""

    size_bucket: str
    bucket_order: Count


class CauseOfMonth(Strict):
    failures: Count
    per_1000_node_days: Real | None


class MonthRates(Strict):
    """One month's r_f under both definitions (a trend's point)."""

    month: str
    paper: Rate
    all: Rate


class MonthRatesByCause(MonthRates):
    """One month's r_f and its causes (a study's cluster's months: cause -> its failures and rate)."""

    by_cause: dict[str, CauseOfMonth]


class Reproduce(Strict):
    command: str
    tool_version: str | None = Field(description="null: a study written before schema version 5 did not say it")


class Headline(Strict):
    """A headline figure as the summary gives it (flows/figures/summary.py)."""

    key: str = Field(description="the figure it shows (flows/figures/summary.py HEADLINE_FIGURES)")
    label: str
    value: Real | None
    unit: str
    format: str
    lower: Real | None = None
    upper: Real | None = None
    previous: Real | None = None
    change: Real | None = None
    p_value: Real | None = None
    significant: bool | None = None
    # set on a figure compared with the previous month (its `previous` null when none is built): the
    # templates show the comparison where a figure carries it
    trend: str | None = None
    not_measured: str | None = None
