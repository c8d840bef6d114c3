"""A period's figures of one cluster, read from the marts: what a month's report and a study both
show (r_f, the fleet's fault rate, MTTF by size, failures by cause, ETTR against the model, lost
goodput, the accounts and partitions that lost most, the lemon nodes), each computed by one function
for any period.

A period is a row of the dbt model dim_periods (a month, a trailing window ending at a month, a
study's range); every figure's mart (models/marts/periods) is keyed by its period_id. Every count,
sum and ratio is computed once, in those marts (docs/methodology.md "Metrics"); this module reads a
period's rows and adds only what SQL should not do: exact intervals (flows/figures/rates.py) and the
paper's models (flows/figures/models.py). It never queries a staging or intermediate model and never
aggregates a mart's rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.figures.ettr import formula_is_valid
from flows.figures.figure import unmeasured_dict
from flows.figures.models import model_ettr, model_mttf_hours, model_rate
from flows.figures.rates import failure_rate, mean_interval, mttf_interval
from flows.warehouse.engines import MartReader, mart_rows


@dataclass(frozen=True)
class Mart:
    """A figure's mart (models/marts/periods): its rows of a period, the columns read."""

    table: str
    columns: tuple[str, ...]


# how the report and the figures' notes say "within the period", by kind of period
WITHIN = {"month": "this month", "trailing": "in the window", "study": "in the range"}


# A mart's rows of a period, by its period_id as dim_periods alone builds it (the arguments: `Period.key`).
OF_PERIOD = (
    "period_id = (select period_id from dim_periods where kind = ? and first_month = ? and last_month = ? "
    "and coalesce(window_months, 0) = ?)"
)


@dataclass(frozen=True)
class Period:
    """A row of dim_periods: the months first..last of a cluster's figures, of a kind (a month, a
    trailing window of `window_months` ending at `last`, a study's range)."""

    kind: str
    first: Month
    last: Month
    window_months: int | None = None

    def __post_init__(self) -> None:
        # a period is dim_periods' row of its kind and months (OF_PERIOD): one no row can be is refused
        expected = {
            "month": self.last,
            "trailing": self.last.minus(self.window_months - 1) if self.window_months else None,
        }
        if self.kind in expected and self.first != expected[self.kind]:
            raise ValueError(
                f"a {self.kind} period ending {self.last} starts at {expected[self.kind]}, not {self.first}"
            )

    @classmethod
    def of_month(cls, month: Month) -> Period:
        return cls("month", month, month)

    @classmethod
    def of_study(cls, first: Month, last: Month) -> Period:
        return cls("study", first, last)

    @classmethod
    def trailing(cls, last: Month, months: int) -> Period:
        """The window of `months` months ending at `last`."""
        return cls("trailing", last.minus(months - 1), last, months)

    @property
    def key(self) -> list:
        """The values OF_PERIOD finds the period's dim_periods row by (its period_id is dim_periods')."""
        return [self.kind, str(self.first), str(self.last), self.window_months or 0]

    def rows(self, con: MartReader, mart: Mart, order: str = "", where: str = "", args: tuple = ()) -> list[dict]:
        """The period's rows of `mart` that `where` keeps, in `order`."""
        query = f"select {', '.join(mart.columns)} from {mart.table} where {OF_PERIOD}"
        if where:
            query += f" and {where}"
        if order:
            query += f" order by {order}"
        return mart_rows(con, query, [*self.key, *args])


