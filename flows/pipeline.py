"""A month's stages as Prefect tasks: land → dbt build → metrics → data quality → report → deliver.

The one flow (flows/run_plan.py) runs them for each month its plan names (flows/plan.py): a month
is built in one dbt build with the months built after it (their comparisons, trailing windows and
job runs read it), which are then reported again (`refresh_months`); a backfill lands its months,
builds them in one build and reports each with `built` (flows/backfill.py). Each stage is a Prefect
task named after it, a thin wrapper around a plain function that is tested on its own. The stages'
state hooks print the progress lines, time each stage (its task run's time in the Running state)
and note the stage that failed; the flow's one failure hook names that stage in the alert. No
stage has Prefect retries: a live pull retries inside the landing, delivery retries inside the SMTP
and webhook clients (a retried task would send again), and the other stages are deterministic, so
running them again fails again.
"""

from __future__ import annotations

import shlex
import shutil
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run as flow_run_info

from flows.config.cluster import ClusterConfig
from flows.core.atomic import clear_leftovers, staged_replacement
from flows.core.months import Month
from flows.core.outcome import MonthOutcome, MonthSummary
from flows.delivery.deliver import (
    DeliveryOutcome,
    Figures,
    PartialDeliveryError,
    deliver_report,
    send_alert,
    sent_before,
)
from flows.delivery.subject import MonthSubject
from flows.figures.coverage import observed_period
from flows.figures.read import EarlierSchemaError, read_document
from flows.ingest.land import land_month
from flows.ingest.manifest import Manifest, read_manifest
from flows.plan import MonthStep, landed_before
from flows.publish.archive import refresh_archive
from flows.report.artifact import publish_month_artifact
from flows.report.drawing import charts_ahead, drawing_process
from flows.stages import (
    STAGE_HOOKS,
    MonthRun,
    current_month,
    described,
    month_failed,
    month_outcome,
    progress,
    stages_of,
)
from flows.warehouse.build import build_months
from flows.warehouse.engines import open_marts
from flows.warehouse.schema_version import tool_version

# The stages that import scipy (metrics), pandas and Great Expectations (quality), and matplotlib
# (render) are imported by their tasks: a run pays for each library when its stage starts
if TYPE_CHECKING:
    from flows.figures.month_metrics import MonthFigures
    from flows.quality.suites import SuiteResult
    from flows.report.charts import Chart


def clear_killed_runs(config: ClusterConfig) -> None:
    """Remove what killed runs of the cluster left behind, whichever month they ran: temporary and
    superseded copies of raw, landed and report directories (a run's own month is cleared anyway)."""
    for parent in (config.data_dir / "raw", config.data_dir / "landed", config.reports_dir):
        clear_leftovers(parent / config.cluster)


@task(name="land", cache_policy=NO_CACHE, **STAGE_HOOKS)
def pull_and_land(config: ClusterConfig, month: Month, as_of: datetime | None, no_jobs_ran: bool = False) -> Manifest:
    """Land the month; its manifest, read once for the run's stages."""
    return read_manifest(land_month(config, month, as_of, no_jobs_ran))


@task(name="dbt", cache_policy=NO_CACHE, **STAGE_HOOKS)
def build_warehouse(config: ClusterConfig, months: dict[Month, Path]) -> dict[str, int]:
    return build_months(config, months)


@task(name="quality", cache_policy=NO_CACHE, **STAGE_HOOKS)
def check_quality(config: ClusterConfig, month: Month, landed_dir: Path, manifest: Manifest) -> list[SuiteResult]:
    from flows.quality.suites import validate_month

    results_dir = config.data_dir / "quality" / config.cluster / str(month)
    no_jobs = manifest.no_jobs_declared  # --no-jobs-ran: no rows expected
    with open_marts(config) as marts:
        return validate_month(
            config.warehouse_path,
            month,
            landed_dir=landed_dir,
            results_dir=results_dir,
            marts=marts,
            no_jobs_declared=no_jobs,
        )


