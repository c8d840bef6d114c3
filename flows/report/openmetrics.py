"""A month's figures (metrics.json) as Prometheus series, in the OpenMetrics text format.

One table, SERIES, says which figure becomes which series: its name, help, labels and the value
read from metrics.json. Every writer uses it: `metrics.prom` in each report directory (no
timestamps: what node_exporter's textfile collector and the Pushgateway accept, both refusing
client-side timestamps), the Pushgateway push, and the history file of every built month with one
timestamp per sample, the month's end, which `promtool tsdb create-blocks-from openmetrics` turns
into blocks.

Conventions (Prometheus naming, checked by `promtool check metrics`): base units (hours become
`_seconds`, GPU-hours `gpu_seconds`), `_ratio` for shares, `_timestamp_seconds` for times. A
month's counts are gauges without `_total`: they do not accumulate from month to month, so they
are not counters (and promtool rejects `_total` on anything else). The node failure rate r_f keeps
the paper's unit, failures per 1000 node-days, which the help text says (promtool refuses `days`
in a name; a rate per node-second would no longer read as the report's figure). A figure that is
null in metrics.json (no exposure, no failures) has no sample, nor has a figure the month's inputs
did not measure (metrics.json `not_measured`: each series names the figures it exports, and a
sample of one named there is left out): never a 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.openmetrics.exposition import generate_latest

HOUR = 3600.0
PREFIX = "reliability_"
DEFINITIONS = ("paper", "all")  # r_f: the paper's (large jobs) and every GPU job's
RUN_SETS = ("priority", "all")  # ETTR: the highest-priority long runs, and all long runs
QUALITY_STATES = ("ok", "warning", "failed")

Sample = tuple[tuple[str, ...], float | None]  # label values after `cluster`, value (None: no sample)


@dataclass(frozen=True)
class Series:
    """One metric: `name` without the prefix, its help, its labels besides `cluster`, the samples of
    a month read from its metrics.json, and the figures they export (paths of metrics.json, as its
    `not_measured` names them; "{label}" is a label's value): no sample where one is not measured."""

    name: str
    help: str
    labels: tuple[str, ...]
    samples: Callable[[dict], Iterable[Sample]]
    figures: tuple[str, ...]

    def measured(self, metrics: dict, labels: tuple[str, ...]) -> bool:
        """Whether a sample with these label values exports only figures the month measured."""
        gaps = metrics.get("not_measured", {})
        named = dict(zip(self.labels, labels, strict=True))
        return not any(figure.format(**named) in gaps for figure in self.figures)

    @property
    def full_name(self) -> str:
        return PREFIX + self.name


def _rate(part: str) -> Callable[[dict], Iterable[Sample]]:
    return lambda m: (((d,), m["node_failure_rate"][d][part]) for d in DEFINITIONS)


def _hours(value: float | None) -> float | None:
    return None if value is None else value * HOUR


def _ettr(field: str) -> Callable[[dict], Iterable[Sample]]:
    return lambda m: (
        ((row["size_bucket"], run_set), row[field]) for run_set in RUN_SETS for row in m["ettr_vs_expected"][run_set]
    )


def _month_end(m: dict) -> float:
    return epoch_seconds(m["period"]["end"])


SERIES: tuple[Series, ...] = (
    Series(
        "period_start_timestamp_seconds",
        "Start of the period the figures cover (the month's start, or where a partial month's job records begin)",
        (),
        lambda m: [((), epoch_seconds(m["period"]["start"]))],
        ("period.start",),
    ),
    Series(
        "month_end_timestamp_seconds",
        "End of the period the figures cover (the month's end, or when a partial month's records were taken)",
        (),
        lambda m: [((), _month_end(m))],
        ("period.end",),
    ),
    Series(
        "job_attempts",
        "Job attempts of the month",
        (),
        lambda m: [((), m["totals"]["attempts"])],
        ("totals.attempts",),
    ),
    Series(
        "gpu_seconds",
        "GPU time of the month's attempts",
        (),
        lambda m: [((), _hours(m["totals"]["gpu_hours"]))],
        ("totals.gpu_hours",),
    ),
    Series(
        "infrastructure_failures",
        "Job attempts ended by an infrastructure failure in the month",
        (),
        lambda m: [((), m["totals"]["infra_failures"])],
        ("totals.infra_failures",),
    ),
    Series(
        "node_failure_rate",
        "Node failure rate r_f, failures per 1000 node-days; definition: paper (jobs above paper_min_gpus) or all",
        ("definition",),
        _rate("value"),
        ("node_failure_rate.{definition}",),
    ),
    Series(
        "node_failure_rate_lower",
        "Lower bound of r_f's exact Poisson 95% interval, failures per 1000 node-days",
        ("definition",),
        _rate("lower"),
        ("node_failure_rate.{definition}",),
    ),
    Series(
        "node_failure_rate_upper",
        "Upper bound of r_f's exact Poisson 95% interval, failures per 1000 node-days",
        ("definition",),
        _rate("upper"),
        ("node_failure_rate.{definition}",),
    ),
    Series(
        "mttf_seconds",
        "Observed mean time to failure of jobs of this size (size_gpus: the bucket's largest size)",
        ("size_gpus",),
        lambda m: [((b["size_bucket"],), _hours(b["mttf_hours"])) for b in m["mttf_by_size"]],
        ("mttf_by_size",),
    ),
    Series(
        "mttf_lower_seconds",
        "Lower bound of the observed MTTF's 95% interval (with no failure: the MTTF is at least this)",
        ("size_gpus",),
        lambda m: [((b["size_bucket"],), _hours(b["mttf_lower_hours"])) for b in m["mttf_by_size"]],
        ("mttf_by_size",),
    ),
    Series(
        "mttf_upper_seconds",
        "Upper bound of the observed MTTF's 95% interval",
        ("size_gpus",),
        lambda m: [((b["size_bucket"],), _hours(b["mttf_upper_hours"])) for b in m["mttf_by_size"]],
        ("mttf_by_size",),
    ),
    Series(
        "model_mttf_seconds",
        "The paper's model MTTF of jobs of this size: 1 / ((GPUs / GPUs per node) x r_f of the definition)",
        ("size_gpus", "definition"),
        lambda m: [
            ((b["size_bucket"], d), _hours(b["model_mttf_hours"][d])) for b in m["mttf_by_size"] for d in DEFINITIONS
        ],
        ("mttf_by_size", "node_failure_rate.{definition}"),
    ),
    Series(
        "cause_failures",
        "Infrastructure failures of the month attributed to this cause",
        ("cause",),
        lambda m: [((c["category"],), c["failures"]) for c in m["failures_by_cause"]],
        ("failures_by_cause",),
    ),
    Series(
        "ettr_ratio",
        "Mean ETTR of the long job runs of this size that ended in the month (run_set: priority or all)",
        ("size_gpus", "run_set"),
        _ettr("mean_ettr"),
        ("ettr_vs_expected",),
    ),
    Series(
        "expected_ettr_ratio",
        "E[ETTR] of the paper's model at those runs' mean size",
        ("size_gpus", "run_set"),
        _ettr("expected_ettr"),
        ("ettr_vs_expected",),
    ),
    Series(
        "ettr_job_runs",
        "Long job runs behind the ETTR figure",
        ("size_gpus", "run_set"),
        _ettr("runs"),
        ("ettr_vs_expected",),
    ),
    Series(
        "lost_gpu_seconds",
        "Lost goodput, GPU time: order first (failed attempts) or second (attempts preempted for a restart)",
        ("order",),
        lambda m: [
            (("first",), _hours(m["lost_goodput"]["first_order_gpu_hours"])),
            (("second",), _hours(m["lost_goodput"]["second_order_gpu_hours"])),
        ],
        ("lost_goodput",),
    ),
    Series(
        "lost_goodput_ratio",
        "Lost GPU time as a share of the month's GPU time",
        (),
        lambda m: [((), m["lost_goodput"]["share_of_gpu_hours"])],
        ("lost_goodput",),
    ),
    Series(
        "node_repair_seconds",
        "Time to repair a node (DOWN/DRAIN to back) of the outages begun in the month; outages: failures or all",
        ("statistic", "outages"),
        lambda m: [
            ((stat, kind), _hours(m["node_repairs"][kind][f"{stat}_hours"]))
            for kind in ("failures", "all")
            for stat in ("mean", "median")
            if "node_repairs" in m  # a month built before repair times has none
        ],
        ("node_repairs",),
    ),
    Series(
        "node_availability_ratio",
        "Share of the GPU nodes' time in the month that they were not DOWN or drained",
        (),
        lambda m: [((), m["node_repairs"]["availability"]["value"])] if "node_repairs" in m else [],
        ("node_repairs",),
    ),
    Series(
        "lemon_candidates",
        "Lemon-node candidates at the month's end",
        (),
        lambda m: [((), None if m["lemon_nodes"].get("not_measured") else len(m["lemon_nodes"]["candidates"]))],
        ("lemon_nodes",),
    ),
    Series(
        "lemon_candidate_p_value",
        "A lemon-node candidate and the p-value of its signals (the smaller, the less the fleet explains it)",
        ("node",),
        lambda m: [((c["node"],), c["p_value"]) for c in m["lemon_nodes"]["candidates"]],
        ("lemon_nodes",),
    ),
    Series(
        "data_quality_status",
        "The month's data-quality status: 1 for the status it has (ok, warning or failed), 0 for the others",
        ("status",),
        lambda m: [((s,), float(m["summary"]["data_quality"]["status"] == s)) for s in QUALITY_STATES],
        ("summary.data_quality",),
    ),
)


def epoch_seconds(naive_utc: str) -> int:
    """A metrics.json time (ISO 8601, naive UTC) as Unix seconds."""
    return int(datetime.fromisoformat(naive_utc).replace(tzinfo=UTC).timestamp())


def _families(months: list[dict], timestamps: bool) -> Iterator[Metric]:
    """Each series as one family holding every month's samples, grouped by label set and in time
    order within one (OpenMetrics wants a family's samples together, a series' in time order)."""
    for series in SERIES:
        family = GaugeMetricFamily(series.full_name, series.help, labels=("cluster", *series.labels))
        rows = []
        for metrics in months:
            at = _month_end(metrics) if timestamps else None
            for labels, value in series.samples(metrics):
                if value is not None and series.measured(metrics, labels):
                    rows.append(((metrics["cluster"], *labels), at or 0, float(value), at))
        for labels, _, value, at in sorted(rows, key=lambda row: row[:2]):
            family.add_metric(list(labels), value, timestamp=at)
        yield family


class _Months:
    """A prometheus_client collector over some months' metrics."""

    def __init__(self, months: list[dict], timestamps: bool) -> None:
        self.months, self.timestamps = months, timestamps

    def collect(self) -> Iterator[Metric]:
        return _families(self.months, self.timestamps)


def month_exposition(metrics: dict) -> bytes:
    """`metrics.prom`: the month's figures, no timestamps (the textfile collector and the
    Pushgateway refuse them; the month's end is the value of reliability_month_end_timestamp_seconds)."""
    return generate_latest(_Months([metrics], timestamps=False))


def history_exposition(months: list[dict]) -> bytes:
    """Every given month (of one or more clusters) with its samples at the month's end, for
    `promtool tsdb create-blocks-from openmetrics`."""
    return generate_latest(_Months(months, timestamps=True))


def month_collector(metrics: dict) -> _Months:
    """A collector of the month's figures (no timestamps), for prometheus_client's push_to_gateway."""
    return _Months([metrics], timestamps=False)
