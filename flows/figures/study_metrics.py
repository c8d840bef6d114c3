"""metrics.json of a study: each cluster's period figures over the range (flows/figures/period.py)
with what only a study shows (each month's r_f and causes, the job mix and lost goodput by size,
E[ETTR] at several restart overheads), the clusters compared (flows/figures/compare.py) and the
summary."""

from __future__ import annotations

from collections.abc import Collection

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.figures.compare import compare_clusters, monthly_causes, monthly_rates
from flows.figures.coverage import partial_months
from flows.figures.document import SCHEMA_VERSION
from flows.figures.formats import label
from flows.figures.measured import trend_rates
from flows.figures.models import expected_ettr_grid
from flows.figures.period import Mart, Period
from flows.figures.period_figures import period_figures
from flows.warehouse.engines import MartReader
from flows.warehouse.schema_version import tool_version

JOB_MIX = Mart(
    "fct_period_job_mix",
    ("outcome", "size_bucket", "bucket_order", "attempts", "gpu_hours", "attempt_share", "gpu_hours_share"),
)
LOST_GOODPUT_BY_SIZE = Mart(
    "fct_period_lost_goodput_by_size",
    (
        *("size_bucket", "bucket_order", "infra_failures", "first_order_gpu_hours", "second_order_preemptions"),
        *("second_order_gpu_hours", "lost_gpu_hours", "gpu_hours", "share_of_gpu_hours"),
    ),
)


def cluster_figures(con: MartReader, period: Period, params: AnalysisConfig, inputs: Collection[str]) -> dict:
    """One cluster's study figures, read from the marts' rows of its range (a period of kind
    `study`) and of each of its months. `inputs`: those landed for every month of the range, which
    decide what the figures measured (flows/figures/measured.py)."""
    figures = period_figures(con, period, params, inputs)
    causes = monthly_causes(con, period.first, period.last)
    return {
        **figures,
        "job_mix": period.rows(con, JOB_MIX, order="bucket_order, outcome"),
        # the attempts and GPU-hours of each size (the job-mix table), also where MTTF by size is not measured
        "job_mix_by_size": period.rows(
            con,
            Mart("fct_period_mttf_by_size", ("size_bucket", "bucket_order", "attempts", "gpu_hours")),
            order="bucket_order",
        ),
        "monthly": [
            {**month, "by_cause": causes.get(month["month"], {})}
            for month in trend_rates(monthly_rates(con, period.first, period.last), params)
        ],
        "expected_ettr_grid": expected_ettr_grid(figures["node_failure_rate"], params),
        "lost_goodput_by_size": []
        if "lost_goodput" in figures["not_measured"]
        else period.rows(con, LOST_GOODPUT_BY_SIZE, order="bucket_order"),
        # the months its records observe in part, which the study's header names (none: the key is left out)
        "partial_months": partial_months(con, period.first, period.last),
    }


def assemble_study(clusters: dict[str, dict], months: list[Month], command: str) -> dict:
    """The study (its metrics.json): each cluster's figures over `months`, the rows their tables
    share, the comparison of the clusters and the summary."""
    study = {
        "schema_version": SCHEMA_VERSION,
        "from_month": str(months[0]),
        "to_month": str(months[-1]),
        "months": len(months),
        "clusters": clusters,
        "reproduce": {"command": command, "tool_version": tool_version()},
        "comparison": compare_clusters(clusters),
    }
    study["summary"] = study_summary(study)
    return study


def study_summary(study: dict) -> dict:
    """The study's summary: one plain-language text and the headline figures of each cluster (the
    delivery's headline; flows/figures/summary.py's format)."""
    sentences, headline = [], []
    for name, figures in study["clusters"].items():
        r_f = figures["node_failure_rate"]["all"]
        gaps = figures.get("not_measured", {})
        sentences.append(
            f"{name}: r_f {r_f['value']:.2f} per 1000 node-days (95% interval {r_f['lower']:.2f}-{r_f['upper']:.2f})"
            f" from {r_f['failures']:,} infrastructure failures over {study['months']} months"
            if r_f["value"] is not None
            else f"{name}: r_f not measured: {r_f.get('not_measured') or 'no GPU node-days in the range'}"
        )
        headline += [
            {
                "key": "r_f_all",
                "label": f"{name} r_f (all)",
                "value": r_f["value"],
                "lower": r_f["lower"],
                "upper": r_f["upper"],
                "unit": "per 1000 node-days",
                "format": "dec",
                "not_measured": gaps.get("node_failure_rate.all"),
            },
            {
                "key": "lost_goodput",
                "label": f"{name} lost goodput",
                "value": None if "lost_goodput" in gaps else figures["lost_goodput"]["lost_gpu_hours"],
                "unit": "GPU-hours",
                "format": "num",
                "not_measured": gaps.get("lost_goodput"),
            },
        ]
    for pair in study["comparison"]:
        # (a cause's name for people; "r_f (all)" as it is)
        flagged = [
            r["measure"] if r["measure"].startswith("r_f") else label(r["measure"])
            for r in pair["ratios"]
            if r["flagged"]
        ]
        ratio = next(r for r in pair["ratios"] if r["measure"] == "r_f (all)")
        if flagged:
            sentences.append(
                f"{pair['a']} and {pair['b']} differ in {', '.join(flagged)}"
                + (f" (r_f ratio {ratio['ratio']:.2f})" if ratio["ratio"] is not None else "")
            )
        elif pair["tests_run"] == len(pair["ratios"]):
            sentences.append(f"{pair['a']} and {pair['b']} do not differ beyond chance")
        elif pair["tests_run"]:  # what was tested, and only that
            tested = [r["measure"] for r in pair["ratios"] if r["p_value"] is not None]
            sentences.append(
                f"{pair['a']} and {pair['b']} do not differ beyond chance in what could be tested "
                f"({', '.join(m if m.startswith('r_f') else label(m) for m in tested)}; "
                f"{len(pair['ratios']) - len(tested)} more could not be)"
            )
        else:  # no test ran: no conclusion either way
            sentences.append(
                f"{pair['a']} and {pair['b']} could not be compared: no test could run "
                "(no infrastructure failure at either, or their rates not measured)"
            )
    headline = [{k: v for k, v in item.items() if k != "not_measured" or v} for item in headline]
    return {"text": ". ".join(sentences) + ".", "headline": headline}
