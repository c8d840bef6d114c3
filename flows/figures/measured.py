"""What a figure needs to be shown, in one place: a figure its period's inputs cannot support is
"not measured", never 0. Each figure names the rules it needs in its declaration
(flows/figures/registry.py `needs`, `parts`; the most basic first, whose reason is given); the
rules (RULES) are:

- `node_source`: a source that tells of the nodes' faults (node events or health logs:
  flows/ingest/sources/registry.py NODE_SOURCES) landed for the period (`no_node_source`): without
  one nothing could have counted a fault;
- `gpu_exposure`: [analysis] min_gpu_node_days GPU node-days (`no_gpu_jobs`: none ran;
  `thin_gpu_exposure`: fewer). At zero failures over 100 node-days r_f's 95% upper bound is 36.9
  per 1000 node-days, ~5x the paper's fleet rates; below it a month without failures says nothing
  useful. `paper_exposure`: the same of the paper's own node-days (jobs above paper_min_gpus);
- `node_source_or_failures`: a node-event or health source, or [analysis] lemon_min_infra_failures
  infrastructure failures of GPU jobs (`no_node_source_few_failures`);
- `node_event_source`: a node-event source (sacctmgr events, scontrol snapshots: the source
  registry's `nodes = "events"`; `no_node_event_source`): health logs say when a node failed, not
  when it was back;
- `gpu_attempt_ended`: a GPU attempt that ended in the period (`no_gpu_jobs`: none ran;
  `no_gpu_attempt_ended`: those that ran were all still running at its end): an attempt that did
  not end cannot have ended in a failure, so a count of them would be an unknown 0.

metrics.json (docs/metrics.md "not_measured"): an unmeasured dict figure keeps its keys with null
numbers (its declaration's `keep` as they are) and says why in `not_measured`; a list figure is [];
a figure written otherwise declares how (its `unmeasured`: the totals, r_f by definition, the
breakdowns, the lemon windows; flows/figures/figure.py `Figure.written_unmeasured`);
the top-level `not_measured` maps each unmeasured figure's path to the reason, in words a reader
understands. The simulator's truth (simulator/rules.py `failed_rules`) applies the same rules and
codes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from flows.config.cluster import AnalysisConfig
from flows.figures.figure import unmeasured_dict
from flows.figures.registry import FIGURES as REGISTERED
from flows.figures.registry import needs
from flows.ingest.sources.registry import NODE_SOURCES, given_input, node_input

# every figure a rule covers, by its path in metrics.json -> the rules it needs (flows/figures/registry.py)
NEEDS = needs()
FIGURES = tuple(NEEDS)
BY_KEY = {f.key: f for f in REGISTERED}
# the inputs that tell of the nodes' faults, as a landed month's manifest names them (its inputs)
NODE_INPUTS = frozenset(given_input(kind) for kind in NODE_SOURCES)
# ... and those that tell when a node went out and when it was back (node DOWN/DRAIN events)
NODE_EVENT_INPUTS = frozenset(given_input(kind) for kind in NODE_SOURCES if node_input(kind) == "events")


@dataclass(frozen=True)
class Exposure:
    """What a period's inputs observed, as the rules need it."""

    inputs: frozenset[str]  # the inputs landed for every month of the period (manifest `sources`)
    gpu_attempts: int | None  # attempts with GPUs (None: the marts do not count them)
    gpu_node_days: float
    paper_node_days: float
    gpu_infra_failures: int  # infrastructure failures of GPU attempts
    within: str = "this month"  # the period, in words
    gpu_jobs: int | None = None  # distinct jobs with a GPU attempt (None: as many as gpu_attempts)
    gpu_ended_attempts: int | None = None  # GPU attempts that ended in the period (None: not counted)

    @property
    def node_sources(self) -> bool:
        return bool(self.inputs & NODE_INPUTS)

    @property
    def node_event_sources(self) -> bool:
        return bool(self.inputs & NODE_EVENT_INPUTS)


