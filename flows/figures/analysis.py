"""metrics.json: the month's reliability figures, one function per report section, read from the marts.

Every count, sum and ratio is computed once, in the dbt marts (models/marts, docs/methodology.md
"Metrics"); this module reads their rows and adds only what SQL should not do: exact (Garwood)
Poisson 95% intervals, tests of change, the paper's models (MTTF and E[ETTR] projections) and the
lemon nodes' negative-binomial fit (flows/figures/lemons.py). It never queries a staging or intermediate
model and never aggregates a mart's rows.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pyarrow as pa
from scipy.stats import binomtest, chi2, t

from flows.core.config import AnalysisConfig
from flows.core.months import Month
from flows.figures.ettr import expected_ettr, formula_is_valid, optimal_checkpoint_minutes
from flows.figures.lemons import lemon_candidates
from flows.warehouse.engines import MartReader

CONFIDENCE = 0.95


def poisson_interval(count: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Exact two-sided interval for a Poisson mean given `count` events (Garwood, chi-square form)."""
    alpha = 1 - confidence
    lower = 0.0 if count == 0 else chi2.ppf(alpha / 2, 2 * count) / 2
    upper = chi2.ppf(1 - alpha / 2, 2 * count + 2) / 2
    return float(lower), float(upper)


def failure_rate(failures: int, node_days: float) -> dict:
    """r_f in failures per 1000 node-days with its interval (None without exposure)."""
    lower, upper = poisson_interval(failures)

    def per_1000(count: float) -> float | None:
        return count * 1000 / node_days if node_days > 0 else None

    return {
        "failures": failures,
        "node_days": node_days,
        "value": per_1000(failures),
        "lower": per_1000(lower),
        "upper": per_1000(upper),
        "unit": "failures per 1000 node-days",
    }


def model_mttf_hours(gpus: int, r_f_per_1000: float | None, gpus_per_node: int) -> float | None:
    """MTTF(N) = 1 / ((N / gpus_per_node) x r_f), in hours."""
    if not r_f_per_1000:
        return None
    return 24 / ((gpus / gpus_per_node) * r_f_per_1000 / 1000)


def mttf_interval(runtime_hours: float, failures: int) -> dict:
    """The interval of an observed MTTF (runtime / failures) from the Poisson count; with 0
    failures only a lower bound."""
    lower_count, upper_count = poisson_interval(failures)
    return {
        "mttf_lower_hours": runtime_hours / upper_count if runtime_hours > 0 else None,
        "mttf_upper_hours": runtime_hours / lower_count if failures and runtime_hours > 0 else None,
    }


