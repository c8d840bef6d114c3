"""The month's reliability figures, read from the marts: job mix, MTTF by size, node failure rate.

Definitions: docs/methodology.md ("Metrics"). Every figure carries its counts and, where it
is a rate, an exact (Garwood) Poisson 95% interval.
"""

from __future__ import annotations

import statistics
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


def observed_mttf(runtime_hours: float, failures: int) -> dict:
    """Runtime / failures with the interval from the Poisson count; with 0 failures only a lower bound."""
    lower_count, upper_count = poisson_interval(failures)
    return {
        "mttf_hours": runtime_hours / failures if failures else None,
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


def job_run_rows(con: duckdb.DuckDBPyConnection, month: Month, params: AnalysisConfig) -> list[dict]:
    """The month's job runs of at least ettr_min_run_hours with their interruptions and the work
    those lost: u0 + ckpt/2 each, at most what the interrupted attempt had run."""
    return _rows(
        con,
        """
        select r.job_run_id, r.first_job_id_raw, r.size_bucket, r.bucket_order, r.runtime_seconds, r.queue_seconds,
               count_if(a.outcome in ('infra_failed', 'preempted', 'requeued'))::bigint as interruptions,
               coalesce(sum(least(a.runtime_seconds, ?)) filter (
                   where a.outcome in ('infra_failed', 'preempted', 'requeued')), 0)::bigint as lost_seconds
        from fct_job_runs r
        join fct_attempts a on a.job_run_id = r.job_run_id and a.month = r.month
        where r.month = ? and r.runtime_seconds >= ?
        group by all""",
        [
            (params.restart_overhead_minutes + params.ckpt_interval_minutes / 2) * 60,
            str(month),
            params.ettr_min_run_hours * 3600,
        ],
    )


def job_run_ettr(runs: list[dict], params: AnalysisConfig) -> list[dict]:
    """ETTR = R / W of each job run (docs/methodology.md "ETTR of a job run"): W = queue + runtime, and R is
    the runtime less, per interruption, u0 + ckpt/2 (at most what the interrupted attempt ran)
    and the checkpoint writes w_cp / ckpt x runtime."""
    result = []
    for run in runs:
        wall = run["runtime_seconds"] + run["queue_seconds"]
        write_overhead = params.ckpt_write_minutes / params.ckpt_interval_minutes * run["runtime_seconds"]
        productive = max(run["runtime_seconds"] - run["lost_seconds"] - write_overhead, 0)
        if wall > 0:
            result.append({**run, "productive_seconds": productive, "ettr": productive / wall})
    return result


def history(
    monthly: dict[str, dict],
    months: list[Month],
    params: AnalysisConfig,
    causes: list[dict] | None = None,
    buckets: list[dict] | None = None,
) -> dict:
    """r_f of each of the last months built (the trend chart), and over trailing windows ending at
    this month: r_f, failures by cause and MTTF by size over the window, and this month against the
    window's earlier months (a Poisson test). `causes` and `buckets` are the monthly rows of
    fct_failures_by_cause_monthly and fct_mttf_by_size_monthly for those months."""
    series = [
        {
            "month": str(m),
            **{
                definition: failure_rate(
                    monthly[str(m)][f"{definition}_failures"], monthly[str(m)][f"{definition}_node_days"]
                )
                for definition in ("paper", "all")
            },
        }
        for m in months
        if str(m) in monthly
    ]
    windows = []
    for size in params.trailing_months:
        inside = [str(m) for m in months[-size:] if str(m) in monthly]
        earlier = inside[:-1] if inside and inside[-1] == str(months[-1]) else inside
        failures = sum(monthly[m]["all_failures"] for m in inside)
        node_days = sum(monthly[m]["all_node_days"] for m in inside)
        current = monthly.get(str(months[-1]))
        windows.append(
            {
                "months": size,
                "months_available": len(inside),
                "paper": failure_rate(
                    sum(monthly[m]["paper_failures"] for m in inside),
                    sum(monthly[m]["paper_node_days"] for m in inside),
                ),
                "all": failure_rate(failures, node_days),
                # this month against the months before it in the window
                "this_month_vs_window": rate_change(
                    current["all_failures"] if current else 0,
                    current["all_node_days"] if current else 0.0,
                    sum(monthly[m]["all_failures"] for m in earlier),
                    sum(monthly[m]["all_node_days"] for m in earlier),
                ),
                "by_cause": _window_causes(causes or [], inside, earlier, monthly),
                "mttf_by_size": _window_mttf(buckets or [], inside),
            }
        )
    return {"monthly": series, "trailing": windows}


def _window_causes(causes: list[dict], months: list[str], earlier: list[str], monthly: dict[str, dict]) -> list[dict]:
    """Each cause's rate over the window, and its rate this month (the window's last) against the
    window's earlier months (the same Poisson test as the overall rate)."""
    node_days = sum(monthly[m]["all_node_days"] for m in months)
    current = [m for m in months if m not in earlier]
    totals: dict[str, dict[str, int]] = {}
    for row in causes:
        if row["month"] in months:
            counts = totals.setdefault(row["cause_category"], {"all": 0, "current": 0, "earlier": 0})
            counts["all"] += row["failures"]
            counts["current" if row["month"] in current else "earlier"] += row["failures"]
    return [
        {
            "category": category,
            **failure_rate(counts["all"], node_days),
            "this_month_vs_window": rate_change(
                counts["current"],
                sum(monthly[m]["all_node_days"] for m in current),
                counts["earlier"],
                sum(monthly[m]["all_node_days"] for m in earlier),
            ),
        }
        for category, counts in sorted(totals.items(), key=lambda item: (-item[1]["all"], item[0]))
    ]


def _window_mttf(buckets: list[dict], months: list[str]) -> list[dict]:
    totals: dict[tuple, list[float]] = {}
    for row in buckets:
        if row["month"] in months:
            key = (row["bucket_order"], row["size_bucket"])
            runtime, failures = totals.get(key, [0.0, 0])
            totals[key] = [runtime + row["runtime_hours"], failures + row["infra_failures"]]
    return [
        {
            "size_bucket": bucket,
            "runtime_hours": runtime,
            "infra_failures": failures,
            **observed_mttf(runtime, failures),
        }
        for (_, bucket), (runtime, failures) in sorted(totals.items())
    ]


def run_ettr_summary(runs: list[dict], params: AnalysisConfig) -> list[dict]:
    """The ETTR of the month's long job runs, by size bucket."""
    by_bucket: dict[tuple, list[float]] = {}
    for run in job_run_ettr(runs, params):
        by_bucket.setdefault((run["bucket_order"], run["size_bucket"]), []).append(run["ettr"])
    return [
        {
            "size_bucket": bucket,
            "runs": len(values),
            "mean_ettr": statistics.fmean(values),
            "median_ettr": statistics.median(values),
            "min_ettr": min(values),
        }
        for (_, bucket), values in sorted(by_bucket.items())
    ]


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


def compute_metrics(warehouse_path: Path, month: Month, params: AnalysisConfig) -> dict:
    m = [str(month)]
    gpn = params.gpus_per_node
    with duckdb.connect(str(warehouse_path), read_only=True) as con:
        outcomes = _rows(
            con,
            """
            select outcome, sum(attempts)::bigint as attempts, sum(gpu_seconds)::bigint / 3600.0 as gpu_hours
            from fct_job_mix_monthly where month = ? group by outcome order by attempts desc, outcome""",
            m,
        )
        buckets = _rows(
            con,
            """
            select size_bucket, bucket_order, min_gpus, max_gpus, attempts, ended_attempts, runtime_hours,
                   gpu_hours, gpu_node_days, infra_failures
            from fct_mttf_by_size_monthly where month = ? order by bucket_order""",
            m,
        )
        rates = _rows(
            con,
            """
            select
              count(*) filter (where is_infra_failure and gpus > ?) as paper_failures,
              coalesce(sum(gpu_node_seconds) filter (where gpus > ?), 0)::bigint / 86400.0 as paper_node_days,
              count(*) filter (where is_infra_failure and gpus > 0) as all_failures,
              coalesce(sum(gpu_node_seconds), 0)::bigint / 86400.0 as all_node_days,
              count(*) filter (where is_infra_failure) as infra_failures,
              count(*) filter (where outcome = 'unknown') as unknown_states,
              count(*) filter (where is_open) as open_attempts
            from fct_attempts where month = ?""",
            [params.paper_min_gpus, params.paper_min_gpus, str(month)],
        )[0]
        causes = _rows(
            con,
            """
            select cause_category as category, failure_domain, count(*)::bigint as failures,
                   count_if(slurm_state = 'NODE_FAIL')::bigint as node_fail,
                   count_if(slurm_state = 'FAILED')::bigint as failed,
                   count_if(slurm_state = 'REQUEUED')::bigint as requeued
            from fct_attempts where month = ? and is_infra_failure
            group by all order by failures desc, category""",
            m,
        )
        runs = job_run_rows(con, month, params)
        goodput = _rows(
            con,
            """
            select coalesce(sum(least(runtime_seconds, ?) * gpus), 0)::double / 3600 as lost_gpu_hours,
                   count(*)::bigint as failures
            from fct_attempts where month = ? and is_infra_failure""",
            [params.lost_work_cap_minutes * 60, str(month)],
        )[0]
        second_order = _rows(
            con,
            """
            select coalesce(sum(least(runtime_seconds, ?) * gpus), 0)::double / 3600 as lost_gpu_hours,
                   count(*)::bigint as preemptions
            from fct_second_order_preemptions where month = ?""",
            [params.lost_work_cap_minutes * 60, str(month)],
        )[0]
        history_months = [month]
        for _ in range(max(params.trailing_months, default=1) - 1):
            history_months.insert(0, history_months[0].previous())
        monthly = {
            row["month"]: row
            for row in _rows(
                con,
                f"""
                select month,
                       count_if(is_infra_failure and gpus > ?)::bigint as paper_failures,
                       coalesce(sum(gpu_node_seconds) filter (where gpus > ?), 0)::bigint / 86400.0 as paper_node_days,
                       count_if(is_infra_failure and gpus > 0)::bigint as all_failures,
                       coalesce(sum(gpu_node_seconds), 0)::bigint / 86400.0 as all_node_days
                from fct_attempts where month in ({", ".join("?" for _ in history_months)})
                group by month""",
                [params.paper_min_gpus, params.paper_min_gpus, *map(str, history_months)],
            )
        }
        previous = monthly.get(str(month.previous()), {"all_failures": 0, "all_node_days": 0.0})
        in_history = ", ".join("?" for _ in history_months)
        window_causes = _rows(
            con,
            f"select month, cause_category, failures from fct_failures_by_cause_monthly where month in ({in_history}) "
            "order by month, cause_category",
            list(map(str, history_months)),
        )
        window_buckets = _rows(
            con,
            f"""select month, size_bucket, bucket_order, runtime_hours, infra_failures
                from fct_mttf_by_size_monthly where month in ({in_history})
                order by month, bucket_order""",  # floats summed in one order: identical in any build order
            list(map(str, history_months)),
        )
        lemons = lemon_candidates(con, month, params)
        events = _rows(
            con,
            """
            select category, severity, source, count(*)::bigint as events
            from int_health_events_classified
            where event_at >= ? and event_at < ?
            group by all order by events desc, category, severity, source""",
            [month.start.replace(tzinfo=None), month.end.replace(tzinfo=None)],
        )

    total_attempts = sum(o["attempts"] for o in outcomes)
    total_gpu_hours = sum(o["gpu_hours"] for o in outcomes)
    job_mix = [
        {
            **o,
            "attempt_share": o["attempts"] / total_attempts if total_attempts else None,
            "gpu_hours_share": o["gpu_hours"] / total_gpu_hours if total_gpu_hours else None,
        }
        for o in outcomes
    ]
    r_f = {
        "paper": {
            **failure_rate(rates["paper_failures"], rates["paper_node_days"]),
            "definition": f"infra failures of attempts with > {params.paper_min_gpus} GPUs over their node-days",
        },
        "all": {
            **failure_rate(rates["all_failures"], rates["all_node_days"]),
            "definition": "every infra failure of a GPU attempt over all GPU node-days",
        },
    }
    mttf = []
    for b in buckets:
        representative = b["max_gpus"] if b["max_gpus"] < 2**31 - 1 else b["min_gpus"]
        mttf.append(
            {
                **b,
                **observed_mttf(b["runtime_hours"], b["infra_failures"]),
                "model_mttf_hours": {
                    k: model_mttf_hours(max(representative, 1), v["value"], gpn) for k, v in r_f.items()
                },
            }
        )
    node_days_all = rates["all_node_days"]
    failures_by_cause = [
        {**c, "per_1000_node_days": c["failures"] * 1000 / node_days_all if node_days_all else None} for c in causes
    ]
    gpu_hours_all = sum(b["gpu_hours"] for b in buckets)
    previous_by_cause = {
        row["cause_category"]: row["failures"] for row in window_causes if row["month"] == str(month.previous())
    }
    failures_by_cause = [
        {
            **c,
            **{f"rate_{k}": v for k, v in failure_rate(c["failures"], node_days_all).items()},
            "per_million_gpu_hours": c["failures"] * 1e6 / gpu_hours_all if gpu_hours_all else None,
            "month_over_month": rate_change(
                c["failures"], node_days_all, previous_by_cause.get(c["category"], 0), previous["all_node_days"]
            ),
        }
        for c in failures_by_cause
    ]
    total_events = sum(e["events"] for e in events)
    unclassified = sum(e["events"] for e in events if e["category"] == "unclassified")
    return {
        "schema_version": 2,  # docs/metrics.md
        "month": str(month),
        "parameters": {
            "gpus_per_node": gpn,
            "attr_before_minutes": params.attr_before_minutes,
            "attr_after_minutes": params.attr_after_minutes,
            "paper_min_gpus": params.paper_min_gpus,
            "confidence": CONFIDENCE,
            "projection_gpus": list(params.projection_gpus),
            "restart_overhead_minutes": params.restart_overhead_minutes,
            "ckpt_interval_minutes": params.ckpt_interval_minutes,
            "ckpt_write_minutes": params.ckpt_write_minutes,
            "queue_after_failure_minutes": params.queue_after_failure_minutes,
            "ettr_min_run_hours": params.ettr_min_run_hours,
            "lost_work_cap_minutes": params.lost_work_cap_minutes,
            "run_link_gap_minutes": params.run_link_gap_minutes,
            "trailing_months": list(params.trailing_months),
            "ettr_curve_minutes": list(params.ettr_curve_minutes),
            "lemon_window_days": params.lemon_window_days,
            "lemon_repeat_failures": params.lemon_repeat_failures,
            "lemon_repeat_days": params.lemon_repeat_days,
            "lemon_min_incidents": params.lemon_min_incidents,
            "lemon_p_value": params.lemon_p_value,
        },
        "totals": {
            "attempts": total_attempts,
            "gpu_hours": total_gpu_hours,
            "infra_failures": rates["infra_failures"],
            "open_attempts": rates["open_attempts"],
            "unknown_states": rates["unknown_states"],
        },
        "job_mix": job_mix,
        "mttf_by_size": mttf,
        "node_failure_rate": r_f,
        "projections": [
            {"gpus": n, **{f"mttf_hours_{k}": model_mttf_hours(n, v["value"], gpn) for k, v in r_f.items()}}
            for n in params.projection_gpus
        ],
        "failures_by_cause": failures_by_cause,
        "month_over_month": rate_change(
            rates["all_failures"], rates["all_node_days"], previous["all_failures"], previous["all_node_days"]
        ),
        "history": history(monthly, history_months, params, window_causes, window_buckets),
        "run_ettr": run_ettr_summary(runs, params),
        "lemon_nodes": lemons,
        "expected_ettr": expected_ettr_curves(r_f, params),
        "lost_goodput": {
            "lost_gpu_hours": goodput["lost_gpu_hours"] + second_order["lost_gpu_hours"],
            "first_order_gpu_hours": goodput["lost_gpu_hours"],
            "second_order_gpu_hours": second_order["lost_gpu_hours"],
            "infra_failures": goodput["failures"],
            "second_order_preemptions": second_order["preemptions"],
            "share_of_gpu_hours": (goodput["lost_gpu_hours"] + second_order["lost_gpu_hours"]) / gpu_hours_all
            if gpu_hours_all
            else None,
            "estimator": (
                f"an estimate (the paper's): min(runtime, {params.lost_work_cap_minutes:g} min) x GPUs per infrastructure"
                " failure, plus the same for each attempt preempted within 5 min before a restart after a failure"
                " on a shared node (Slurm does not record who preempted whom)"
            ),
        },
        "health_events": {
            "total": total_events,
            "unclassified": unclassified,
            "unclassified_share": unclassified / total_events if total_events else None,
            "by_category": events,
        },
    }


def detail_tables(warehouse_path: Path, month: Month, params: AnalysisConfig) -> dict[str, pa.Table]:
    """The month's figures row by row, for the Parquet files beside the report: each long job run
    with its ETTR, each infrastructure failure with its cause, each node-day."""
    with duckdb.connect(str(warehouse_path), read_only=True) as con:
        runs = job_run_ettr(job_run_rows(con, month, params), params)
        failures_table = con.sql(
            "select * from fct_failures where month = ? order by failed_at, attempt_id", params=[str(month)]
        ).to_arrow_table()
        node_days_table = con.sql(
            "select * from fct_node_days where month = ? order by node, day", params=[str(month)]
        ).to_arrow_table()
    return {
        "job_runs_ettr": pa.Table.from_pylist(sorted(runs, key=lambda r: r["job_run_id"])),
        "failures": failures_table,
        "node_days": node_days_table,
    }
