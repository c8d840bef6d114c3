"""The study: the paper's analysis over a range of months, for one or more clusters side by side.

Each cluster's months are built first (a backfill that skips the months already built and sends
nothing), then its study models (dbt_project/models/study, the range's sums of the monthly marts);
this module reads them, adds what SQL should not do (exact intervals, the paper's models, the
rate ratios between clusters with Holm-corrected tests) and writes the study's directory in the
report directory's layout (flows/report/render.py), so that it is delivered like a month's report.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict
from pathlib import Path

import pyarrow as pa
from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from scipy.stats import binomtest

from flows.backfill import backfill, month_range
from flows.core.atomic import staged_replacement
from flows.core.config import AnalysisConfig, ClusterConfig
from flows.core.config_file import load_config
from flows.core.months import Month
from flows.core.runlock import run_lock
from flows.delivery.deliver import PartialDeliveryError, deliver_report
from flows.edge import checked_study
from flows.figures.analysis import (
    CONFIDENCE,
    failure_rate,
    flag_family,
    fleet_rate,
    mart_rows,
    mean_interval,
    model_mttf_hours,
    mttf_interval,
    projections,
)
from flows.figures.ettr import expected_ettr, formula_is_valid, optimal_checkpoint_minutes
from flows.figures.lemons import lemon_candidates
from flows.figures.summary import label
from flows.ingest.land import LandedMonthError
from flows.publish.archive import refresh_archive
from flows.report.study_report import write_study
from flows.warehouse.build import build_study, landed_months, warehouse_problem
from flows.warehouse.engines import MartReader, open_marts, spark_missing

SCHEMA_VERSION = 1
# E[ETTR] of large hypothetical jobs (the paper's Fig. 10) at these multiples of the configured u0
RESTART_OVERHEAD_FACTORS = (1, 2, 4)


class StudyError(RuntimeError):
    """A study that cannot be made (a month of the range missing after its build, clusters that clash)."""


def study_name(clusters: list[str], first: Month, last: Month) -> str:
    return f"{'+'.join(clusters)}_{first}_{last}"


def study_dir(config: ClusterConfig, clusters: list[str], first: Month, last: Month) -> Path:
    """Where a study is archived: beside the monthly reports of its first cluster's config."""
    return config.reports_dir / "studies" / study_name(clusters, first, last)


# --- one cluster's figures over the range -------------------------------------------------------


def cluster_figures(con: MartReader, first: Month, last: Month, params: AnalysisConfig) -> dict:
    """One cluster's study figures, read from its study models and monthly marts."""
    (totals,) = mart_rows(con, "select * from fct_study_totals", [])
    expected_months = len(month_range(first, last))
    if totals["months_built"] != expected_months:
        raise StudyError(f"{totals['months_built']} of the {expected_months} months {first}..{last} are built")
    r_f = {
        "paper": failure_rate(totals["paper_failures"], totals["paper_node_days"]),
        "all": failure_rate(totals["all_failures"], totals["all_node_days"]),
    }
    return {
        "parameters": {**asdict(params), "confidence": CONFIDENCE},
        "totals": totals,
        "node_failure_rate": r_f,
        "fleet_fault_rate": fleet_rate(totals["fleet_faults"], totals["fleet_node_days"], totals["fleet_nodes"]),
        "job_mix": mart_rows(con, "select * from fct_study_job_mix order by bucket_order, outcome", []),
        "failures_by_cause": failures_by_cause(con),
        "monthly": monthly_rates(con, first, last),
        "mttf_by_size": mttf_by_size(con, r_f, params.gpus_per_node),
        "projections": projections(r_f, params),
        "ettr_vs_expected": ettr_vs_expected(con, r_f, params),
        "expected_ettr_grid": expected_ettr_grid(r_f, params),
        "lemon_nodes": lemon_candidates(con, last, params),
        "lost_goodput_by_size": mart_rows(
            con, "select * from fct_study_lost_goodput_by_size order by bucket_order", []
        ),
        "breakdowns": breakdowns(con, params),
    }