@task(name="metrics", cache_policy=NO_CACHE, **STAGE_HOOKS)
def analyse(config: ClusterConfig, month: Month, manifest: Manifest) -> MonthFigures:
    from flows.figures.month_metrics import month_figures

    with open_marts(config) as marts:  # what landed decides what the figures measured
        return month_figures(marts, month, config.analysis, manifest.sources)


def report_metrics(
    config: ClusterConfig, month: Month, figures: MonthFigures, manifest: Manifest, quality: list[SuiteResult]
) -> dict:
    """The month's full metrics, as its report shows them: the figures and what they were made from."""
    return {
        **figures.metrics,
        "cluster": config.cluster,
        # a month its records observe only in part (a partial month) says so at the top of every output
        "period": observed_period(month, manifest),
        "inputs": manifest.inputs(),
        "quarantine_sample": manifest.quarantine_sample,
        "data_quality": [vars(q) for q in quality],
        "reproduce": reproduce(config.config_path, month),
        # the operator said no job ran (--no-jobs-ran), and none is recorded
        **({"no_jobs_declared": True} if manifest.no_jobs_declared else {}),
    }


def reproduce(config_path: Path, month: Month) -> dict:
    """How to rebuild the month: the command and the tool's version (the `reproduce` block)."""
    command = shlex.join(["reliability-report", "run", "--month", str(month), "--config", str(config_path)])
    return {"command": command, "tool_version": tool_version()}


@task(name="render", cache_policy=NO_CACHE, **STAGE_HOOKS)
def render(
    config: ClusterConfig,
    month: Month,
    figures: MonthFigures,
    quality: list[SuiteResult],
    manifest: Manifest,
    out_dir: Path,
    charts: Future[dict[str, Chart]] | None = None,
) -> dict:
    """Write the report into `out_dir` (a copy of the report in place when it would be the same:
    flows/publish/reuse.py); returns the paths it will have in the month's report directory.
    `charts`: the month's charts being drawn in the drawing process (flows/report/drawing.py)."""
    from flows.explain.pages import write_month_pages
    from flows.publish.reuse import unchanged_report
    from flows.report.render import report_paths, write_report

    full_metrics = report_metrics(config, month, figures, manifest, quality)
    if unchanged_report(config, month, full_metrics, figures.tables):
        shutil.copytree(config.report_dir(month), out_dir, dirs_exist_ok=True)
        written = report_paths(out_dir)
    else:
        drawn = charts.result() if charts is not None else None
        written = write_report(out_dir, full_metrics, figures.tables, drawn, config.archive_url)
        write_month_pages(config, read_document(out_dir / "metrics.json"), out_dir)
    return {name: config.report_dir(month) / path.relative_to(out_dir) for name, path in written.items()}


@task(name="deliver", cache_policy=NO_CACHE, **STAGE_HOOKS)
def deliver(config: ClusterConfig, month: Month, report_dir: Path, resend: bool, held: str | None) -> DeliveryOutcome:
    """Send the report (archive it only, when `held` gives the reason). A delivery that reached
    somebody but not every channel raises PartialDeliveryError: the report still goes in place (see
    report_month)."""
    outcome = deliver_report(config, MonthSubject(month), report_dir, resend=resend, held=held)
    if outcome.errors:
        raise PartialDeliveryError(f"{month}: the report is in place but {'; '.join(outcome.errors)}")
    return outcome


def in_place(config: ClusterConfig, month: Month) -> None:
    """The month's new report is in place: note what rendered it (a refresh that would render the
    same copies it: flows/publish/reuse.py), then refresh reports/index.html and the reports' links."""
    from flows.publish.reuse import record_rendered

    record_rendered(config, month)
    refresh_archive(config.reports_dir, config.cluster)


def previous_figures(report_dir: Path) -> Figures | None:
    """The figures of the month's report as it was before this run (none if there was none)."""
    try:
        return Figures.of(report_dir)
    except EarlierSchemaError:  # a report of schema version 2: its figures' digests only (changed_parts)
        return Figures.as_written(report_dir)
    except (OSError, ValueError, KeyError, TypeError):  # no report, or one a killed run damaged
        return None


