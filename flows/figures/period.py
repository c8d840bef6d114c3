"""A period's figures of one cluster, read from the marts: what a month's report and a study both
show (r_f, the fleet's fault rate, MTTF by size, failures by cause, ETTR against the model, the
accounts and partitions that lost most, the lemon nodes), each computed by one function for any
period.

Every count, sum and ratio is computed once, in the dbt marts (models/marts, models/study;
docs/methodology.md "Metrics"); this module reads their rows and adds only what SQL should not do:
exact intervals (flows/figures/rates.py) and the paper's models (flows/figures/models.py). It never
queries a staging or intermediate model and never aggregates a mart's rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass

from flows.core.config import AnalysisConfig
from flows.core.months import Month
from flows.figures.ettr import formula_is_valid
from flows.figures.lemons import lemon_candidates
from flows.figures.measured import exposure, not_measured, unmeasured_rates, write_unmeasured
from flows.figures.models import model_ettr, model_mttf_hours, model_rate, projections
from flows.figures.rates import CONFIDENCE, failure_rate, mean_interval, mttf_interval
from flows.figures.repair import node_repairs
from flows.warehouse.engines import MartReader


@dataclass(frozen=True)
class Mart:
    """A figure's mart for a month (its rows `where month = ?`) and for a study (dbt builds it for
    the study's range alone), the columns both carry and those only one of them does."""

    monthly: str
    study: str
    columns: tuple[str, ...]
    monthly_only: tuple[str, ...] = ()
    study_only: tuple[str, ...] = ()


@dataclass(frozen=True)
class Period:
    """The months first..last of a cluster's figures and the marts they are read from: a month's
    report reads the monthly marts' rows of its month (first == last); a study reads the marts dbt
    builds for its range (dbt_project/models/study), also when the range is one month. The two
    metrics.json carry what their marts carry, so `monthly` also decides their shape."""

    first: Month
    last: Month
    monthly: bool

    @property
    def period_id(self) -> str:
        """The period's row in dim_periods."""
        return f"month:{self.last}" if self.monthly else f"study:{self.first}:{self.last}"

    @classmethod
    def of_month(cls, month: Month) -> Period:
        return cls(month, month, monthly=True)

    @classmethod
    def of_study(cls, first: Month, last: Month) -> Period:
        return cls(first, last, monthly=False)

    def rows(self, con: MartReader, mart: Mart, order: str = "", where: str = "", args: tuple = ()) -> list[dict]:
        """The period's rows of `mart` that `where` keeps, in `order`, with the columns of its kind of mart."""
        if self.monthly:
            table, columns, conditions = mart.monthly, mart.columns + mart.monthly_only, ["month = ?"]
            args = (str(self.last), *args)
        else:
            table, columns, conditions = mart.study, mart.columns + mart.study_only, []
        if where:
            conditions.append(where)
        query = f"select {', '.join(columns)} from {table}"
        if conditions:
            query += " where " + " and ".join(conditions)
        if order:
            query += f" order by {order}"
        return mart_rows(con, query, list(args))