def failures_by_cause(con: MartReader) -> list[dict]:
    rows = mart_rows(con, "select * from fct_study_failures_by_cause order by failures desc, cause_category", [])
    return [
        {**row, **{f"rate_{k}": v for k, v in failure_rate(row["failures"], row["node_days"]).items()}} for row in rows
    ]


def monthly_rates(con: MartReader, first: Month, last: Month) -> list[dict]:
    """r_f of each month of the range, and each cause's failures that month (the paper's Fig. 5)."""
    causes = mart_rows(
        con,
        "select month, cause_category, failures, per_1000_node_days from fct_failures_by_cause_monthly "
        "where month between ? and ? order by month, failures desc, cause_category",
        [str(first), str(last)],
    )
    rates = mart_rows(
        con,
        "select month, paper_failures, paper_node_days, all_failures, all_node_days "
        "from fct_node_failure_rate_monthly where month between ? and ? order by month",
        [str(first), str(last)],
    )
    return [
        {
            "month": row["month"],
            "paper": failure_rate(row["paper_failures"], row["paper_node_days"]),
            "all": failure_rate(row["all_failures"], row["all_node_days"]),
            "by_cause": {
                c["cause_category"]: {"failures": c["failures"], "per_1000_node_days": c["per_1000_node_days"]}
                for c in causes
                if c["month"] == row["month"]
            },
        }
        for row in rates
    ]


def mttf_by_size(con: MartReader, r_f: dict, gpus_per_node: int) -> list[dict]:
    """Observed MTTF per size bucket over the range with its interval, beside the model's MTTF."""
    result = []
    for bucket in mart_rows(con, "select * from fct_study_mttf_by_size order by bucket_order", []):
        representative = bucket["max_gpus"] if bucket["max_gpus"] < 2**31 - 1 else bucket["min_gpus"]
        model = {k: model_mttf_hours(max(representative, 1), v["value"], gpus_per_node) for k, v in r_f.items()}
        result.append(
            {**bucket, **mttf_interval(bucket["runtime_hours"], bucket["infra_failures"]), "model_mttf_hours": model}
        )
    return result


def _rate(r_f: dict) -> tuple[str, float | None]:
    """The r_f the paper's models use: its own definition when it has exposure, else every GPU job's."""
    definition = "paper" if r_f["paper"]["value"] else "all"
    return definition, r_f[definition]["value"]


def ettr_vs_expected(con: MartReader, r_f: dict, params: AnalysisConfig) -> dict:
    """Measured ETTR of the long job runs that ended in the range, by size, beside E[ETTR] at the
    runs' mean size (the paper's Fig. 9)."""
    definition, rate = _rate(r_f)
    tables: dict[str, list[dict]] = {"all": [], "priority": []}
    for row in mart_rows(con, "select * from fct_study_ettr_by_size order by run_set, bucket_order", []):
        lower, upper = mean_interval(row["mean_ettr"], row["stddev_ettr"], row["runs"])
        expected = (
            expected_ettr(
                row["mean_gpus"],
                rate,
                params.gpus_per_node,
                params.ckpt_interval_minutes,
                params.restart_overhead_minutes,
                params.queue_after_failure_minutes,
                params.ckpt_write_minutes,
            )
            if rate
            else None
        )
        tables[row["run_set"]].append(
            {
                **{k: v for k, v in row.items() if k != "run_set"},
                "mean_lower": lower,
                "mean_upper": upper,
                "expected_ettr": expected,
                "model_applies": row["mean_gpus"] >= params.ettr_model_min_gpus,
            }
        )
    return {"r_f_definition": definition, "r_f": rate, "ckpt_minutes": params.ckpt_interval_minutes, **tables}


