"""The monthly pipeline as a Prefect flow: land → dbt build → metrics → data quality → report → deliver.

A month is built in one dbt build with the months built after it (their comparisons, trailing
windows and job runs read it), which are then reported again; a backfill lands its months, builds
them in one build and reports each with `built` (flows/backfill.py). Each stage is a Prefect task named after it, a thin wrapper around a plain function that is tested
on its own. The stages' state hooks print the progress lines, time each stage (its task run's time
in the Running state) and note the stage that failed; the flow's one failure hook names that stage
in the alert. No stage has Prefect retries: a live pull retries inside the landing, delivery retries
inside the SMTP and webhook clients (a retried task would send again), and the other stages are
deterministic, so running them again fails again.
"""

from __future__ import annotations

import shlex
import shutil
from concurrent.futures import Future
from datetime import datetime
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.logging.loggers import flow_run_logger
from prefect.runtime import flow_run as flow_run_info

from flows.core.atomic import clear_leftovers, staged_replacement
from flows.core.config import ClusterConfig
from flows.core.config_file import load_config
from flows.core.months import MONTH_RE, Month
from flows.core.runlock import run_lock
from flows.delivery.deliver import (
    DeliveryOutcome,
    Figures,
    PartialDeliveryError,
    deliver_report,
    send_alert,
    sent_before,
)
from flows.delivery.subject import MonthSubject
from flows.edge import checked_month, deployment_config
from flows.figures.coverage import observed_period
from flows.figures.summary import counts_line
from flows.ingest.land import land_month
from flows.ingest.manifest import LandedMonthError, Manifest, read_manifest
from flows.publish.archive import refresh_archive
from flows.report.artifact import publish_month_artifact
from flows.report.drawing import charts_ahead, drawing_process
from flows.stages import STAGE_HOOKS, MonthRun, failure, month_outcome, month_runs, progress
from flows.warehouse.build import build_months
from flows.warehouse.engines import open_marts

# The stages that import scipy (metrics), pandas and Great Expectations (quality), and matplotlib
# (render) are imported by their tasks: a run pays for each library when its stage starts
if TYPE_CHECKING:
    from flows.figures.month_metrics import MonthFigures
    from flows.quality.suites import SuiteResult
    from flows.report.charts import Chart


def config_path(parameter: str | dict) -> str:
    """The config file of a run's recorded `config` parameter: a path (a deployment's run), or the
    ClusterConfig the CLI passed, which Prefect records as its fields."""
    return parameter["config_path"] if isinstance(parameter, dict) else parameter


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
        return validate_month(config.warehouse_path, month, landed_dir=landed_dir, results_dir=results_dir,
                              marts=marts, no_jobs_declared=no_jobs)  # fmt: skip


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
    return {"command": command, "tool_version": version("cluster-reliability-report")}


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
    from flows.publish.reuse import unchanged_report
    from flows.report.render import report_paths, write_report

    full_metrics = report_metrics(config, month, figures, manifest, quality)
    if unchanged_report(config, month, full_metrics, figures.tables):
        shutil.copytree(config.report_dir(month), out_dir, dirs_exist_ok=True)
        written = report_paths(out_dir)
    else:
        drawn = charts.result() if charts is not None else None
        written = write_report(out_dir, full_metrics, figures.tables, drawn)
    return {name: config.report_dir(month) / path.relative_to(out_dir) for name, path in written.items()}


@task(name="deliver", cache_policy=NO_CACHE, **STAGE_HOOKS)
def deliver(config: ClusterConfig, month: Month, report_dir: Path, resend: bool, held: str | None) -> DeliveryOutcome:
    """Send the report (archive it only, when `held` gives the reason). A delivery that reached
    somebody but not every channel raises PartialDeliveryError: the report still goes in place (see
    monthly_report)."""
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