def exposure(
    inputs: Collection[str], totals: dict, r_f: dict, within: str = "this month", gpu_ended_attempts: int | None = None
) -> Exposure:
    """The period's Exposure from its landed inputs, its totals, its r_f (rate objects as measured)
    and its GPU attempts that ended (MTTF by size's `ended_attempts`, summed)."""
    return Exposure(
        inputs=frozenset(inputs),
        gpu_attempts=totals.get("gpu_attempts"),
        gpu_node_days=r_f["all"]["node_days"] or 0.0,
        paper_node_days=r_f["paper"]["node_days"] or 0.0,
        gpu_infra_failures=r_f["all"]["failures"] or 0,
        within=within,
        gpu_jobs=totals.get("gpu_jobs"),
        gpu_ended_attempts=gpu_ended_attempts,
    )


def _days(value: float) -> str:
    """Node-days as a reader reads them: one decimal, or two significant digits below 0.05 (a few
    minutes of GPU jobs are 0.0027 node-days, not "0.0")."""
    return f"{value:.2g}" if 0 < value < 0.05 else f"{value:,.1f}"


def _gpu_exposure(e: Exposure, params: AnalysisConfig) -> str | None:
    """The code of why the GPU-exposure figures are not measured (none when they are)."""
    if e.gpu_attempts == 0 or (e.gpu_attempts is None and not e.gpu_node_days):
        return "no_gpu_jobs"
    if e.gpu_node_days < params.min_gpu_node_days:
        return "thin_gpu_exposure"
    return None


def _gpu_attempt_ended(e: Exposure, params: AnalysisConfig) -> str | None:
    if e.gpu_attempts == 0:
        return "no_gpu_jobs"
    return "no_gpu_attempt_ended" if e.gpu_ended_attempts == 0 else None


def _paper_exposure(e: Exposure, params: AnalysisConfig) -> str | None:
    if e.paper_node_days >= params.min_gpu_node_days:
        return None
    return "no_gpu_jobs" if _gpu_exposure(e, params) == "no_gpu_jobs" else "thin_gpu_exposure"


def _node_source_or_failures(e: Exposure, params: AnalysisConfig) -> str | None:
    few = not e.node_sources and e.gpu_infra_failures < params.lemon_min_infra_failures
    return "no_node_source_few_failures" if few else None


# what a figure can need (flows/figures/registry.py names these): each returns the code of why a
# period lacks it, or None
RULES: dict[str, Callable[[Exposure, AnalysisConfig], str | None]] = {
    "gpu_attempt_ended": _gpu_attempt_ended,
    "paper_exposure": _paper_exposure,
    "gpu_exposure": _gpu_exposure,
    "node_source": lambda e, params: None if e.node_sources else "no_node_source",
    "node_source_or_failures": _node_source_or_failures,
    "node_event_source": lambda e, params: None if e.node_event_sources else "no_node_event_source",
}


def failed_rules(e: Exposure, params: AnalysisConfig) -> dict[str, str]:
    """rule -> reason code, for each rule of RULES the period's inputs fail."""
    return {rule: code for rule, check in RULES.items() if (code := check(e, params))}


def codes_of(failed: dict[str, str]) -> dict[str, str]:
    """figure path -> reason code, for each figure a failed rule leaves unmeasured: the first of its
    rules (the most basic first) that failed, in the registry's order."""
    codes = {}
    for path, rules in NEEDS.items():
        code = next((failed[rule] for rule in rules if rule in failed), None)
        if code:
            codes[path] = code
    return codes


def unmeasured_codes(e: Exposure, params: AnalysisConfig) -> dict[str, str]:
    """figure path -> reason code, for each figure the period's inputs cannot support."""
    return codes_of(failed_rules(e, params))


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