def expected_ettr_grid(r_f: dict, params: AnalysisConfig) -> dict:
    """E[ETTR] of large hypothetical jobs against the checkpoint interval, at the configured restart
    overhead u0 and multiples of it (the paper's Fig. 10), under the range's r_f."""
    definition, rate = _rate(r_f)
    overheads = [params.restart_overhead_minutes * f for f in RESTART_OVERHEAD_FACTORS]
    curves = []
    for gpus in params.projection_gpus:
        for u0 in overheads:
            curves.append(
                {
                    "gpus": gpus,
                    "restart_overhead_minutes": u0,
                    "points": [
                        {
                            "ckpt_minutes": minutes,
                            "ettr": expected_ettr(
                                gpus,
                                rate,
                                params.gpus_per_node,
                                minutes,
                                u0,
                                params.queue_after_failure_minutes,
                                params.ckpt_write_minutes,
                            ),
                            "valid": formula_is_valid(gpus, rate, params.gpus_per_node, minutes),
                        }
                        for minutes in params.ettr_curve_minutes
                    ]
                    if rate
                    else [],
                }
            )
    optimal = {
        gpus: optimal_checkpoint_minutes(gpus, rate, params.gpus_per_node, params.ckpt_write_minutes) if rate else None
        for gpus in params.projection_gpus
    }
    return {
        "r_f_definition": definition,
        "r_f": rate,
        "restart_overheads_minutes": overheads,
        "curves": curves,
        "optimal_ckpt_minutes": [{"gpus": g, "minutes": m} for g, m in optimal.items()],
    }


def breakdowns(con: MartReader, params: AnalysisConfig) -> dict:
    """The accounts and partitions that lost the most over the range (top N of each), and how many
    are not shown."""
    rows = mart_rows(con, "select * from fct_study_breakdowns order by dimension, rank", [])
    result = {}
    for dimension in ("account", "partition"):
        of_dimension = [r for r in rows if r["dimension"] == dimension]
        result[dimension] = {
            "top": [r for r in of_dimension if r["rank"] <= params.breakdown_top],
            "not_shown": max(len(of_dimension) - params.breakdown_top, 0),
        }
    return result


# --- clusters side by side -----------------------------------------------------------------------


def rate_ratio(failures_a: int, exposure_a: float, failures_b: int, exposure_b: float) -> dict:
    """Rate ratio a / b of two Poisson counts with its exact interval and test of equal rates: given
    both counts, a's is binomial with p = a's share of the exposure at equal rates (the
    conditional test; the interval maps Clopper-Pearson's interval of p onto the ratio)."""
    rate_a = failures_a / exposure_a if exposure_a > 0 else None
    rate_b = failures_b / exposure_b if exposure_b > 0 else None
    total = failures_a + failures_b
    if not exposure_a or not exposure_b or total == 0:
        return {"ratio": None, "lower": None, "upper": None, "p_value": None}
    test = binomtest(failures_a, total, exposure_a / (exposure_a + exposure_b))
    interval = test.proportion_ci(confidence_level=CONFIDENCE, method="exact")

    def ratio(p: float) -> float | None:
        return None if p >= 1 else p / (1 - p) * exposure_b / exposure_a

    return {
        "ratio": rate_a / rate_b if rate_b else None,
        "lower": ratio(interval.low),
        "upper": ratio(interval.high),
        "p_value": float(test.pvalue),
    }