_RATES = ("paper_failures", "paper_node_days", "all_failures", "all_node_days")
_FLEET = ("fleet_faults", "fleet_nodes", "fleet_node_days")
_LOST = ("lost_gpu_hours", "first_order_gpu_hours", "second_order_gpu_hours", "second_order_preemptions")
TOTALS = Mart(
    "fct_month_totals",
    "fct_study_totals",
    ("attempts", "gpu_attempts", "cpu_only_attempts", "gpu_hours", "gpu_node_days", "infra_failures", "cpu_only_nodes"),
    monthly_only=("open_attempts", "unknown_states"),
    study_only=("from_month", "to_month", "months_built", *_RATES, *_FLEET, *_LOST, "lost_share_of_gpu_hours"),
)
EXPOSURE = Mart("fct_node_failure_rate_monthly", "fct_study_totals", (*_RATES, *_FLEET))
MTTF_BY_SIZE = Mart(
    "fct_mttf_by_size_monthly",
    "fct_study_mttf_by_size",
    (
        *("size_bucket", "bucket_order", "min_gpus", "max_gpus", "attempts", "runtime_hours", "gpu_hours"),
        *("gpu_node_days", "infra_failures", "mttf_hours"),
    ),
    monthly_only=("ended_attempts",),
)
FAILURES_BY_CAUSE = Mart(
    "fct_failures_by_cause_monthly",
    "fct_study_failures_by_cause",
    ("cause_category", "failure_domain", "failures", "node_days", "per_1000_node_days", "per_million_gpu_hours"),
    monthly_only=("node_fail", "failed", "requeued"),
)
ETTR_BY_SIZE = Mart(
    "fct_ettr_by_size_ended_monthly",
    "fct_study_ettr_by_size",
    (
        *("run_set", "size_bucket", "min_gpus", "max_gpus", "runs", "mean_gpus", "mean_ettr", "stddev_ettr"),
        *("median_ettr", "min_ettr"),
    ),
    monthly_only=("priority_qos", "priority_partition", "runs_from_earlier_months"),
    study_only=("bucket_order",),
)
BREAKDOWNS = Mart(
    "fct_breakdowns_monthly",
    "fct_study_breakdowns",
    ("key", "rank", "infra_failures", "lost_gpu_hours", "gpu_hours", "ettr_runs", "mean_ettr"),
    study_only=("dimension",),
)

# what each r_f counts (docs/methodology.md "The node failure rate"), as a month's metrics.json says it
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


def period_figures(con: MartReader, period: Period, params: AnalysisConfig, inputs: Collection[str]) -> dict:
    """The figures a month's report and a study both show of the cluster's period, each only where
    the period's `inputs` (those landed for every month of it) and exposure measured it
    (flows/figures/measured.py): an unmeasured one is null or [] and named in `not_measured`."""
    period_totals = totals(con, period)
    r_f = node_failure_rate(con, period, params)
    seen = exposure(inputs, period_totals, r_f, within="this month" if period.monthly else "in the range")
    gaps = not_measured(seen, params)
    r_f = unmeasured_rates(r_f, gaps)  # before the models computed from it
    figures = {
        "parameters": {**dataclasses.asdict(params), "confidence": CONFIDENCE},
        "totals": period_totals,
        "node_failure_rate": r_f,
        "fleet_fault_rate": fleet_fault_rate(con, period),
        "mttf_by_size": mttf_by_size(con, period, r_f, params.gpus_per_node),
        "projections": projections(r_f, params),
        "failures_by_cause": failures_by_cause(con, period),
        "ettr_vs_expected": ettr_vs_expected(con, period, r_f, params),
        "lemon_nodes": lemon_candidates(con, period.last, params),
        "breakdowns": breakdowns(con, period, params.breakdown_top),
        "node_repairs": node_repairs(con, period.period_id),
    }
    return write_unmeasured(figures, gaps)


# the attempts with and without GPUs and the GPU node-days (issue 42), in the totals marts once built
GPU_TOTALS = ("gpu_attempts", "cpu_only_attempts", "gpu_node_days")


def totals(con: MartReader, period: Period) -> dict:
    """The period's totals, with GPU_TOTALS where its mart has them (a warehouse built before them has not)."""
    (row,) = period.rows(con, TOTALS)
    table = TOTALS.monthly if period.monthly else TOTALS.study
    built = {d[0] for d in con.execute(f"select * from {table} limit 0", []).description}
    if present := tuple(c for c in GPU_TOTALS if c in built and c not in row):
        (gpu,) = period.rows(con, Mart(TOTALS.monthly, TOTALS.study, present))
        row |= gpu
    return row


def node_failure_rate(con: MartReader, period: Period, params: AnalysisConfig) -> dict:
    """r_f of the period under both definitions, with its interval (a month's with what each counts)."""
    (row,) = period.rows(con, EXPOSURE)
    rates = {d: failure_rate(row[f"{d}_failures"], row[f"{d}_node_days"]) for d in ("paper", "all")}
    if period.monthly:
        for d, rate in rates.items():
            rate["definition"] = R_F_DEFINITIONS[d].format(paper_min_gpus=params.paper_min_gpus)
    return rates


