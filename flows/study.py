"""The study: the paper's analysis over a range of months, for one or more clusters side by side.

Each cluster's months not built yet are built first (a backfill's plan each, run here: archived,
nothing sent), then its periods with the study's range among them (dim_periods: the range's figures
summed over its months); the study's figures are read from the range's rows (flows/figures/study_metrics.py) and the study's directory
is written in the report directory's layout (flows/report/render.py), so that it is delivered like
a month's report.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pyarrow as pa
from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run as flow_run_info

from flows.backfill import run_backfill
from flows.config.cluster import ClusterConfig
from flows.core.atomic import staged_replacement
from flows.core.months import Month, month_range
from flows.core.runlock import run_lock
from flows.delivery.deliver import PartialDeliveryError, deliver_report
from flows.delivery.subject import StudySubject
from flows.figures.period import Period, totals
from flows.figures.study_metrics import assemble_study, cluster_figures
from flows.ingest.manifest import LandedMonthError, read_manifest
from flows.plan import StudyPlan, plan_backfill
from flows.publish.archive import refresh_archive
from flows.report.study_report import write_study
from flows.stages import RunAlert, alerted
from flows.warehouse.build import build_study, landed_months, upgrade, warehouse_problem
from flows.warehouse.engines import open_marts, spark_missing


class StudyError(RuntimeError):
    """A study that cannot be made (a month of the range missing after its build, clusters that clash)."""


def study_name(clusters: list[str], first: Month, last: Month) -> str:
    return f"{'+'.join(clusters)}_{first}_{last}"


def study_dir(config: ClusterConfig, clusters: list[str], first: Month, last: Month) -> Path:
    """Where a study is archived: beside the monthly reports of its first cluster's config."""
    return config.reports_dir / "studies" / study_name(clusters, first, last)


def built_months(config: ClusterConfig, first: Month, last: Month) -> set[Month]:
    """The months from `first` to `last` whose marts the cluster's warehouse holds (none when it is
    missing or cannot be opened: building a month rebuilds it); a warehouse another version of the
    tool built is rebuilt first, from the landed months."""
    with run_lock(config):
        upgrade(config)
    if spark_missing(config) if config.warehouse.engine == "spark" else warehouse_problem(config.warehouse_path):
        return set()
    with open_marts(config) as marts:
        rows = marts.execute(
            "select month from fct_months_built where month between ? and ?", [str(first), str(last)]
        ).fetchall()
    return {Month.parse(month) for (month,) in rows}


@task(name="study-build", cache_policy=NO_CACHE)
def build_cluster_study(config: ClusterConfig, first: Month, last: Month) -> dict:
    """Build the cluster's periods with the study's range among them and read its figures."""
    with run_lock(config):
        landed = landed_months(config)
        if last not in landed:
            raise LandedMonthError(f"{config.cluster} {last} is not landed: build the month first")
        build_study(config, first, last, landed[last])
        period = Period.of_study(first, last)
        with open_marts(config) as marts:
            months_built, expected_months = totals(marts, period)["months_built"], len(month_range(first, last))
            if months_built != expected_months:
                raise StudyError(f"{months_built} of the {expected_months} months {first}..{last} are built")
            return cluster_figures(marts, period, config.analysis, range_inputs(landed, first, last))


def range_inputs(landed: dict[Month, Path], first: Month, last: Month) -> set[str]:
    """The inputs landed for every landed month of first..last: what the study's figures measured."""
    return set.intersection(*(set(read_manifest(landed[m]).sources) for m in month_range(first, last) if m in landed))


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


def run_study(plan: StudyPlan) -> dict:
    """Run a study's plan: each cluster's months not built yet first (a backfill's plan each, one
    month at a time, oldest first: a month's job runs carry the months before it; archived), then
    its periods with the study's range among them. The study goes to the first config's reports
    directory, `studies/<name>/`, and with `notify` to its email and webhook, once per set of
    figures (`resend`: again)."""
    months = month_range(plan.first, plan.last)
    first, last, configs = months[0], months[-1], list(plan.configs)
    figures = {}
    for config in configs:
        built = built_months(config, first, last)
        for month in (m for m in months if m not in built):
            rerun = f"reliability-report backfill --config {config.config_path} --from {month} --to {month}"
            with alerted(RunAlert(flow_run_info.id, config, f"{month}..{month}", rerun)):
                run_backfill(plan_backfill(config, month, month, force=True, email="none"))
        figures[config.cluster] = build_cluster_study(config, first, last)
    result = assemble_study(figures, months, reproduce(configs, first, last))
    names = [c.cluster for c in configs]
    target = study_dir(configs[0], names, first, last)
    subject = StudySubject(tuple(names), first, last, target)
    tables = {name: table for config in configs for name, table in range_tables(config, first, last).items()}
    with staged_replacement(target, keep_on=(PartialDeliveryError,)) as staged:
        write_study(staged, result, tables, published=last.end.date())
        held = None if plan.notify else "notify is off"
        outcome = deliver_report(configs[0], subject, staged, resend=plan.resend, held=held)
        if outcome.errors:
            raise PartialDeliveryError(f"{subject}: the study is in place but {'; '.join(outcome.errors)}")
    refresh_archive(configs[0].reports_dir)  # reports/index.html lists the study
    get_run_logger().info("study written to %s", target / "report.html")
    return {"study": str(target / "report.html"), "delivery": str(outcome), "summary": result["summary"]["text"]}