def compare_clusters(clusters: dict[str, dict]) -> list[dict]:
    """Each pair of clusters: the ratio of their r_f (both definitions) and of each cause's rate,
    with intervals; a family of tests per pair, Holm-corrected, says whether they differ."""
    names = sorted(clusters)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            fa, fb = clusters[a], clusters[b]
            ratios = {
                f"r_f ({d})": rate_ratio(
                    fa["node_failure_rate"][d]["failures"],
                    fa["node_failure_rate"][d]["node_days"],
                    fb["node_failure_rate"][d]["failures"],
                    fb["node_failure_rate"][d]["node_days"],
                )
                for d in ("paper", "all")
            }
            causes_a = {c["cause_category"]: c for c in fa["failures_by_cause"]}
            causes_b = {c["cause_category"]: c for c in fb["failures_by_cause"]}
            for cause in sorted(set(causes_a) | set(causes_b)):
                ratios[cause] = rate_ratio(
                    causes_a.get(cause, {}).get("failures", 0),
                    fa["node_failure_rate"]["all"]["node_days"],
                    causes_b.get(cause, {}).get("failures", 0),
                    fb["node_failure_rate"]["all"]["node_days"],
                )
            family = flag_family(ratios, f"{a} against {b}: r_f and each cause's rate")
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "ratios": [{"measure": name, **ratio, **family["tests"][name]} for name, ratio in ratios.items()],
                    "differ": any(t["flagged"] for t in family["tests"].values()),
                }
            )
    return pairs


def assemble_study(clusters: dict[str, dict], months: list[Month], command: str) -> dict:
    """The study (its metrics.json): each cluster's figures over `months`, the rows their tables
    share, the comparison of the clusters and the summary."""
    study = {
        "schema_version": SCHEMA_VERSION,
        "from_month": str(months[0]),
        "to_month": str(months[-1]),
        "months": len(months),
        "clusters": clusters,
        "reproduce": {"command": command},
        **shared_rows(clusters),
        "comparison": compare_clusters(clusters),
    }
    study["summary"] = study_summary(study)
    return study


def shared_rows(clusters: dict[str, dict]) -> dict:
    """The rows the clusters' side-by-side tables share: every cause any cluster had (the first
    cluster's order, then the others'), every size bucket with a measured ETTR (by size)."""
    causes: list[str] = []
    buckets: dict[str, int] = {}
    for figures in clusters.values():
        causes += [c["cause_category"] for c in figures["failures_by_cause"] if c["cause_category"] not in causes]
        buckets |= {r["size_bucket"]: r["bucket_order"] for r in figures["ettr_vs_expected"]["priority"]}
    return {"causes": causes, "ettr_buckets": sorted(buckets, key=buckets.__getitem__)}


