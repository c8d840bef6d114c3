"""The month's reliability figures, read from the marts: job mix, MTTF by size, node failure rate.

Definitions: ../shared/docs/domain.md ("Metrics"). Every figure carries its counts and, where it
is a rate, an exact (Garwood) Poisson 95% interval.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from scipy.stats import chi2

from flows.config import AnalysisConfig
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
              count_if(is_infra_failure and gpus > ?)::bigint as paper_failures,
              coalesce(sum(gpu_node_seconds) filter (where gpus > ?), 0)::bigint / 86400.0 as paper_node_days,
              count_if(is_infra_failure and gpus > 0)::bigint as all_failures,
              coalesce(sum(gpu_node_seconds), 0)::bigint / 86400.0 as all_node_days,
              count_if(is_infra_failure)::bigint as infra_failures,
              count_if(outcome = 'unknown')::bigint as unknown_states,
              count_if(is_open)::bigint as open_attempts
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
    total_events = sum(e["events"] for e in events)
    unclassified = sum(e["events"] for e in events if e["category"] == "unclassified")
    return {
        "schema_version": 1,
        "month": str(month),
        "parameters": {
            "gpus_per_node": gpn,
            "attr_before_minutes": params.attr_before_minutes,
            "attr_after_minutes": params.attr_after_minutes,
            "paper_min_gpus": params.paper_min_gpus,
            "confidence": CONFIDENCE,
            "projection_gpus": list(params.projection_gpus),
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
        "health_events": {
            "total": total_events,
            "unclassified": unclassified,
            "unclassified_share": unclassified / total_events if total_events else None,
            "by_category": events,
        },
    }
