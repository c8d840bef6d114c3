"""The monthly pipeline as a Prefect flow: land → dbt build → data quality → metrics → report → deliver.

Each task is a thin wrapper around a plain function that is tested on its own.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.exceptions import ParameterTypeError
from prefect.logging.loggers import flow_run_logger
from prefect.runtime import flow_run as flow_run_info
from pydantic import Field

from flows.analysis import compute_metrics, detail_tables
from flows.artifact import publish_month_artifact
from flows.atomic import staged_replacement
from flows.config import ClusterConfig, ConfigError, load_config
from flows.delivery import DeliveryOutcome, deliver_report, send_alert
from flows.land import land_month
from flows.mailer import DeliveryError
from flows.months import MONTH_RE, Month, observed_end, parse_as_of, requested_month
from flows.quality import SuiteResult, validate_month
from flows.report import reproduce, write_report
from flows.runlock import cluster_lock
from flows.warehouse import build_month

# A flow parameter `month`: the server checks the pattern when a run is created (`prefect deployment run`).
MonthParam = Annotated[str, Field(pattern=MONTH_RE.pattern, description="YYYY-MM")]
# Stage-by-stage progress with counts: the CLI prints this logger; flow runs log it to Prefect too.
progress = logging.getLogger("flows.progress")
STAGE_NOTE = "stage: "  # added to a failing stage's exception, for the failure alert


def report_month(text: str | None, now: datetime | None = None, partial: bool = False) -> Month:
    """The month to report: `text` (flows/months.requested_month) or, by default, the month before
    the run's scheduled time (a scheduled run that starts late still reports its own month)."""
    if not text:
        return Month.last_full(now or flow_run_info.scheduled_start_time)
    return requested_month(text, now, partial)


@task(name="pull-and-land", cache_policy=NO_CACHE)
def pull_and_land(config: ClusterConfig, month: Month, as_of: datetime | None) -> Path:
    return land_month(config, month, as_of)


@task(name="dbt-build", cache_policy=NO_CACHE)
def build_warehouse(config: ClusterConfig, month: Month, landed_dir: Path) -> dict[str, int]:
    return build_month(config, month, landed_dir)


@task(name="data-quality", cache_policy=NO_CACHE)
def check_quality(config: ClusterConfig, month: Month, landed_dir: Path) -> list[SuiteResult]:
    results_dir = config.data_dir / "quality" / config.cluster / str(month)
    return validate_month(config.warehouse_path, month, landed_dir=landed_dir, results_dir=results_dir)


@task(name="metrics", cache_policy=NO_CACHE)
def analyse(config: ClusterConfig, month: Month) -> dict:
    return compute_metrics(config.warehouse_path, month, config.analysis)


@task(name="render-report", cache_policy=NO_CACHE)
def render(
    config: ClusterConfig, month: Month, metrics: dict, quality: list[SuiteResult], landed_dir: Path, out_dir: Path
) -> dict:
    """Write the report into `out_dir`; returns the paths it will have in the month's report directory."""
    inputs = json.loads((landed_dir / "manifest.json").read_text())
    quality_rows = [vars(q) for q in quality]
    as_of = datetime.fromisoformat(inputs["as_of"]["time"])
    period_end = observed_end(month, as_of)
    full_metrics = {
        **metrics,
        "cluster": config.cluster,
        # a month observed only up to its dump (a partial month) says so at the top of the report
        "period": {
            "start": month.start.replace(tzinfo=None).isoformat(),
            "end": period_end.isoformat(),
            "complete": period_end == month.end.replace(tzinfo=None),
        },
        "inputs": inputs["sources"],
        "quarantine_sample": inputs["quarantine_sample"],
        "data_quality": quality_rows,
        "reproduce": reproduce(config.config_path, str(month)),
    }
    tables = detail_tables(config.warehouse_path, month, config.analysis)
    written = write_report(out_dir, full_metrics, tables)
    return {name: config.report_dir(month) / path.relative_to(out_dir) for name, path in written.items()}


@task(name="deliver", cache_policy=NO_CACHE)
def deliver(config: ClusterConfig, month: Month, report_dir: Path, resend: bool, notify: bool) -> DeliveryOutcome:
    held = None if notify else "notify is off"
    return deliver_report(config, str(month), report_dir, resend=resend, held=held)


def stage_counts(stage: str, result) -> str:
    """What a stage produced, in a few words with counts, for the progress lines."""
    if stage == "land":
        sources = json.loads((result / "manifest.json").read_text())["sources"]
        return f"{sum(s.get('records', 0) for s in sources.values()):,} records from {len(sources)} sources"
    if stage == "dbt":
        return f"{sum(result.values())} dbt nodes ({', '.join(f'{n} {s}' for s, n in sorted(result.items()))})"
    if stage == "quality":
        passed = sum(q.successful for q in result)
        return f"{passed}/{sum(q.evaluated for q in result)} expectations met in {len(result)} suites"
    if stage == "metrics":
        return (
            f"{result['totals']['attempts']:,} attempts, {result['totals']['infra_failures']:,} infrastructure failures"
        )
    if stage == "render":
        return f"{result['report']} (in place once delivery is decided)"
    return str(result)


