"""The monthly pipeline as a Prefect flow: land → dbt build → data quality → metrics → report → deliver.

Each task is a thin wrapper around a plain function that is tested on its own.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.analysis import compute_metrics, detail_tables
from flows.config import ClusterConfig, ConfigError, load_config
from flows.delivery import deliver_report
from flows.land import land_month
from flows.months import Month
from flows.quality import SuiteResult, validate_month
from flows.report import reproduce, write_report
from flows.warehouse import build_month


@task(name="pull-and-land", cache_policy=NO_CACHE)
def pull_and_land(config: ClusterConfig, month: Month) -> Path:
    return land_month(config, month)


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
def render(config: ClusterConfig, month: Month, metrics: dict, quality: list[SuiteResult], landed_dir: Path) -> dict:
    inputs = json.loads((landed_dir / "manifest.json").read_text())
    quality_rows = [vars(q) for q in quality]
    full_metrics = {
        **metrics,
        "cluster": config.cluster,
        "inputs": inputs["sources"],
        "quarantine_sample": inputs["quarantine_sample"],
        "data_quality": quality_rows,
        "reproduce": reproduce(config.config_path, str(month)),
    }
    tables = detail_tables(config.warehouse_path, month, config.analysis)
    return write_report(config.report_dir(month), full_metrics, tables)


@task(name="deliver", cache_policy=NO_CACHE)
def deliver(config: ClusterConfig, month: Month, paths: dict) -> str:
    return deliver_report(config, str(month), paths)


@flow(name="monthly-report")
def monthly_report(cluster: str, config: str, month: str | None = None) -> dict:
    """Build, check and report one cluster's month (default: the last full month); returns a summary."""
    logger = get_run_logger()
    report_month = Month.parse(month) if month else Month.last_full()
    month = str(report_month)
    cfg = load_config(config)
    if cfg.cluster != cluster:
        raise ConfigError(f"{cfg.config_path}: describes cluster {cfg.cluster!r}, not {cluster!r}")
    stage_seconds: dict[str, float] = {}

    def timed(stage: str, run_task, *args):
        started = time.perf_counter()
        result = run_task(*args)
        stage_seconds[stage] = round(time.perf_counter() - started, 2)
        return result

    landed_dir = timed("land", pull_and_land, cfg, report_month)
    dbt_statuses = timed("dbt", build_warehouse, cfg, report_month, landed_dir)
    quality = timed("quality", check_quality, cfg, report_month, landed_dir)
    metrics = timed("metrics", analyse, cfg, report_month)
    paths = timed("render", render, cfg, report_month, metrics, quality, landed_dir)
    delivery = timed("deliver", deliver, cfg, report_month, paths)
    logger.info("report for %s %s written to %s", cluster, month, paths["report"])
    return {
        "cluster": cluster,
        "month": month,
        "report": str(paths["report"]),
        "metrics": str(paths["metrics"]),
        "dbt": dbt_statuses,
        "delivery": delivery,
        "attempts": metrics["totals"]["attempts"],
        "infra_failures": metrics["totals"]["infra_failures"],
        "stage_seconds": stage_seconds,
    }