def send_failure_alert(flow, flow_run, what: str, stage: str, error: str, rerun: str, config=None) -> None:
    """Say which run failed, at which stage and why, in the run log and by email to `alert_to`."""
    logger = flow_run_logger(flow_run, flow)
    logger.error("%s of cluster %s failed at stage %s: %s", what, flow_run.parameters.get("cluster"), stage, error)
    try:
        config = config or load_config(config_path(flow_run.parameters["config"]))
        logger.info(send_alert(config, what, stage, error, rerun))
    except Exception as exc:  # a hook must not hide the run's own failure
        logger.error("failure alert not sent: %s: %s", type(exc).__name__, exc)


def alert_on_failure(flow, flow_run, state) -> None:
    """The monthly-report flow's failure hook (failed or crashed)."""
    params, run = flow_run.parameters, month_runs.get(str(flow_run.id))
    what = str(run.month) if run else params.get("month") or str(Month.last_full(flow_run.expected_start_time))
    stage, error = failure(state)
    rerun = f"reliability-report run --config {config_path(params['config'])} --month {what}"
    send_failure_alert(flow, flow_run, what, stage, error, rerun, run.config if run else None)


def landed_before(config: ClusterConfig, month: Month) -> Manifest | None:
    """The manifest of the month's landed records, if a run landed them and they are whole (else None: land again)."""
    try:
        return read_manifest(config.landed_dir(month))
    except LandedMonthError:
        return None


def previous_figures(report_dir: Path) -> Figures | None:
    """The figures of the month's report as it was before this run (none if there was none)."""
    try:
        return Figures.of(report_dir)
    except (OSError, ValueError, KeyError, TypeError):  # no report, or one a killed run damaged
        return None


def built_months_after(config: ClusterConfig, month: Month) -> list[Month]:
    """The cluster's months after `month` that have a report, oldest first."""
    root = config.reports_dir / config.cluster
    found = [p.name for p in root.iterdir() if MONTH_RE.fullmatch(p.name)] if root.is_dir() else []
    return [
        m for m in map(Month.parse, sorted(found)) if m > month and (config.report_dir(m) / "metrics.json").is_file()
    ]


def landed_later_months(config: ClusterConfig, month: Month) -> dict[Month, Path]:
    """The months built after `month` (built_months_after) whose landed records are on disk: the
    ones a build of `month` builds again with it."""
    return {
        later: config.landed_dir(later) for later in built_months_after(config, month) if landed_before(config, later)
    }


def refresh_later_months(
    config: ClusterConfig, month: Month, notify: bool = True, built: frozenset[Month] = frozenset()
) -> list[dict]:
    """Report again, oldest first, every month built after `month`: their month-over-month change,
    trailing windows, trend and job runs that began earlier depend on the months before them, so
    figures never depend on the order months were built in. The months in `built` were built with
    `month`; any other is rebuilt from the records it landed. A refreshed month whose figures went
    out is sent again only as a correction, when they changed (unless not `notify`); one never sent
    is archived. Returns one outcome per month (month_outcome)."""
    outcomes = []
    later_months = built_months_after(config, month)
    with drawing_process(len(later_months)):
        for later in later_months:
            progress.info("%s %s: refreshing, as it follows %s", config.cluster, later, month)
            state = monthly_report(
                cluster=config.cluster,
                config=config,
                month=str(later),  # built once, so reportable (a partial month is refreshed as far as it was landed)
                notify=notify,
                refresh=True,
                built=later in built,
                return_state=True,
            )
            outcome = month_outcome(config, later, state, "refreshed")
            progress.info("%s %s: %s: %s", config.cluster, later, outcome["outcome"], outcome["detail"])
            outcomes.append(outcome)
    return outcomes