def fleet_rate(faults: int, node_days: float, nodes: int) -> dict:
    """The fleet's node fault rate (the rate object, its `failures` the faults) with its definition."""
    return {**failure_rate(faults, node_days), "nodes": nodes, "definition": FLEET_FAULT_RATE_DEFINITION}


def fleet_fault_rate(con: MartReader, period: Period) -> dict:
    """Node faults per 1000 node-days over every GPU node of the period, with its interval: what
    published fleets report, beside r_f (which counts the faults that ended a job)."""
    (row,) = period.rows(con, EXPOSURE)
    return fleet_rate(row["fleet_faults"], row["fleet_node_days"], row["fleet_nodes"])


def mttf_by_size(con: MartReader, period: Period, r_f: dict, gpus_per_node: int) -> list[dict]:
    """Observed MTTF per size bucket with its interval, beside the model's MTTF at the bucket's
    largest size (its smallest for the open-ended top bucket) under each r_f."""
    result = []
    for bucket in period.rows(con, MTTF_BY_SIZE, order="bucket_order"):
        representative = bucket["max_gpus"] if bucket["max_gpus"] < 2**31 - 1 else bucket["min_gpus"]
        model = {k: model_mttf_hours(max(representative, 1), v["value"], gpus_per_node) for k, v in r_f.items()}
        result.append(
            {**bucket, **mttf_interval(bucket["runtime_hours"], bucket["infra_failures"]), "model_mttf_hours": model}
        )
    return result


def failures_by_cause(con: MartReader, period: Period) -> list[dict]:
    """Each cause's failures and its rate with its interval, most failures first. A month's
    metrics.json calls the cause `category` and gives its node-days in its rate only."""
    result = []
    for row in period.rows(con, FAILURES_BY_CAUSE, order="failures desc, cause_category"):
        rate = {f"rate_{k}": v for k, v in failure_rate(row["failures"], row["node_days"]).items()}
        if period.monthly:
            row = {"category": row.pop("cause_category"), **row}
            del row["node_days"]
        result.append({**row, **rate})
    return result


def ettr_vs_expected(con: MartReader, period: Period, r_f: dict, params: AnalysisConfig) -> dict:
    """ETTR as the paper measured it (its Fig. 9): the long job runs that ended in the period, each
    with its whole history, by size, for every run and for the highest-priority runs, each mean with
    its interval beside E[ETTR] at the runs' mean size (this cluster's r_f, the configured checkpoint
    interval, u0, q and w_cp). The model is compared from ettr_model_min_gpus GPUs up: the paper
    finds smaller runs diverge from it. A month's also says where the formula holds and which runs
    were the highest-priority ones."""
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
        }
        if period.monthly:
            figure["formula_valid"] = bool(rate) and formula_is_valid(row["mean_gpus"], rate, gpn, ckpt)
        tables[row["run_set"]].append(figure)
    result = {"r_f_definition": definition, "r_f": rate, "ckpt_minutes": ckpt, **tables}
    if period.monthly:
        result |= {
            "priority_qos": rows[0]["priority_qos"] if rows else None,
            "priority_partition": rows[0]["priority_partition"] if rows else None,
            "min_run_hours": params.ettr_min_run_hours,
        }
    return result


def breakdowns(con: MartReader, period: Period, top: int) -> dict:
    """Infrastructure failures, lost GPU-hours and ETTR by account and by partition: the `top` rows
    of each with the most lost GPU-hours (the mart's rank), and how many more the mart holds. A
    month's metrics.json names the shown rows `rows` and says `top`; a study's names them `top`."""
    result: dict = {"top": top} if period.monthly else {}
    for dimension in ("account", "partition"):
        rows = period.rows(con, BREAKDOWNS, order="rank", where="dimension = ?", args=(dimension,))
        shown = [row for row in rows if row["rank"] <= top]
        result[dimension] = {"rows" if period.monthly else "top": shown, "not_shown": len(rows) - len(shown)}
    return result


def mart_rows(con: MartReader, query: str, params: list) -> list[dict]:
    """The query's rows as dicts of column name to value."""
    cursor = con.execute(query, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