NO_NODE_SOURCE = (
    "no node-event or health source was configured (sacctmgr events, scontrol snapshots, Xid, NHC, "
    "DCGM, GCM, link or IPMI logs), so nothing counted the nodes' faults"
)
NO_NODE_EVENT_SOURCE = (
    "no node-event source was configured (sacctmgr events or scontrol snapshots), so nothing told when "
    "a node went out and when it was back"
)
# what r_f and MTTF count without a node source, though measured: the data-coverage line says it
FROM_JOB_STATES_ONLY = (
    "The node failure rate and MTTF count only the infrastructure failures the job records show (NODE_FAIL): "
    "with no node-event or health source, a job that a node fault ended as FAILED is not attributed, so the "
    "rate is a lower bound and MTTF an upper bound"
)


def reason(code: str, path: str, e: Exposure, params: AnalysisConfig) -> str:
    """Why the figure at `path` is not measured, in words a reader understands."""
    needed = f"{params.min_gpu_node_days:,.0f} needed, [analysis] min_gpu_node_days"
    if code == "no_node_source":
        return NO_NODE_SOURCE
    if code == "no_node_event_source":
        return NO_NODE_EVENT_SOURCE
    if code == "no_gpu_attempt_ended":
        running = _plural(e.gpu_attempts or 0, "GPU attempt")
        return f"no GPU attempt ended {e.within} ({running} still running at its end)"
    if code == "no_node_source_few_failures":
        if e.gpu_attempts == 0:
            return f"no node-event or health source was configured, and no GPU job ran {e.within}"
        if not e.gpu_infra_failures:
            return (
                "no node-event or health source was configured, and no GPU job ended in an infrastructure "
                f"failure {e.within} ({params.lemon_min_infra_failures:,} needed to single out a node, "
                "[analysis] lemon_min_infra_failures)"
            )
        return (
            "no node-event or health source was configured, and "
            f"{_plural(e.gpu_infra_failures, 'infrastructure failure')} of GPU jobs {e.within} "
            f"{'is' if e.gpu_infra_failures == 1 else 'are'} too few to "
            f"single out a node ({params.lemon_min_infra_failures:,} needed, [analysis] lemon_min_infra_failures)"
        )
    if path == "node_failure_rate.paper":
        if not e.paper_node_days:
            return f"no job with more than {params.paper_min_gpus:,} GPUs ran {e.within}"
        return (
            f"jobs with more than {params.paper_min_gpus:,} GPUs ran {_days(e.paper_node_days)} node-days "
            f"{e.within}: too little to measure a failure rate ({needed})"
        )
    if code == "no_gpu_jobs":
        return f"no GPU job ran {e.within}"
    counted = e.gpu_jobs if e.gpu_jobs is not None else e.gpu_attempts
    jobs = f"{_plural(counted, 'GPU job')} on " if counted is not None else ""
    return f"{jobs}{_days(e.gpu_node_days)} GPU node-days {e.within}: too little to measure a failure rate ({needed})"


def not_measured(e: Exposure, params: AnalysisConfig) -> dict[str, str]:
    """figure path -> why it is not measured, for each figure the period's inputs cannot support
    (the top-level `not_measured` of metrics.json; absent: measured)."""
    return {path: reason(code, path, e, params) for path, code in unmeasured_codes(e, params).items()}


# --- the figures as metrics.json writes them unmeasured ------------------------------------------


# the keys of a dict figure that are its parameters or words, kept as they are when it is not measured
# (each figure's `keep`: r_f's failures and node-days are what was observed, too little to bound a
# rate; the fleet's faults are unknown without a node source, its nodes and node-days are not)
KEEP = {f.key: f.keep for f in REGISTERED if f.keep}


# a change test of a period whose r_f is not measured: the earlier figure (`previous`) stays
NO_TEST = {"value": None, "change": None, "p_value": None, "significant": False}


