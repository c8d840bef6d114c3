"""metrics.json: the month's reliability figures, one function per report section, read from the marts.

Every count, sum and ratio is computed once, in the dbt marts (models/marts, docs/methodology.md
"Metrics"); this module reads their rows and adds only what SQL should not do: exact (Garwood)
Poisson 95% intervals, tests of change, the paper's models (MTTF and E[ETTR] projections) and the
lemon nodes' negative-binomial fit (flows/lemons.py). It never queries a staging or intermediate
model and never aggregates a mart's rows.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
from scipy.stats import binomtest, chi2

from flows.config import AnalysisConfig
from flows.ettr import expected_ettr, formula_is_valid, optimal_checkpoint_minutes
from flows.lemons import lemon_candidates
from flows.months import Month

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


def month_figures(warehouse_path: Path, month: Month, params: AnalysisConfig) -> MonthFigures:
    """Read the month's figures from the marts, once: the report is rendered from them alone."""
    with duckdb.connect(str(warehouse_path), read_only=True) as con:
        return MonthFigures(compute_metrics(con, month, params), detail_tables(con, month))


def compute_metrics(con: duckdb.DuckDBPyConnection, month: Month, params: AnalysisConfig) -> dict:
    """metrics.json of the month (docs/metrics.md), section by section."""
    r_f = node_failure_rate(con, month, params)
    return {
        "schema_version": 2,  # docs/metrics.md
        "month": str(month),
        "parameters": {**dataclasses.asdict(params), "confidence": CONFIDENCE},
        "totals": totals(con, month),
        "job_mix": job_mix(con, month),
        "mttf_by_size": mttf_by_size(con, month, r_f, params.gpus_per_node),
        "node_failure_rate": r_f,
        "projections": projections(r_f, params),
        "failures_by_cause": failures_by_cause(con, month),
        "month_over_month": month_over_month(con, month),
        "history": history(con, month, params),
        "run_ettr": run_ettr(con, month),
        "lemon_nodes": lemon_candidates(con, month, params),
        "expected_ettr": expected_ettr_curves(r_f, params),
        "lost_goodput": lost_goodput(con, month, params),
        "health_events": health_events(con, month),
    }


def totals(con: duckdb.DuckDBPyConnection, month: Month) -> dict:
    (row,) = _rows(
        con,
        "select attempts, gpu_hours, infra_failures, open_attempts, unknown_states from fct_month_totals "
        "where month = ?",
        [str(month)],
    )
    return row


def job_mix(con: duckdb.DuckDBPyConnection, month: Month) -> list[dict]:
    return _rows(
        con,
        "select outcome, attempts, gpu_hours, attempt_share, gpu_hours_share from fct_outcomes_monthly "
        "where month = ? order by attempts desc, outcome",
        [str(month)],
    )


def _monthly_rates(con: duckdb.DuckDBPyConnection, months: list[Month]) -> dict[str, dict]:
    """fct_node_failure_rate_monthly's rows of those of `months` that have been built."""
    return {
        row["month"]: row
        for row in _rows(
            con,
            f"select * from fct_node_failure_rate_monthly where month in ({', '.join('?' for _ in months)})",
            [str(m) for m in months],
        )
    }


def node_failure_rate(con: duckdb.DuckDBPyConnection, month: Month, params: AnalysisConfig) -> dict:
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


def month_over_month(con: duckdb.DuckDBPyConnection, month: Month) -> dict:
    """This month's r_f ("all") tested against the previous month's (none when it was not built)."""
    rates = _monthly_rates(con, [month, month.previous()])
    now = rates[str(month)]
    before = rates.get(str(month.previous()), {"all_failures": 0, "all_node_days": 0.0})
    return rate_change(now["all_failures"], now["all_node_days"], before["all_failures"], before["all_node_days"])


def mttf_by_size(con: duckdb.DuckDBPyConnection, month: Month, r_f: dict, gpus_per_node: int) -> list[dict]:
    """Observed MTTF per size bucket with its interval, beside the model's MTTF at the bucket's
    largest size (its smallest for the open-ended top bucket) under each r_f."""
    buckets = _rows(
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


def failures_by_cause(con: duckdb.DuckDBPyConnection, month: Month) -> list[dict]:
    """Each cause's failures and rate with its interval, tested against the previous month's."""
    rows = _rows(
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


def history(con: duckdb.DuckDBPyConnection, month: Month, params: AnalysisConfig) -> dict:
    """r_f of each of the last months built (the trend chart), and over each trailing window ending
    at this month: r_f, failures by cause and MTTF by size over the window, and this month against
    the window's earlier months (a Poisson test)."""
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
        for row in _rows(con, "select * from fct_node_failure_rate_trailing where month = ?", [str(month)])
    }
    causes = _rows(
        con,
        "select * from fct_failures_by_cause_trailing where month = ? order by failures desc, cause_category",
        [str(month)],
    )
    sizes = _rows(
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
    return {"monthly": series, "trailing": trailing}


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


def run_ettr(con: duckdb.DuckDBPyConnection, month: Month) -> list[dict]:
    """The ETTR of the month's long job runs, by size bucket."""
    return _rows(
        con,
        "select size_bucket, runs, mean_ettr, median_ettr, min_ettr from fct_ettr_by_size_monthly "
        "where month = ? order by bucket_order, size_bucket",
        [str(month)],
    )


def lost_goodput(con: duckdb.DuckDBPyConnection, month: Month, params: AnalysisConfig) -> dict:
    (row,) = _rows(
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


def health_events(con: duckdb.DuckDBPyConnection, month: Month) -> dict:
    (totals_row,) = _rows(
        con,
        "select health_events, unclassified_health_events, unclassified_share from fct_month_totals where month = ?",
        [str(month)],
    )
    return {
        "total": totals_row["health_events"],
        "unclassified": totals_row["unclassified_health_events"],
        "unclassified_share": totals_row["unclassified_share"],
        "by_category": _rows(
            con,
            "select category, severity, source, events from fct_health_events_by_category_monthly where month = ? "
            "order by events desc, category, severity, source",
            [str(month)],
        ),
    }


def job_runs(con: duckdb.DuckDBPyConnection, month: Month, every_run: bool = False) -> list[dict]:
    """The month's job runs with their ETTR: the long ones of the ETTR summary, or with `every_run`
    each run with a wall time above 0."""
    return _rows(
        con,
        f"""
        select job_run_id, first_job_id_raw, user_name, account, job_name, gpus, size_bucket, bucket_order,
               first_start_at, last_end_at, final_outcome, runtime_seconds, queue_seconds, interruptions,
               lost_seconds, productive_seconds, ettr
        from fct_job_runs where month = ? and {"ettr is not null" if every_run else "is_ettr_run"}
        order by job_run_id""",
        [str(month)],
    )


def detail_tables(con: duckdb.DuckDBPyConnection, month: Month) -> dict[str, pa.Table]:
    """The month's figures row by row, for the Parquet files beside the report: each long job run
    with its ETTR, each infrastructure failure with its cause, each node-day."""
    return {
        "job_runs_ettr": pa.Table.from_pylist(job_runs(con, month)),
        "failures": con.sql(
            "select * from fct_failures where month = ? order by failed_at, attempt_id", params=[str(month)]
        ).to_arrow_table(),
        "node_days": con.sql(
            "select * from fct_node_days where month = ? order by node, day", params=[str(month)]
        ).to_arrow_table(),
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


def _rows(con: duckdb.DuckDBPyConnection, query: str, params: list) -> list[dict]:
    cursor = con.execute(query, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