def report_month(
    config: ClusterConfig,
    step: MonthStep,
    later: dict[Month, Path] | None = None,
    as_of: datetime | None = None,
    no_jobs_ran: bool = False,
) -> MonthSummary:
    """A month's stages, under the cluster's lock (the caller's), as their tasks: land it (unless
    `step.built`, or a refresh, found its whole landing), build it (unless built) with `later`,
    compute, check, render and deliver it; returns its summary. The new report replaces the month's
    previous one once delivery is decided: a delivery that reaches nobody leaves the previous report
    (and the sent-log) as they were."""
    from flows.figures.read import month_document

    month = step.month
    held = None if step.notify else "notify is off"
    if step.refresh and step.notify and not sent_before(config, MonthSubject(month)):
        held = "refreshed after an earlier month was built; it was never sent"
    with stages_of(MonthRun(config, month, flow_run_info.id)) as run:
        before = previous_figures(config.report_dir(month))
        if (step.refresh or step.built) and (manifest := landed_before(config, month)):
            landed = manifest.landed_at or "an earlier run"
            progress.info("%s %s: land: the records landed on %s", config.cluster, month, landed)
        else:
            clear_killed_runs(config)
            manifest = pull_and_land(config, month, as_of, no_jobs_ran)
        landed_dir = config.landed_dir(month)
        dbt_statuses = {} if step.built else build_warehouse(config, {month: landed_dir, **(later or {})})
        figures = analyse(config, month, manifest)  # in a backfill, its charts drawn while it is checked:
        charts = charts_ahead(lambda: month_document(report_metrics(config, month, figures, manifest, quality=[])))
        quality = check_quality(config, month, landed_dir, manifest)
        # swapped in unless delivery reached nobody; a partial delivery fails the run after the swap
        with staged_replacement(config.report_dir(month), keep_on=(PartialDeliveryError,)) as staged:
            paths = render(config, month, figures, quality, manifest, staged, charts)
            delivery = deliver(config, month, staged, step.resend, held)
        in_place(config, month)
    get_run_logger().info("report for %s %s written to %s", config.cluster, month, paths["report"])
    publish_month_artifact(paths["metrics"], paths["report"], str(delivery))
    return MonthSummary(
        cluster=config.cluster,
        month=str(month),
        report=str(paths["report"]),
        metrics=str(paths["metrics"]),
        dbt=dbt_statuses,
        delivery=str(delivery),
        counts=figures.counts,
        period_notice=observed_period(month, manifest)["notice"],
        stage_seconds=run.seconds,
        changed=None if before is None else Figures.of(config.report_dir(month)).changed_parts(before.sections),
    )


def refresh_months(config: ClusterConfig, after: Month, steps: tuple[MonthStep, ...]) -> list[MonthOutcome]:
    """Report again, oldest first, the months built after `after` (flows/plan.py refreshes_after);
    returns one outcome per month (month_outcome): a month that fails does not stop the others."""
    outcomes = []
    with drawing_process(len(steps)):
        for step in steps:
            progress.info("%s %s: refreshing, as it follows %s", config.cluster, step.month, after)
            try:
                outcome = month_outcome(report_month(config, step), step.outcome)
            except Exception as error:  # the month's outcome says it; the next month is refreshed still
                outcome = alerted_failure(config, step.month, error)
            progress.info("%s %s: %s: %s", config.cluster, step.month, outcome.outcome, outcome.detail)
            outcomes.append(outcome)
    return outcomes


def alerted_failure(config: ClusterConfig, month: Month, error: Exception) -> MonthOutcome:
    """A month of a backfill or a refresh failed: its outcome, and its failure alert to `alert_to`
    (the other months go on; the run's own alert, if it fails, is the flow's)."""
    run = current_month.get() or MonthRun(config, month, flow_run_info.id)
    outcome = month_failed(run, error)
    logger, stage = get_run_logger(), outcome.stage
    logger.error("%s of cluster %s failed at stage %s: %s", month, config.cluster, stage, described(error))
    rerun = f"reliability-report run --config {config.config_path} --month {month}"
    try:
        logger.info(send_alert(config, str(month), stage, described(error), rerun))
    except Exception as exc:  # the month's outcome is what the run reports
        logger.error("failure alert not sent: %s: %s", type(exc).__name__, exc)
    return outcome