TOTALS = Mart(
    "fct_period_totals",
    (
        *("months_built", "attempts", "gpu_attempts", "cpu_only_attempts", "gpu_hours", "gpu_node_days"),
        *("infra_failures", "cpu_only_nodes", "open_attempts", "unknown_states"),
    ),
)
GPU_JOBS = Mart("fct_period_totals", ("gpu_jobs",))
EXPOSURE = Mart(
    "fct_period_node_failure_rate",
    (
        *("paper_failures", "paper_node_days", "all_failures", "all_node_days"),
        *("fleet_faults", "fleet_nodes", "fleet_node_days"),
    ),
)
MTTF_BY_SIZE = Mart(
    "fct_period_mttf_by_size",
    (
        *("size_bucket", "bucket_order", "min_gpus", "max_gpus", "attempts", "ended_attempts", "runtime_hours"),
        *("gpu_hours", "gpu_node_days", "infra_failures", "mttf_hours"),
    ),
)
FAILURES_BY_CAUSE = Mart(
    "fct_period_failures_by_cause",
    (
        *("cause_category", "failure_domain", "failures", "node_fail", "failed", "requeued", "node_days"),
        *("per_1000_node_days", "per_million_gpu_hours"),
    ),
)
ETTR_BY_SIZE = Mart(
    "fct_period_ettr_by_size",
    (
        *("run_set", "size_bucket", "bucket_order", "min_gpus", "max_gpus", "priority_qos", "priority_partition"),
        *("runs", "runs_from_earlier_months", "mean_gpus", "mean_ettr", "stddev_ettr", "median_ettr", "min_ettr"),
    ),
)
LOST_GOODPUT = Mart(
    "fct_period_lost_goodput",
    (
        *("lost_gpu_hours", "first_order_gpu_hours", "second_order_gpu_hours", "infra_failures"),
        *("second_order_preemptions", "share_of_gpu_hours"),
    ),
)

# what each r_f counts (docs/methodology.md "The node failure rate"), as metrics.json says it
R_F_DEFINITIONS = {
    "paper": "infra failures of attempts with > {paper_min_gpus} GPUs over their node-days",
    "all": "every infra failure of a GPU attempt over all GPU node-days",
}
# what the fleet fault rate counts (docs/methodology.md "The fleet's node fault rate"): the report,
# the study and metrics.json say it in these words
FLEET_FAULT_RATE_DEFINITION = (
    "node faults (critical health events of a node, node DOWN/DRAIN with a failure reason among them, "
    "grouped into incidents) over the node-days of every GPU node seen, busy or idle"
)


def totals(con: MartReader, period: Period) -> dict:
    """The period's totals: the months built, attempts (GPU and CPU-only), GPU-hours and node-days,
    infrastructure failures, open attempts and unknown states, CPU-only nodes."""
    (row,) = period.rows(con, TOTALS)
    return row


# r_f's keys kept as they are when it is not measured: its words, and the failures and node-days
# observed (too few to bound a rate), which are what was seen
RATE_KEEP = ("unit", "definition", "failures", "node_days")


def unmeasured_rates(r_f: dict, gaps: dict[str, str]) -> dict:
    """r_f under both definitions, each not measured that `gaps` names (before any model uses it)."""
    return {
        d: unmeasured_dict(rate, why, RATE_KEEP) if (why := gaps.get(f"node_failure_rate.{d}")) else rate
        for d, rate in r_f.items()
    }


def node_failure_rate(con: MartReader, period: Period, params: AnalysisConfig) -> dict:
    """r_f of the period under both definitions, with its interval and what each counts."""
    (row,) = period.rows(con, EXPOSURE)
    return {
        d: {
            **failure_rate(row[f"{d}_failures"], row[f"{d}_node_days"]),
            "definition": R_F_DEFINITIONS[d].format(paper_min_gpus=params.paper_min_gpus),
        }
        for d in ("paper", "all")
    }


def fleet_rate(faults: int, node_days: float, nodes: int) -> dict:
    """The fleet's node fault rate (the rate object, its `failures` the faults) with its definition."""
    return {**failure_rate(faults, node_days), "nodes": nodes, "definition": FLEET_FAULT_RATE_DEFINITION}


def fleet_fault_rate(con: MartReader, period: Period) -> dict:
    """Node faults per 1000 node-days over every GPU node of the period, with its interval: what
    published fleets report, beside r_f (which counts the faults that ended a job)."""
    (row,) = period.rows(con, EXPOSURE)
    return fleet_rate(row["fleet_faults"], row["fleet_node_days"], row["fleet_nodes"])


OPEN_ENDED = 2**31 - 1  # the top size bucket's max_gpus (seed job_size_buckets): no upper end


def bucket_gpus(bucket: dict) -> int:
    """A size bucket's representative size (`representative_gpus`) from its row."""
    return representative_gpus(bucket["min_gpus"], bucket["max_gpus"])


