"""Backfill: a range of past months of one cluster, as its plan says (flows/plan.py
plan_backfill, which decides what is skipped); or several clusters side by side, each in its own
process.

A cluster's months are landed one by one, then built in ONE dbt build with the months built after
the range (each month's incremental marts and run history follow from the months before it: one
build computes them all), then each is checked, computed, rendered and delivered (`built`),
oldest first, under the cluster lock, and the months built after the range are reported again
(flows/pipeline.py `refresh_months`). A month whose landing failed is reported failed; the others
still build. Clusters share nothing (warehouse, lock, data directories), so `backfill-clusters`
runs their backfills at the same time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from prefect import get_client, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import wait
from prefect.runtime import flow_run as flow_run_info
from prefect.task_runners import ThreadPoolTaskRunner

from flows.config.cluster import ClusterConfig
from flows.core.errors import EXIT_FAILED, EXIT_INPUT, exit_code, is_input_error
from flows.core.escape import printable_lines
from flows.core.months import Month
from flows.core.outcome import MonthOutcome
from flows.core.runlock import run_lock
from flows.delivery.deliver import send_alert
from flows.pipeline import (
    alerted_failure,
    build_warehouse,
    clear_killed_runs,
    pull_and_land,
    refresh_months,
    report_month,
)
from flows.plan import (
    BackfillPlan,
    ClustersPlan,
    EmailChoice,
    MonthStep,
    landed_before,
    landed_later_months,
    refreshes_after,
)
from flows.report.artifact import publish_backfill_artifact
from flows.report.drawing import drawing_process
from flows.stages import (
    MonthRun,
    described,
    failed_outcome,
    month_outcome,
    progress,
    stages_of,
)
from flows.warehouse.batches import build_batches, describe_batches


class BackfillError(RuntimeError):
    """Some months failed; exit 2 when each of them failed on its inputs (flows/core/errors.py), else 1.
    `stages` names each failed month's stage (`2026-09 land, 2026-10 dbt`), for the alert."""

    def __init__(self, message: str, *, inputs_only: bool, stages: str = "") -> None:
        super().__init__(message)
        self.exit_code = EXIT_INPUT if inputs_only else EXIT_FAILED
        self.stages = stages


def run_backfill(plan: BackfillPlan) -> list[MonthOutcome]:
    """Run a backfill's plan (flows/plan.py plan_backfill) under the cluster's lock; returns one
    entry per month: month, outcome (built, refreshed, skipped, failed) and detail. Raises
    BackfillError when a month failed."""
    cfg, months = plan.config, plan.months
    outcomes = {month: MonthOutcome(str(month), "skipped", status) for month, status in plan.skipped}
    steps = {step.month: step for step in plan.reports}
    with run_lock(cfg):
        landed = land_months(cfg, {m: step.refresh for m, step in steps.items()}, plan.no_jobs_ran, outcomes)
        later = landed_later_months(cfg, months[-1]) if landed else {}
        # its process starts while the months are built (flows/report/drawing.py)
        with drawing_process(len(landed) + len(later)):
            built = build_months_once(cfg, {**landed, **later}, outcomes)
            for i, month in enumerate(months, 1):
                if month in landed and built:
                    outcomes[month] = reported(cfg, steps[month])
                outcome = outcomes[month]
                progress.info(
                    "[%d/%d] %s %s: %s: %s", i, len(months), cfg.cluster, month, outcome.outcome, outcome.detail
                )
                get_run_logger().info("%s: %s: %s", outcome.month, outcome.outcome, outcome.detail)
            refreshes = refreshes_after(cfg, months[-1], plan.email != "none", tuple(later)) if built else ()
            refreshed = refresh_months(cfg, months[-1], refreshes)
    outcomes_list = [outcomes[month] for month in months] + refreshed
    publish_backfill_artifact(cfg.cluster, str(months[0]), str(months[-1]), outcomes_list)
    failed = [o for o in outcomes_list if o.outcome == "failed"]
    if failed:
        raise BackfillError(
            f"{len(failed)} of {len(outcomes_list)} months failed: "
            + "; ".join(f"{o.month}: {o.detail}" for o in failed),
            inputs_only=all(o.input_error for o in failed),
            stages=", ".join(f"{o.month} {o.stage}" for o in failed),
        )
    return outcomes_list


def reported(config: ClusterConfig, step: MonthStep) -> MonthOutcome:
    """A month of the range, built by the backfill's build, reported: its outcome."""
    try:
        return month_outcome(report_month(config, step), step.outcome, step.note)
    except Exception as error:  # the month's outcome says it; the next month is reported still
        return alerted_failure(config, step.month, error)