def study_summary(study: dict) -> dict:
    """The study's summary: one plain-language text and the headline figures of each cluster (the
    delivery's headline; flows/figures/summary.py's format)."""
    sentences, headline = [], []
    for name, figures in study["clusters"].items():
        r_f = figures["node_failure_rate"]["all"]
        sentences.append(
            f"{name}: r_f {r_f['value']:.2f} per 1000 node-days (95% interval {r_f['lower']:.2f}-{r_f['upper']:.2f})"
            f" from {r_f['failures']:,} infrastructure failures over {study['months']} months"
            if r_f["value"] is not None
            else f"{name}: no GPU node-days in the range"
        )
        headline += [
            {
                "label": f"{name} r_f (all)",
                "value": r_f["value"],
                "lower": r_f["lower"],
                "upper": r_f["upper"],
                "unit": "per 1000 node-days",
                "format": "dec",
            },
            {
                "label": f"{name} lost goodput",
                "value": figures["totals"]["lost_gpu_hours"],
                "unit": "GPU-hours",
                "format": "num",
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
        else:
            sentences.append(f"{pair['a']} and {pair['b']} do not differ beyond chance")
    return {"text": ". ".join(sentences) + ".", "headline": headline}


# --- the flow ------------------------------------------------------------------------------------


def built_months(config: ClusterConfig, first: Month, last: Month) -> set[Month]:
    """The months from `first` to `last` whose marts the cluster's warehouse holds (none when it is
    missing or cannot be opened: building a month rebuilds it)."""
    if spark_missing(config) if config.warehouse.engine == "spark" else warehouse_problem(config.warehouse_path):
        return set()
    with open_marts(config) as marts:
        rows = marts.execute(
            "select month from fct_month_totals where month between ? and ?", [str(first), str(last)]
        ).fetchall()
    return {Month.parse(month) for (month,) in rows}


@task(name="study-build", cache_policy=NO_CACHE)
def build_cluster_study(config: ClusterConfig, first: Month, last: Month) -> dict:
    """Build the cluster's study models over the range and read its figures."""
    with run_lock(config):
        landed = landed_months(config)
        if last not in landed:
            raise LandedMonthError(f"{config.cluster} {last} is not landed: build the month first")
        build_study(config, first, last, landed[last])
        with open_marts(config) as marts:
            return cluster_figures(marts, first, last, config.analysis)


def range_tables(config: ClusterConfig, first: Month, last: Month) -> dict[str, pa.Table]:
    """The cluster's fact tables over the range, for the exports."""
    where = "month between ? and ?"
    months = [str(first), str(last)]
    with open_marts(config) as marts:
        return {
            f"{config.cluster}_failures": marts.arrow(
                f"select * from fct_failures where {where} order by failed_at, attempt_id", months
            ),
            f"{config.cluster}_node_days": marts.arrow(
                f"select * from fct_node_days where {where} order by node, day", months
            ),
            # the long job runs the ETTR figures are of, as in a month's exports
            f"{config.cluster}_job_runs_ettr": marts.arrow(
                f"select * from fct_job_runs where {where} and is_ettr_run order by month, job_run_id", months
            ),
        }


def reproduce(configs: list[ClusterConfig], first: Month, last: Month) -> str:
    args = ["reliability-report", "study", "--from", str(first), "--to", str(last)]
    for config in configs:
        args += ["--config", str(config.config_path)]
    return shlex.join(args)


@flow(name="study")
def study(
    configs: list[ClusterConfig] | list[str],
    from_month: Month,
    to_month: Month,
    notify: bool = False,
    resend: bool = False,
) -> dict:
    """The study of the clusters of `configs` over `from_month`..`to_month` (YYYY-MM, full months).
    Months not built yet are built first (archived, not sent). The study goes to the first config's
    reports directory, `studies/<name>/`, and with `notify` to its email and webhook, once per set
    of figures (`resend`: again). A deployment's run gives the config files' paths: they and the
    range pass the edge here (flows/edge.py), as a command's do in the CLI, which gives the
    ClusterConfigs it checked."""
    if all(isinstance(c, str) for c in configs):
        loaded = [load_config(path) for path in configs]
        checked_study(loaded, from_month, to_month)
    else:
        loaded = configs
    months = month_range(from_month, to_month)
    first, last = months[0], months[-1]
    figures = {}
    for config in loaded:
        built = built_months(config, first, last)
        # one month at a time, oldest first (a month's job runs carry the months before it), archived
        for month in (m for m in months if m not in built):
            backfill(
                cluster=config.cluster,
                config=config,
                from_month=str(month),
                to_month=str(month),
                force=True,
                email="none",
            )
        figures[config.cluster] = build_cluster_study(config, first, last)
    result = assemble_study(figures, months, reproduce(loaded, first, last))
    names = [c.cluster for c in loaded]
    subject = f"study {'+'.join(names)} {first}..{last}"
    tables = {name: table for config in loaded for name, table in range_tables(config, first, last).items()}
    target = study_dir(loaded[0], names, first, last)
    with staged_replacement(target, keep_on=(PartialDeliveryError,)) as staged:
        write_study(staged, result, tables, published=last.end.date())
        outcome = deliver_report(loaded[0], subject, staged, resend=resend, held=None if notify else "notify is off")
        if outcome.errors:
            raise PartialDeliveryError(f"{subject}: the study is in place but {'; '.join(outcome.errors)}")
    refresh_archive(loaded[0].reports_dir)  # reports/index.html lists the study
    get_run_logger().info("study written to %s", target / "report.html")
    return {"study": str(target / "report.html"), "delivery": str(outcome), "summary": result["summary"]["text"]}