def representative_gpus(min_gpus: int, max_gpus: int) -> int:
    """A size bucket's representative size: its largest (its smallest for the open-ended top bucket),
    where the model's MTTF is computed and the charts place it."""
    return max_gpus if max_gpus < OPEN_ENDED else min_gpus


def mttf_by_size(buckets: list[dict], r_f: dict, gpus_per_node: int) -> list[dict]:
    """Observed MTTF per size bucket (the period's rows of MTTF_BY_SIZE) with its interval, beside the
    model's MTTF at the bucket's largest size (its smallest for the open-ended top bucket) under each r_f."""
    result = []
    for bucket in buckets:
        representative = bucket_gpus(bucket)
        model = {k: model_mttf_hours(max(representative, 1), v["value"], gpus_per_node) for k, v in r_f.items()}
        result.append(
            {**bucket, **mttf_interval(bucket["runtime_hours"], bucket["infra_failures"]), "model_mttf_hours": model}
        )
    return result


def failures_by_cause(con: MartReader, period: Period) -> list[dict]:
    """Each cause (`category`) with its failures and their rate per 1000 node-days (the mart's) with
    its interval, most failures first."""
    causes = []
    for row in period.rows(con, FAILURES_BY_CAUSE, order="failures desc, cause_category"):
        rate = failure_rate(row["failures"], row["node_days"])
        bounds = {"per_1000_node_days_lower": rate["lower"], "per_1000_node_days_upper": rate["upper"]}
        causes.append({"category": row.pop("cause_category"), **row, **bounds})
    return causes


def ettr_vs_expected(con: MartReader, period: Period, r_f: dict, params: AnalysisConfig) -> dict:
    """ETTR as the paper measured it (its Fig. 9): the long job runs that ended in the period, each
    with its whole history, by size, for every run and for the highest-priority runs, each mean with
    its interval beside E[ETTR] at the runs' mean size (this cluster's r_f, the configured checkpoint
    interval, u0, q and w_cp). The model is compared from ettr_model_min_gpus GPUs up: the paper
    finds smaller runs diverge from it; where the formula holds, and which runs were the
    highest-priority ones."""
    definition, rate = model_rate(r_f)
    gpn, ckpt = params.gpus_per_node, params.ckpt_interval_minutes
    rows = period.rows(con, ETTR_BY_SIZE, order="run_set, bucket_order, size_bucket")
    tables: dict[str, list[dict]] = {"all": [], "priority": []}
    for row in rows:
        lower, upper = mean_interval(row["mean_ettr"], row["stddev_ettr"], row["runs"])
        figure = {
            **{k: v for k, v in row.items() if k not in ("run_set", "priority_qos", "priority_partition")},
            "mean_lower": lower,
            "mean_upper": upper,
            "expected_ettr": model_ettr(row["mean_gpus"], rate, params, ckpt, params.restart_overhead_minutes)
            if rate
            else None,
            "model_applies": row["mean_gpus"] >= params.ettr_model_min_gpus,
            "formula_valid": bool(rate) and formula_is_valid(row["mean_gpus"], rate, gpn, ckpt),
        }
        tables[row["run_set"]].append(figure)
    return {
        "r_f_definition": definition,
        "r_f": rate,
        "ckpt_minutes": ckpt,
        **tables,
        "priority_qos": rows[0]["priority_qos"] if rows else None,
        "priority_partition": rows[0]["priority_partition"] if rows else None,
        "min_run_hours": params.ettr_min_run_hours,
    }


def lost_goodput(con: MartReader, period: Period, params: AnalysisConfig) -> dict:
    """The GPU-hours the period's infrastructure failures cost, with how they are estimated."""
    (row,) = period.rows(con, LOST_GOODPUT)
    return {
        **row,
        "estimator": (
            f"an estimate (the paper's): min(runtime, {params.lost_work_cap_minutes:g} min) x GPUs per infrastructure"
            " failure, plus the same for each attempt preempted within 5 min before a restart after a failure"
            " on a shared node (Slurm does not record who preempted whom)"
        ),
    }