def rate_change(failures: int, node_days: float, previous_failures: int, previous_node_days: float) -> dict:
    """This month's failure rate against the previous month's, with an exact test of equal rates:
    given both counts, this month's is binomial with p = its share of the exposure. `significant`
    when the two-sided p-value is below 1 - CONFIDENCE (a Poisson test, not a fixed percentage)."""
    current = failure_rate(failures, node_days)["value"]
    before = failure_rate(previous_failures, previous_node_days)["value"]
    if not node_days or not previous_node_days or failures + previous_failures == 0:
        return {"value": current, "previous": before, "change": None, "p_value": None, "significant": False}
    test = binomtest(failures, failures + previous_failures, node_days / (node_days + previous_node_days))
    return {
        "value": current,
        "previous": before,
        "change": (current - before) / before if before else None,
        "p_value": test.pvalue,
        "significant": bool(test.pvalue < 1 - CONFIDENCE),
    }


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the k-th smallest p of m is multiplied
    by m - k + 1 and kept at least the one before it (capped at 1). Flagging adjusted p < alpha holds
    the chance of any false flag in the family at alpha, whatever the tests' dependence. (Written out:
    scipy has no Holm, and statsmodels, which has, is not a dependency.)"""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def flag_family(tests: dict[str, dict], description: str) -> dict:
    """One family of tests of change ({name: rate_change result}) with Holm-adjusted p-values: a test
    is `flagged` when its adjusted p is below 1 - CONFIDENCE. Tests with nothing to test (p None)
    are listed unflagged and do not count in the family."""
    tested = [name for name, test in tests.items() if test["p_value"] is not None]
    adjusted = dict(zip(tested, holm([tests[name]["p_value"] for name in tested]), strict=True))
    return {
        "description": description,
        "tests_counted": len(tested),
        "tests": {
            name: {
                "p_value": test["p_value"],
                "p_adjusted": float(adjusted[name]) if name in adjusted else None,
                "flagged": bool(name in adjusted and adjusted[name] < 1 - CONFIDENCE),
            }
            for name, test in tests.items()
        },
    }


def change_flags(change: dict, causes: list[dict], trend: dict) -> dict:
    """The report's flags of change, each family corrected for its number of tests (Holm): the
    month-over-month test of r_f, of each cause, and this month against each trailing window (r_f
    over the windows; each window's causes)."""
    families = {
        "month_over_month": flag_family({"r_f": change}, "r_f (all GPU jobs) against the previous month"),
        "month_over_month_by_cause": flag_family(
            {c["category"]: c["month_over_month"] for c in causes}, "each cause's rate against the previous month"
        ),
        "trend": flag_family(
            {f"{w['months']} months": w["this_month_vs_window"] for w in trend["trailing"]},
            "r_f (all GPU jobs) this month against each trailing window's earlier months",
        ),
    }
    for w in trend["trailing"]:
        families[f"trend_by_cause_{w['months']}_months"] = flag_family(
            {c["category"]: c["this_month_vs_window"] for c in w["by_cause"]},
            f"each cause's rate this month against the earlier months of the {w['months']}-month window",
        )
    return {"method": "Holm", "family_wise_error_rate": 1 - CONFIDENCE, "families": families}


def history_months(month: Month, params: AnalysisConfig) -> list[Month]:
    """The months of the longest trailing window, oldest first, ending at `month`."""
    months = [month]
    for _ in range(max(params.trailing_months, default=1) - 1):
        months.insert(0, months[0].previous())
    return months


@dataclass
class MonthFigures:
    """What the report shows of a month: metrics.json and the detail tables written beside it."""

    metrics: dict
    tables: dict[str, pa.Table]


def month_figures(marts: MartReader, month: Month, params: AnalysisConfig) -> MonthFigures:
    """Read the month's figures from the marts, once: the report is rendered from them alone."""
    return MonthFigures(compute_metrics(marts, month, params), detail_tables(marts, month))


def compute_metrics(con: MartReader, month: Month, params: AnalysisConfig) -> dict:
    """metrics.json of the month (docs/metrics.md), section by section."""
    r_f = node_failure_rate(con, month, params)
    causes, change, trend = failures_by_cause(con, month), month_over_month(con, month), history(con, month, params)
    return {
        "schema_version": 2,  # docs/metrics.md
        "month": str(month),
        "parameters": {**dataclasses.asdict(params), "confidence": CONFIDENCE},
        "totals": totals(con, month),
        "job_mix": job_mix(con, month),
        "mttf_by_size": mttf_by_size(con, month, r_f, params.gpus_per_node),
        "node_failure_rate": r_f,
        "fleet_fault_rate": fleet_fault_rate(con, month),
        "projections": projections(r_f, params),
        "failures_by_cause": causes,
        "month_over_month": change,
        "history": trend,
        "change_flags": change_flags(change, causes, trend),
        "run_ettr": run_ettr(con, month),
        "ettr_vs_expected": ettr_vs_expected(con, month, r_f, params),
        "lemon_nodes": lemon_candidates(con, month, params),
        "expected_ettr": expected_ettr_curves(r_f, params),
        "lost_goodput": lost_goodput(con, month, params),
        "breakdowns": breakdowns(con, month, params),
        "health_events": health_events(con, month),
    }


def totals(con: MartReader, month: Month) -> dict:
    (row,) = mart_rows(
        con,
        "select attempts, gpu_hours, infra_failures, open_attempts, unknown_states from fct_month_totals "
        "where month = ?",
        [str(month)],
    )
    return row


def job_mix(con: MartReader, month: Month) -> list[dict]:
    return mart_rows(
        con,
        "select outcome, attempts, gpu_hours, attempt_share, gpu_hours_share from fct_outcomes_monthly "
        "where month = ? order by attempts desc, outcome",
        [str(month)],
    )


def _monthly_rates(con: MartReader, months: list[Month]) -> dict[str, dict]:
    """fct_node_failure_rate_monthly's rows of those of `months` that have been built."""
    return {
        row["month"]: row
        for row in mart_rows(
            con,
            f"select * from fct_node_failure_rate_monthly where month in ({', '.join('?' for _ in months)})",
            [str(m) for m in months],
        )
    }


def node_failure_rate(con: MartReader, month: Month, params: AnalysisConfig) -> dict:
    """r_f of the month under both definitions, with its interval."""
    row = _monthly_rates(con, [month])[str(month)]
    return {
        "paper": {
            **failure_rate(row["paper_failures"], row["paper_node_days"]),
            "definition": f"infra failures of attempts with > {params.paper_min_gpus} GPUs over their node-days",
        },
        "all": {
            **failure_rate(row["all_failures"], row["all_node_days"]),
            "definition": "every infra failure of a GPU attempt over all GPU node-days",
        },
    }


# what the fleet fault rate counts (docs/methodology.md "The fleet's node fault rate"): the report,
# the study and metrics.json say it in these words
FLEET_FAULT_RATE_DEFINITION = (
    "node faults (critical health events of a node, node DOWN/DRAIN with a failure reason among them, "
    "grouped into incidents) over the node-days of every node seen, busy or idle"
)


def fleet_rate(faults: int, node_days: float, nodes: int) -> dict:
    """The fleet's node fault rate (the rate object, its `failures` the faults) with its definition."""
    return {**failure_rate(faults, node_days), "nodes": nodes, "definition": FLEET_FAULT_RATE_DEFINITION}


def fleet_fault_rate(con: MartReader, month: Month) -> dict:
    """Node faults per 1000 node-days over every node of the month, with its interval: what
    published fleets report, beside r_f (which counts the faults that ended a job)."""
    row = _monthly_rates(con, [month])[str(month)]
    return fleet_rate(row["fleet_faults"], row["fleet_node_days"], row["fleet_nodes"])


def month_over_month(con: MartReader, month: Month) -> dict:
    """This month's r_f ("all") tested against the previous month's (none when it was not built)."""
    rates = _monthly_rates(con, [month, month.previous()])
    now = rates[str(month)]
    before = rates.get(str(month.previous()), {"all_failures": 0, "all_node_days": 0.0})
    return rate_change(now["all_failures"], now["all_node_days"], before["all_failures"], before["all_node_days"])


def mttf_by_size(con: MartReader, month: Month, r_f: dict, gpus_per_node: int) -> list[dict]:
    """Observed MTTF per size bucket with its interval, beside the model's MTTF at the bucket's
    largest size (its smallest for the open-ended top bucket) under each r_f."""
    buckets = mart_rows(
        con,
        """
        select size_bucket, bucket_order, min_gpus, max_gpus, attempts, ended_attempts, runtime_hours,
               gpu_hours, gpu_node_days, infra_failures, mttf_hours
        from fct_mttf_by_size_monthly where month = ? order by bucket_order""",
        [str(month)],
    )
    result = []
    for bucket in buckets:
        representative = bucket["max_gpus"] if bucket["max_gpus"] < 2**31 - 1 else bucket["min_gpus"]
        model = {k: model_mttf_hours(max(representative, 1), v["value"], gpus_per_node) for k, v in r_f.items()}
        result.append(
            {**bucket, **mttf_interval(bucket["runtime_hours"], bucket["infra_failures"]), "model_mttf_hours": model}
        )
    return result


def projections(r_f: dict, params: AnalysisConfig) -> list[dict]:
    """The model's MTTF of the projection sizes under each r_f."""
    return [
        {
            "gpus": n,
            **{f"mttf_hours_{k}": model_mttf_hours(n, v["value"], params.gpus_per_node) for k, v in r_f.items()},
        }
        for n in params.projection_gpus
    ]


def failures_by_cause(con: MartReader, month: Month) -> list[dict]:
    """Each cause's failures and rate with its interval, tested against the previous month's."""
    rows = mart_rows(
        con,
        """
        select month, cause_category as category, failure_domain, failures, node_fail, failed, requeued,
               node_days, per_1000_node_days, per_million_gpu_hours
        from fct_failures_by_cause_monthly where month in (?, ?) order by failures desc, category""",
        [str(month), str(month.previous())],
    )
    before = {r["category"]: r["failures"] for r in rows if r["month"] == str(month.previous())}
    previous_node_days = _monthly_rates(con, [month.previous()]).get(str(month.previous()), {}).get("all_node_days")
    result = []
    for row in (r for r in rows if r["month"] == str(month)):
        cause = {k: v for k, v in row.items() if k not in ("month", "node_days")}
        rate = failure_rate(row["failures"], row["node_days"])
        change = rate_change(
            row["failures"], row["node_days"], before.get(row["category"], 0), previous_node_days or 0.0
        )
        result.append({**cause, **{f"rate_{k}": v for k, v in rate.items()}, "month_over_month": change})
    return result


def history(con: MartReader, month: Month, params: AnalysisConfig) -> dict:
    """r_f of each of the last months built (the trend chart), and over each trailing window ending
    at this month: r_f, failures by cause and MTTF by size over the window, and this month against
    the window's earlier months (a Poisson test); and the months of the longest window before this
    one that are not built (the report says what they leave out)."""
    monthly = _monthly_rates(con, history_months(month, params))
    series = [
        {
            "month": m,
            **{d: failure_rate(monthly[m][f"{d}_failures"], monthly[m][f"{d}_node_days"]) for d in ("paper", "all")},
        }
        for m in sorted(monthly)
    ]
    windows = {
        row["window_months"]: row
        for row in mart_rows(con, "select * from fct_node_failure_rate_trailing where month = ?", [str(month)])
    }
    causes = mart_rows(
        con,
        "select * from fct_failures_by_cause_trailing where month = ? order by failures desc, cause_category",
        [str(month)],
    )
    sizes = mart_rows(
        con,
        "select * from fct_mttf_by_size_trailing where month = ? order by bucket_order, size_bucket",
        [str(month)],
    )
    trailing = [
        _trailing_window(
            windows[size],
            [c for c in causes if c["window_months"] == size],
            [s for s in sizes if s["window_months"] == size],
        )
        for size in params.trailing_months
    ]
    earlier_missing = [str(m) for m in history_months(month, params)[:-1] if str(m) not in monthly]
    return {"monthly": series, "trailing": trailing, "earlier_months_missing": earlier_missing}


def _trailing_window(window: dict, causes: list[dict], sizes: list[dict]) -> dict:
    """One trailing window's figures with their intervals and tests of this month against the earlier months."""
    return {
        "months": window["window_months"],
        "months_available": window["months_available"],
        "paper": failure_rate(window["paper_failures"], window["paper_node_days"]),
        "all": failure_rate(window["all_failures"], window["all_node_days"]),
        "this_month_vs_window": rate_change(
            window["this_month_failures"],
            window["this_month_node_days"],
            window["earlier_failures"],
            window["earlier_node_days"],
        ),
        "by_cause": [
            {
                "category": c["cause_category"],
                **failure_rate(c["failures"], c["node_days"]),
                "this_month_vs_window": rate_change(
                    c["this_month_failures"], c["this_month_node_days"], c["earlier_failures"], c["earlier_node_days"]
                ),
            }
            for c in causes
        ],
        "mttf_by_size": [
            {
                "size_bucket": s["size_bucket"],
                "runtime_hours": s["runtime_hours"],
                "infra_failures": s["infra_failures"],
                "mttf_hours": s["mttf_hours"],
                **mttf_interval(s["runtime_hours"], s["infra_failures"]),
            }
            for s in sizes
        ],
    }


def run_ettr(con: MartReader, month: Month) -> list[dict]:
    """The ETTR of the month's long job runs, by size bucket."""
    return mart_rows(
        con,
        "select size_bucket, runs, mean_ettr, median_ettr, min_ettr from fct_ettr_by_size_monthly "
        "where month = ? order by bucket_order, size_bucket",
        [str(month)],
    )


def mean_interval(mean: float, stddev: float | None, n: int) -> tuple[float | None, float | None]:
    """Student-t 95% interval of a mean ETTR from n runs, within [0, 1] (none from one run)."""
    if n < 2 or stddev is None:
        return None, None
    if stddev == 0:
        return mean, mean
    lower, upper = t.interval(CONFIDENCE, n - 1, loc=mean, scale=stddev / n**0.5)
    return max(float(lower), 0.0), min(float(upper), 1.0)


def ettr_vs_expected(con: MartReader, month: Month, r_f: dict, params: AnalysisConfig) -> dict:
    """ETTR as the paper measured it (its Fig. 9): the long job runs that ended this month, each
    with its whole history, by size, for every run and for the highest-priority runs, each mean with
    its interval beside E[ETTR] at the runs' mean size (this cluster's r_f, the configured checkpoint
    interval, u0, q and w_cp). The model is compared from ettr_model_min_gpus GPUs up: the paper
    finds smaller runs diverge from it."""
    rows = mart_rows(
        con,
        """
        select run_set, size_bucket, min_gpus, max_gpus, priority_qos, priority_partition, runs,
               runs_from_earlier_months, mean_gpus, mean_ettr, stddev_ettr, median_ettr, min_ettr
        from fct_ettr_by_size_ended_monthly where month = ? order by run_set, bucket_order, size_bucket""",
        [str(month)],
    )
    definition = "paper" if r_f["paper"]["value"] else "all"
    rate = r_f[definition]["value"]
    gpn, ckpt = params.gpus_per_node, params.ckpt_interval_minutes

    def expected(gpus: float) -> float | None:
        if not rate:
            return None
        return expected_ettr(
            gpus,
            rate,
            gpn,
            ckpt,
            params.restart_overhead_minutes,
            params.queue_after_failure_minutes,
            params.ckpt_write_minutes,
        )

    tables: dict[str, list[dict]] = {"all": [], "priority": []}
    for row in rows:
        lower, upper = mean_interval(row["mean_ettr"], row["stddev_ettr"], row["runs"])
        tables[row["run_set"]].append(
            {
                **{k: v for k, v in row.items() if k not in ("run_set", "priority_qos", "priority_partition")},
                "mean_lower": lower,
                "mean_upper": upper,
                "expected_ettr": expected(row["mean_gpus"]),
                "formula_valid": bool(rate) and formula_is_valid(row["mean_gpus"], rate, gpn, ckpt),
                "model_applies": row["mean_gpus"] >= params.ettr_model_min_gpus,
            }
        )
    return {
        "priority_qos": rows[0]["priority_qos"] if rows else None,
        "priority_partition": rows[0]["priority_partition"] if rows else None,
        "r_f_definition": definition,
        "r_f": rate,
        "ckpt_minutes": ckpt,
        "min_run_hours": params.ettr_min_run_hours,
        **tables,
    }


def lost_goodput(con: MartReader, month: Month, params: AnalysisConfig) -> dict:
    (row,) = mart_rows(
        con,
        """
        select lost_gpu_hours, first_order_gpu_hours, second_order_gpu_hours, infra_failures,
               second_order_preemptions, share_of_gpu_hours
        from fct_lost_goodput_monthly where month = ?""",
        [str(month)],
    )
    return {
        **row,
        "estimator": (
            f"an estimate (the paper's): min(runtime, {params.lost_work_cap_minutes:g} min) x GPUs per infrastructure"
            " failure, plus the same for each attempt preempted within 5 min before a restart after a failure"
            " on a shared node (Slurm does not record who preempted whom)"
        ),
    }


def breakdowns(con: MartReader, month: Month, params: AnalysisConfig) -> dict:
    """Infrastructure failures, lost GPU-hours and ETTR by account and by partition: the
    breakdown_top rows of each with the most lost GPU-hours (fct_breakdowns_monthly's rank), and how
    many more the mart holds."""
    result: dict = {"top": params.breakdown_top}
    for dimension in ("account", "partition"):
        of_dimension = "from fct_breakdowns_monthly where month = ? and dimension = ?"
        args = [str(month), dimension, params.breakdown_top]
        rows = mart_rows(
            con,
            "select key, rank, infra_failures, lost_gpu_hours, gpu_hours, ettr_runs, mean_ettr "
            f"{of_dimension} and rank <= ? order by rank",
            args,
        )
        (rest,) = mart_rows(con, f"select count(*) as not_shown {of_dimension} and rank > ?", args)
        result[dimension] = {"rows": rows, **rest}
    return result


def health_events(con: MartReader, month: Month) -> dict:
    (totals_row,) = mart_rows(
        con,
        "select health_events, unclassified_health_events, unclassified_share from fct_month_totals where month = ?",
        [str(month)],
    )
    return {
        "total": totals_row["health_events"],
        "unclassified": totals_row["unclassified_health_events"],
        "unclassified_share": totals_row["unclassified_share"],
        "by_category": mart_rows(
            con,
            "select category, severity, source, events from fct_health_events_by_category_monthly where month = ? "
            "order by events desc, category, severity, source",
            [str(month)],
        ),
    }


def job_runs(con: MartReader, month: Month, every_run: bool = False) -> list[dict]:
    """The month's job runs with their ETTR: the long ones of the ETTR summary, or with `every_run`
    each run with a wall time above 0."""
    return mart_rows(
        con,
        f"""
        select job_run_id, first_job_id_raw, user_name, account, job_name, gpus, size_bucket, bucket_order,
               first_start_at, last_end_at, final_outcome, runtime_seconds, queue_seconds, interruptions,
               lost_seconds, productive_seconds, ettr
        from fct_job_runs where month = ? and {"ettr is not null" if every_run else "is_ettr_run"}
        order by job_run_id""",
        [str(month)],
    )


def detail_tables(con: MartReader, month: Month) -> dict[str, pa.Table]:
    """The month's figures row by row, for the Parquet files beside the report: each long job run
    with its ETTR, each infrastructure failure with its cause, each node-day."""
    return {
        "job_runs_ettr": pa.Table.from_pylist(job_runs(con, month)),
        "failures": con.arrow(
            "select * from fct_failures where month = ? order by failed_at, attempt_id", [str(month)]
        ),
        "node_days": con.arrow("select * from fct_node_days where month = ? order by node, day", [str(month)]),
    }


def expected_ettr_curves(r_f: dict, params: AnalysisConfig) -> dict:
    """E[ETTR] against the checkpoint interval for this cluster's r_f, at each projection size."""
    definition = "paper" if r_f["paper"]["value"] else "all"
    rate = r_f[definition]["value"]
    gpn = params.gpus_per_node
    curves = []
    for gpus in params.projection_gpus:
        points = (
            [
                {
                    "ckpt_minutes": minutes,
                    "ettr": expected_ettr(
                        gpus,
                        rate,
                        gpn,
                        minutes,
                        params.restart_overhead_minutes,
                        params.queue_after_failure_minutes,
                        params.ckpt_write_minutes,
                    ),
                    "valid": formula_is_valid(gpus, rate, gpn, minutes),
                }
                for minutes in params.ettr_curve_minutes
            ]
            if rate
            else []
        )
        curves.append(
            {
                "gpus": gpus,
                "points": points,
                "optimal_ckpt_minutes": optimal_checkpoint_minutes(gpus, rate, gpn, params.ckpt_write_minutes)
                if rate
                else None,
            }
        )
    return {"r_f_definition": definition, "r_f": rate, "curves": curves}


def mart_rows(con: MartReader, query: str, params: list) -> list[dict]:
    cursor = con.execute(query, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