def failure(state) -> tuple[str, str]:
    """(stage, error) of a failed run's state: the stage from the note `timed` added."""
    error = state.result(raise_on_failure=False)
    if not isinstance(error, BaseException):
        return "start", str(state.message)
    notes = [n for n in getattr(error, "__notes__", ()) if n.startswith(STAGE_NOTE)]
    stage = "parameters" if isinstance(error, ParameterTypeError) else "start"
    return (notes[-1].removeprefix(STAGE_NOTE) if notes else stage), f"{type(error).__name__}: {error}"


def alert_on_failure(flow, flow_run, state) -> None:
    """Flow hook: say which run failed, at which stage and why, in the run log and by email."""
    logger = flow_run_logger(flow_run, flow)
    params = flow_run.parameters
    if "from_month" in params:  # the backfill flow
        what = f"{params['from_month']}..{params['to_month']}"
        rerun = f"reliability-report backfill --config {params['config']} --from {params['from_month']} --to {params['to_month']}"
    else:
        what = params.get("month") or str(Month.last_full(flow_run.expected_start_time))
        rerun = f"reliability-report run --config {params['config']} --month {what}"
    stage, error = failure(state)
    logger.error("%s of cluster %s failed at stage %s: %s", what, params.get("cluster"), stage, error)
    try:
        logger.info(send_alert(load_config(params["config"]), what, stage, error, rerun))
    except Exception as exc:  # a hook must not hide the run's own failure
        logger.error("failure alert not sent: %s: %s", type(exc).__name__, exc)


@flow(name="monthly-report", on_failure=[alert_on_failure], on_crashed=[alert_on_failure])
def monthly_report(
    cluster: str,
    config: str,
    month: MonthParam | None = None,
    resend: bool = False,
    partial: bool = False,
    as_of: str | None = None,
    notify: bool = True,
) -> dict:
    """Build, check and report one cluster's month (default: the last full month); returns a summary.

    Email and the webhook go out once per set of figures; `resend` sends the unchanged report
    again; without `notify` the report is archived only. The new report replaces the month's
    previous one once delivery is decided: a delivery that reaches nobody leaves the previous
    report (and the sent-log) as they were. A month that has not ended needs `partial`. `as_of` (ISO 8601) says when the records were dumped
    (default: the pull time of a live pull, else the latest time in the records)."""
    logger = get_run_logger()
    report = report_month(month, partial=partial)
    dumped_at = parse_as_of(as_of)
    month = str(report)
    cfg = load_config(config)
    if cfg.cluster != cluster:
        raise ConfigError(f"{cfg.config_path}: describes cluster {cfg.cluster!r}, not {cluster!r}")
    stage_seconds: dict[str, float] = {}

    def timed(stage: str, run_task, *args):
        progress.info("%s %s: %s ...", cluster, month, stage)
        started = time.perf_counter()
        try:
            result = run_task(*args)
        except BaseException as exc:
            exc.add_note(f"{STAGE_NOTE}{stage}")
            raise
        stage_seconds[stage] = round(time.perf_counter() - started, 2)
        line = f"{cluster} {month}: {stage} done in {stage_seconds[stage]:.1f} s: {stage_counts(stage, result)}"
        progress.info(line)
        logger.info(line)
        return result

    with cluster_lock(cfg.data_dir, cluster):  # one run per cluster writes at a time
        landed_dir = timed("land", pull_and_land, cfg, report, dumped_at)
        dbt_statuses = timed("dbt", build_warehouse, cfg, report, landed_dir)
        quality = timed("quality", check_quality, cfg, report, landed_dir)
        metrics = timed("metrics", analyse, cfg, report)
        with staged_replacement(cfg.report_dir(report)) as staged:  # swapped in unless delivery reached nobody
            paths = timed("render", render, cfg, report, metrics, quality, landed_dir, staged)
            delivery = timed("deliver", deliver, cfg, report, staged, resend, notify)
    if delivery.errors:  # it reached somebody: the report is in place; say what failed
        error = DeliveryError(f"{month}: the report is in place but {'; '.join(delivery.errors)}")
        error.add_note(f"{STAGE_NOTE}deliver")
        raise error
    logger.info("report for %s %s written to %s", cluster, month, paths["report"])
    publish_month_artifact(paths["metrics"], paths["report"], str(delivery))
    return {
        "cluster": cluster,
        "month": month,
        "report": str(paths["report"]),
        "metrics": str(paths["metrics"]),
        "dbt": dbt_statuses,
        "delivery": str(delivery),
        "attempts": metrics["totals"]["attempts"],
        "infra_failures": metrics["totals"]["infra_failures"],
        "stage_seconds": stage_seconds,
    }