def land_months(
    config: ClusterConfig, months: dict[Month, bool], no_jobs_ran: bool, outcomes: dict[Month, MonthOutcome]
) -> dict[Month, Path]:
    """Land each of `months` (-> whether it was reported before: then the records it landed are
    used, when whole); returns the landed directories. A month whose landing failed gets its
    failed outcome in `outcomes` and is left out."""
    clear_killed_runs(config)
    landed = {}
    for i, (month, reported) in enumerate(months.items(), 1):
        progress.info("[%d/%d] %s %s", i, len(months), config.cluster, month)
        if reported and landed_before(config, month):
            landed[month] = config.landed_dir(month)
            continue
        with stages_of(MonthRun(config, month, flow_run_info.id)):  # the stage's progress lines name the month
            state = pull_and_land(config, month, None, no_jobs_ran, return_state=True)
        if state.is_completed():  # (its result: the landing's manifest)
            landed[month] = config.landed_dir(month)
            continue
        error = state.result(raise_on_failure=False)
        detail = described(error)
        outcomes[month] = failed_outcome(month, "land", detail, is_input_error(error))
        rerun = f"reliability-report run --config {config.config_path} --month {month}"
        progress.info("%s %s: alert: %s", config.cluster, month, send_alert(config, str(month), "land", detail, rerun))
    return landed


def build_months_once(config: ClusterConfig, months: dict[Month, Path], outcomes: dict[Month, MonthOutcome]) -> bool:
    """Build `months` (-> landed directory) in one dbt build, or in batches that fit the memory limit
    (flows/warehouse/batches.py); whether it succeeded. When it failed, the error is printed once and
    each month of the range among them gets its failed outcome in `outcomes`, which refers to it."""
    if not months:
        return False
    plan = describe_batches(build_batches(months, int(config.warehouse.memory_limit)))
    progress.info("%s: dbt: %s", config.cluster, plan)
    state = build_warehouse(config, months, return_state=True)
    if state.is_completed():
        progress.info("%s: dbt: %d nodes built", config.cluster, sum(state.result().values()))
        return True
    error = state.result(raise_on_failure=False)
    progress.info("%s: dbt: %s: %s", config.cluster, type(error).__name__, printable_lines(str(error)))
    first = min(months)
    for month in months:
        said = (
            f"{type(error).__name__}: {printable_lines(str(error))}"
            if month == first
            else f"the same build failed (see {first})"
        )
        outcomes[month] = failed_outcome(month, "dbt", said, False)
    return False


def backfill_command(
    config: str,
    from_month: Month,
    to_month: Month,
    force: bool,
    resend: bool,
    partial: bool,
    email: EmailChoice,
    debug: bool,
    no_jobs_ran: bool = False,
) -> list[str]:
    """The `reliability-report backfill` command line of one cluster's config, with these options."""
    command = [sys.executable, "-m", "flows.cli", "backfill", "--config", config]
    command += ["--from", str(from_month), "--to", str(to_month), "--email", email]
    flags = {"--force": force, "--resend": resend, "--partial": partial, "--debug": debug, "--no-jobs-ran": no_jobs_ran}
    return command + [flag for flag, given in flags.items() if given]


_relay_lock = threading.Lock()  # one child's line is written whole, never into another's


def relay(lines: IO[str], to: IO[str], prefix: str) -> None:
    """Copy each line of a child's output to `to` as it comes, prefixed."""
    for line in lines:
        with _relay_lock:
            to.write(prefix + line)
            to.flush()


@task(name="backfill-cluster", task_run_name="backfill-{cluster}", cache_policy=NO_CACHE)
def backfill_cluster(cluster: str, command: list[str], api_url: str) -> None:
    """Run one cluster's backfill `command` in a process of its own (dbt's in-process runner must not
    build twice at once in one process; a local Spark session is one per process), reporting to the
    Prefect API at `api_url`. Its stdout and stderr lines are relayed to ours, each prefixed
    `[cluster] `. Raises BackfillError with its exit code (2: its failures were all on inputs)."""
    env = {**os.environ, "PREFECT_API_URL": api_url, "PYTHONUNBUFFERED": "1"}
    prefix = f"[{cluster}] "
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        errors = threading.Thread(target=relay, args=(child.stderr, sys.stderr, prefix), daemon=True)
        errors.start()
        relay(child.stdout, sys.stdout, prefix)
        errors.join()
    if child.returncode != 0:
        raise BackfillError(f"exit {child.returncode}", inputs_only=child.returncode == EXIT_INPUT)


def run_clusters(plan: ClustersPlan) -> None:
    """Backfill several clusters at once: each cluster's `backfill` (the same months and options)
    runs as a task in its own process, `plan.parallel` of them at a time. A failed cluster does not
    stop the others; each child alerts on its own failures and publishes its own artifact. Raises
    BackfillError naming the failed clusters, exit code 2 when all of them failed on their inputs,
    else 1."""
    api_url = str(get_client(sync_client=True).api_url)  # the children report to this run's API
    options = (plan.force, plan.resend, plan.partial, plan.email, plan.debug, plan.no_jobs_ran)
    with ThreadPoolTaskRunner(max_workers=plan.parallel) as runner:
        futures = {
            config.cluster: runner.submit(
                backfill_cluster,
                {
                    "cluster": config.cluster,
                    "command": backfill_command(str(config.config_path), plan.first, plan.last, *options),
                    "api_url": api_url,
                },
            )
            for config in plan.configs
        }
        wait(list(futures.values()))
    failed = {
        cluster: future.state.result(raise_on_failure=False)
        for cluster, future in futures.items()
        if not future.state.is_completed()
    }
    if failed:
        raise BackfillError(
            f"{len(failed)} of {len(plan.configs)} clusters failed: "
            + ", ".join(f"{cluster} ({error})" for cluster, error in failed.items()),
            inputs_only=all(exit_code(error) == EXIT_INPUT for error in failed.values()),
        )