@flow(name="monthly-report", on_failure=[alert_on_failure], on_crashed=[alert_on_failure])
def monthly_report(
    cluster: str,
    config: ClusterConfig | str,
    month: Month | None = None,
    resend: bool = False,
    partial: bool = False,
    as_of: datetime | str | None = None,
    notify: bool = True,
    refresh: bool = False,
    update_later: bool = True,
    no_jobs_ran: bool = False,
    built: bool = False,
) -> dict:
    """Build, check and report one cluster's month (default: the last full month); returns a summary.

    Email and the webhook go out once per set of figures; `resend` sends the unchanged report
    again; without `notify` the report is archived only. With `update_later` (default), every month
    built after this one is built with it in one dbt build, then reported again
    (`refresh_later_months`; the summary's `refreshed`, each with the parts of its figures that
    changed): its comparisons, trailing windows and job-run histories include this month's
    records. A `refresh` rebuilds the month from the records it landed before (no pull) and sends
    it only as a correction where it was sent. `built`: the caller built the month from its landed
    records (a backfill's one build, or the build of an earlier month); it is only reported. The
    new report replaces the month's previous one once delivery is decided: a delivery that reaches
    nobody leaves the previous report (and the sent-log) as they were. A month that has not ended
    needs `partial`. `as_of` (ISO 8601) says when the records were dumped (default: the pull time of
    a live pull, else the latest time in the records). A month with no job record is refused
    unless `no_jobs_ran` (the operator says no job ran): its report then says so.

    A deployment's run gives `config` as the config file's path, `month` as YYYY-MM (made a Month by
    the parameter's validation; none: the month before the run's scheduled time) and `as_of` as
    text: they pass the edge here (flows/edge.py), as a command's do in the CLI. Every other caller
    (the CLI, a backfill, a refresh) is past the edge: it gives the ClusterConfig and the dump time
    it checked, with the month it checked (as text, see Month), and nothing is checked again."""
    if isinstance(config, str):
        cfg = deployment_config(config, cluster)
        report = month or Month.last_full(flow_run_info.scheduled_start_time)  # a late start reports its own month
        dumped_at = checked_month(cfg, report, partial, as_of, no_jobs_ran)
    else:
        cfg, report, dumped_at = config, month, as_of
    run = month_runs[str(flow_run_info.id)] = MonthRun(cfg, report)
    held = None if notify else "notify is off"
    if refresh and notify and not sent_before(cfg, MonthSubject(report)):
        held = "refreshed after an earlier month was built; it was never sent"
    with run_lock(cfg):  # one run per cluster, and per warehouse (two configs may share one), writes at a time
        before = previous_figures(cfg.report_dir(report))
        if (refresh or built) and (manifest := landed_before(cfg, report)):
            landed = manifest.landed_at or "an earlier run"
            progress.info("%s %s: land: the records landed on %s", cluster, report, landed)
        else:
            clear_killed_runs(cfg)
            manifest = pull_and_land(cfg, report, dumped_at, no_jobs_ran)
        landed_dir = cfg.landed_dir(report)
        later = landed_later_months(cfg, report) if update_later and not refresh else {}
        dbt_statuses = {} if built else build_warehouse(cfg, {report: landed_dir, **later})
        figures = analyse(cfg, report, manifest)  # in a backfill, its charts drawn while it is checked:
        charts = charts_ahead(report_metrics(cfg, report, figures, manifest, quality=[]))
        quality = check_quality(cfg, report, landed_dir, manifest)
        # swapped in unless delivery reached nobody; a partial delivery fails the run after the swap
        with staged_replacement(cfg.report_dir(report), keep_on=(PartialDeliveryError,)) as staged:
            paths = render(cfg, report, figures, quality, manifest, staged, charts)
            delivery = deliver(cfg, report, staged, resend, held)
        in_place(cfg, report)
        refreshed = refresh_later_months(cfg, report, notify, frozenset(later)) if update_later and not refresh else []
    get_run_logger().info("report for %s %s written to %s", cluster, report, paths["report"])
    publish_month_artifact(paths["metrics"], paths["report"], str(delivery))
    del month_runs[str(flow_run_info.id)]
    return {
        "changed": None if before is None else Figures.of(cfg.report_dir(report)).changed_parts(before.sections),
        "refreshed": refreshed,
        "cluster": cluster,
        "month": str(report),
        "report": str(paths["report"]),
        "metrics": str(paths["metrics"]),
        "dbt": dbt_statuses,
        "delivery": str(delivery),
        "counts": counts_line(figures.metrics),  # the attempts and failures as every output says them
        "period_notice": observed_period(report, manifest)["notice"],  # what the report says of a partial month
        "stage_seconds": run.seconds,
    }
