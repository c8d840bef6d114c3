"""metrics.json of a month (docs/metrics.md): the month's period figures (flows/figures/period.py),
its comparison with the months before it (flows/figures/compare.py) and what only a month's report
shows, and the detail tables written beside it."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import pyarrow as pa

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.figures.compare import causes_month_over_month, change_flags, history, month_over_month
from flows.figures.document import SCHEMA_VERSION
from flows.figures.measured import trend_rates, window_rates, write_unmeasured
from flows.figures.models import expected_ettr_curves
from flows.figures.period import Mart, Period
from flows.figures.period_figures import period_figures
from flows.figures.summary import counts_line
from flows.warehouse.engines import MartReader, mart_rows


@dataclass
class MonthFigures:
    """What the report shows of a month: metrics.json and the detail tables written beside it."""

    metrics: dict
    tables: dict[str, pa.Table]

    @property
    def counts(self) -> str:
        """The month's attempts and infrastructure failures in a line, as every output says them
        (flows/figures/summary.py counts_line)."""
        return counts_line(self.metrics)


def month_figures(marts: MartReader, month: Month, params: AnalysisConfig, inputs: Collection[str]) -> MonthFigures:
    """Read the month's figures from the marts, once: the report is rendered from them alone.
    `inputs`: the inputs landed for the month (its manifest's `sources`), which decide what the
    figures measured (flows/figures/measured.py)."""
    return MonthFigures(compute_metrics(marts, month, params, inputs), detail_tables(marts, month))


def compute_metrics(con: MartReader, month: Month, params: AnalysisConfig, inputs: Collection[str]) -> dict:
    """metrics.json of the month, section by section."""
    period = Period.of_month(month)
    figures = period_figures(con, period, params, inputs)
    causes_change = causes_month_over_month(con, month, figures["failures_by_cause"])
    change, trend = month_over_month(con, month), history(con, month, params)
    # the trend shows only the months and windows measured
    trend |= {
        "monthly": trend_rates(trend["monthly"], params),
        "trailing": window_rates(
            trend["trailing"],
            params,
            causes_measured="failures_by_cause" not in figures["not_measured"],
            repairs_gap=figures["not_measured"].get("node_repairs"),
        ),
    }
    metrics = {
        **figures,
        "schema_version": SCHEMA_VERSION,
        "month": str(month),
        "job_mix": job_mix(con, period),
        "month_over_month": change,
        "month_over_month_by_cause": causes_change,
        "history": trend,
        "run_ettr": run_ettr(con, period),
        "expected_ettr": expected_ettr_curves(figures["node_failure_rate"], params),
        "health_events": health_events(con, period),
    }
    # what the month's inputs did not measure, also of its own figures (flows/figures/measured.py)
    metrics = write_unmeasured(metrics, figures["not_measured"])
    flags = change_flags(metrics["month_over_month"], metrics["month_over_month_by_cause"], metrics["history"])
    return {**metrics, "change_flags": flags}


def job_mix(con: MartReader, period: Period) -> list[dict]:
    """The period's attempts and GPU-hours by outcome, the most attempts first."""
    return period.rows(
        con,
        Mart("fct_period_outcomes", ("outcome", "attempts", "gpu_hours", "attempt_share", "gpu_hours_share")),
        order="attempts desc, outcome",
    )


def run_ettr(con: MartReader, period: Period) -> list[dict]:
    """The ETTR of the period's long job runs (each month's part of them), by size bucket."""
    return period.rows(
        con,
        Mart("fct_period_run_ettr", ("size_bucket", "runs", "mean_ettr", "median_ettr", "min_ettr")),
        order="bucket_order, size_bucket",
    )


def health_events(con: MartReader, period: Period) -> dict:
    """The period's node health events by category, and how many no rule classified."""
    (totals_row,) = period.rows(
        con, Mart("fct_period_totals", ("health_events", "unclassified_health_events", "unclassified_share"))
    )
    return {
        "total": totals_row["health_events"],
        "unclassified": totals_row["unclassified_health_events"],
        "unclassified_share": totals_row["unclassified_share"],
        "by_category": period.rows(
            con,
            Mart("fct_period_health_events_by_category", ("category", "severity", "source", "events")),
            order="events desc, category, severity, source",
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