def write_unmeasured(metrics: dict, gaps: dict[str, str]) -> dict:
    """`metrics` (a period's figures, or a month's whole metrics.json) with each figure of `gaps`
    (path -> why) written as not measured, and the top-level `not_measured` map ({}: all measured).
    What a month's metrics.json computes from an unmeasured figure goes with it: the ETTR of its job
    runs (`run_ettr`) with `ettr_vs_expected`, the tests of change with r_f."""
    result = dict(metrics)
    for path, why in gaps.items():
        name = path.split(".")[0]
        if name in result:
            result[name] = BY_KEY[name].written_unmeasured(result[name], why, gaps)
    if "ettr_vs_expected" in gaps and "run_ettr" in result:
        result["run_ettr"] = []
    if "node_failure_rate.all" in gaps and "month_over_month" in result:
        result["month_over_month"] = result["month_over_month"] | NO_TEST
        result["history"] = {
            **result["history"],
            "trailing": [
                w | {"this_month_vs_window": w["this_month_vs_window"] | NO_TEST} for w in result["history"]["trailing"]
            ],
        }
    return {**result, "not_measured": gaps}


def exposure_rate(rate: dict, definition: str, within: str, params: AnalysisConfig) -> dict:
    """An r_f of another period than the figures' own (a month of the trend, a trailing window),
    not measured below min_gpu_node_days of its own node-days (`definition`: paper or all)."""
    if (rate["node_days"] or 0.0) >= params.min_gpu_node_days or rate.get("not_measured"):
        return rate
    if not rate["node_days"]:
        ran = "no GPU job" if definition == "all" else f"no job with more than {params.paper_min_gpus:,} GPUs"
        why = f"{ran} ran {within}"
    else:
        why = (
            f"{_days(rate['node_days'])} GPU node-days {within}: too little to measure a failure rate "
            f"({params.min_gpu_node_days:,.0f} needed, [analysis] min_gpu_node_days)"
        )
    return unmeasured_dict(rate, why, KEEP["node_failure_rate"])


def trend_rates(rows: list[dict], params: AnalysisConfig) -> list[dict]:
    """Each month's r_f of a trend (a month's history.monthly, a study's monthly: rows with `month`,
    `paper` and `all`), each not measured below min_gpu_node_days of its own node-days."""
    return [
        {**row, **{d: exposure_rate(row[d], d, f"in {row['month']}", params) for d in ("paper", "all")}} for row in rows
    ]


def window_rates(
    windows: list[dict], params: AnalysisConfig, causes_measured: bool = True, repairs_gap: str | None = None
) -> list[dict]:
    """A month's trailing windows (history.trailing), their r_f not measured below min_gpu_node_days;
    a window whose r_f (all) is not measured has no rate by cause or MTTF by size either (the same
    node-days: 3 failures on 0.0027 node-days are not "1,107,692 per 1000 node-days"), nor rates by
    cause when the month's own failures by cause are not measured (`causes_measured`), nor repair
    times when the month's are not (`repairs_gap`, why)."""
    rated = []
    for w in windows:
        w = {
            **w,
            **{d: exposure_rate(w[d], d, f"over the last {w['months']} months", params) for d in ("paper", "all")},
        }
        thin = w["all"].get("not_measured") is not None
        if "by_cause" in w and (thin or not causes_measured):
            w["by_cause"] = []
        if "mttf_by_size" in w and thin:
            w["mttf_by_size"] = []
        if "node_repairs" in w and repairs_gap:  # the month's inputs told no node's outages
            w["node_repairs"] = unmeasured_dict(w["node_repairs"], repairs_gap, KEEP["node_repairs"])
        rated.append(w)
    return rated


def from_job_states_only(gaps: dict[str, str]) -> str | None:
    """The data-coverage line of a period whose r_f is measured without a node source (none else)."""
    measured_without_nodes = gaps.get("fleet_fault_rate") == NO_NODE_SOURCE and "node_failure_rate.all" not in gaps
    return FROM_JOB_STATES_ONLY if measured_without_nodes else None


def coverage(totals: dict) -> str | None:
    """The data-coverage line: the attempts without GPUs that the GPU figures leave out (none when
    the marts do not count them or there are none)."""
    cpu_only = totals.get("cpu_only_attempts")
    if not cpu_only:
        return None
    return f"{cpu_only:,} CPU-only attempt{'s are' if cpu_only != 1 else ' is'} not in the GPU figures"
