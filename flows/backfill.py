"""Backfill: build a range of past months of one cluster; or of several clusters side by side,
each in its own process.

A cluster's months are landed one by one, then built in ONE dbt build with the months built after
the range (each month's incremental marts and run history follow from the months before it: one
build computes them all), then each is checked, computed, rendered and delivered as a
`monthly-report` subflow (`built`), oldest first, under the cluster lock. A month whose report
exists is skipped unless `force`, or unless it is one to send and its figures were not sent, or
unless an earlier month of the range is built: then it is built again from the records it landed,
and the months built after the range are reported again (flows/pipeline.py
`refresh_later_months`). A month whose landing failed is reported failed; the others still build. Only the months `email` names are sent: rebuilding a year must not email
a year of reports. Clusters share nothing (warehouse, lock, data directories), so
`backfill-clusters` runs their backfills at the same time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Literal

from prefect import flow, get_client, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import wait
from prefect.runtime import flow_run as flow_run_info
from prefect.task_runners import ThreadPoolTaskRunner

from flows.core.config import ClusterConfig
from flows.core.errors import EXIT_FAILED, EXIT_INPUT, exit_code, is_input_error
from flows.core.escape import printable_lines
from flows.core.months import Month, month_range
from flows.core.runlock import run_lock
from flows.delivery.deliver import channels, delivery_status, send_alert
from flows.delivery.subject import MonthSubject
from flows.edge import checked_range, deployment_config
from flows.pipeline import (
    build_warehouse,
    clear_killed_runs,
    config_path,
    landed_before,
    landed_later_months,
    monthly_report,
    pull_and_land,
    refresh_later_months,
    send_failure_alert,
)
from flows.report.artifact import publish_backfill_artifact
from flows.report.drawing import drawing_process
from flows.stages import MonthRun, failed_outcome, failure, month_outcome, month_runs, progress
from flows.warehouse.batches import build_batches, describe_batches

EmailChoice = Literal["none", "latest", "all"]


class BackfillError(RuntimeError):
    """Some months failed; exit 2 when each of them failed on its inputs (flows/core/errors.py), else 1.
    `stages` names each failed month's stage (`2026-09 land, 2026-10 dbt`), for the alert."""

    def __init__(self, message: str, *, inputs_only: bool, stages: str = "") -> None:
        super().__init__(message)
        self.exit_code = EXIT_INPUT if inputs_only else EXIT_FAILED
        self.stages = stages


def alert_on_backfill_failure(flow, flow_run, state) -> None:
    """The backfill flow's failure hook (failed or crashed): one alert listing the failed months."""
    params = flow_run.parameters
    what = f"{params['from_month']}..{params['to_month']}"
    stage, error = failure(state)
    if isinstance(raised := state.result(raise_on_failure=False), BackfillError):
        stage = raised.stages  # each failed month with its stage
    rerun = f"reliability-report backfill --config {config_path(params['config'])} --from {params['from_month']} --to {params['to_month']}"
    send_failure_alert(flow, flow_run, what, stage, error, rerun)


@flow(name="backfill", on_failure=[alert_on_backfill_failure], on_crashed=[alert_on_backfill_failure])
def backfill(
    cluster: str,
    config: ClusterConfig | str,
    from_month: Month,
    to_month: Month,
    force: bool = False,
    resend: bool = False,
    partial: bool = False,
    email: EmailChoice = "latest",
    no_jobs_ran: bool = False,
) -> list[dict]:
    """Build every month from `from_month` to `to_month` (inclusive, YYYY-MM, not in the future;
    the current, unfinished month only with `partial`). `email` says which months' reports are
    sent (by email and to the webhook): none, the latest of the range (default) or all; the others
    are archived. Returns one entry per month: month, outcome (built, skipped, failed) and detail.
    A month with no job record is refused (the whole range, before any work) unless `no_jobs_ran`.

    A deployment's run gives `config` as the config file's path: it and the range pass the edge
    here (flows/edge.py), as a command's do in the CLI; the CLI and a study give the ClusterConfig
    they checked. Each month's run gets the ClusterConfig and its Month, and checks neither again."""
    logger = get_run_logger()
    if isinstance(config, str):
        cfg = deployment_config(config, cluster)
        checked_range([cfg], from_month, to_month, partial, no_jobs_ran, force)
    else:
        cfg = config
    months = month_range(from_month, to_month)
    outcomes: dict[Month, dict] = {}
    rebuilt: dict[Month, bool] = {}  # the months to build -> whether a report of it exists (refreshed)
    for month in months:
        notify = email == "all" or (email == "latest" and month == months[-1])
        delivered, status = delivery_status(cfg, MonthSubject(month), cfg.report_dir(month))
        up_to_date = not force and status != "no report" and (delivered or not notify)
        if up_to_date and not rebuilt:  # an earlier month built: the later ones are refreshed, never skipped
            outcomes[month] = {"month": str(month), "outcome": "skipped", "detail": status}
        else:
            rebuilt[month] = up_to_date
    with run_lock(cfg):
        landed = land_months(cfg, rebuilt, no_jobs_ran, outcomes)
        later = landed_later_months(cfg, months[-1]) if landed else {}
        # its process starts while the months are built (flows/report/drawing.py)
        with drawing_process(len(landed) + len(later)):
            built = build_months_once(cfg, {**landed, **later}, outcomes)
            for i, month in enumerate(months, 1):
                if month in landed and built:
                    notify = email == "all" or (email == "latest" and month == months[-1])
                    state = monthly_report(
                        cluster=cluster,
                        config=cfg,
                        month=str(month),
                        resend=resend,
                        notify=notify,
                        refresh=rebuilt[month],  # built before, and only an earlier month changed
                        update_later=False,  # the range's later months follow here, the months after it below
                        built=True,
                        return_state=True,
                    )
                    held = not notify and channels(cfg)  # (with nothing configured, the summary says so)
                    note = f"archived, not sent (--email {email})" if held else None
                    outcomes[month] = month_outcome(cfg, month, state, "refreshed" if rebuilt[month] else "built", note)
                outcome = outcomes[month]
                progress.info(
                    "[%d/%d] %s %s: %s: %s", i, len(months), cluster, month, outcome["outcome"], outcome["detail"]
                )
                logger.info("%s: %s: %s", outcome["month"], outcome["outcome"], outcome["detail"])
            refreshed = refresh_later_months(cfg, months[-1], email != "none", frozenset(later)) if built else []
    outcomes_list = [outcomes[month] for month in months] + refreshed
    publish_backfill_artifact(cluster, str(months[0]), str(months[-1]), outcomes_list)
    failed = [o for o in outcomes_list if o["outcome"] == "failed"]
    if failed:
        raise BackfillError(
            f"{len(failed)} of {len(outcomes_list)} months failed: "
            + "; ".join(f"{o['month']}: {o['detail']}" for o in failed),
            inputs_only=all(o["input_error"] for o in failed),
            stages=", ".join(f"{o['month']} {o['stage']}" for o in failed),
        )
    return outcomes_list


def land_months(
    config: ClusterConfig, months: dict[Month, bool], no_jobs_ran: bool, outcomes: dict[Month, dict]
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
        month_runs[str(flow_run_info.id)] = MonthRun(config, month)  # the stage's progress lines name the month
        state = pull_and_land(config, month, None, no_jobs_ran, return_state=True)
        del month_runs[str(flow_run_info.id)]
        if state.is_completed():  # (its result: the landing's manifest)
            landed[month] = config.landed_dir(month)
            continue
        error = state.result(raise_on_failure=False)
        detail = f"{type(error).__name__}: {printable_lines(str(error))}"
        outcomes[month] = failed_outcome(month, "land", detail, is_input_error(error))
        rerun = f"reliability-report run --config {config.config_path} --month {month}"
        progress.info("%s %s: alert: %s", config.cluster, month, send_alert(config, str(month), "land", detail, rerun))
    return landed


def build_months_once(config: ClusterConfig, months: dict[Month, Path], outcomes: dict[Month, dict]) -> bool:
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


@flow(name="backfill-clusters")
def backfill_clusters(
    configs: dict[str, str],
    from_month: Month,
    to_month: Month,
    parallel: int,
    force: bool = False,
    resend: bool = False,
    partial: bool = False,
    email: EmailChoice = "latest",
    debug: bool = False,
    no_jobs_ran: bool = False,
) -> None:
    """Backfill several clusters at once: `configs` maps each cluster to its config file, and each
    cluster's `backfill` (the same months and options) runs as a task in its own process, `parallel`
    of them at a time. A failed cluster does not stop the others; each child alerts on its own
    failures and publishes its own artifact. Raises BackfillError naming the failed clusters, exit
    code 2 when all of them failed on their inputs, else 1."""
    api_url = str(get_client(sync_client=True).api_url)  # the children report to this run's API
    with ThreadPoolTaskRunner(max_workers=parallel) as runner:
        futures = {
            cluster: runner.submit(
                backfill_cluster,
                {
                    "cluster": cluster,
                    "command": backfill_command(
                        config, from_month, to_month, force, resend, partial, email, debug, no_jobs_ran
                    ),
                    "api_url": api_url,
                },
            )
            for cluster, config in configs.items()
        }
        wait(list(futures.values()))
    failed = {
        cluster: future.state.result(raise_on_failure=False)
        for cluster, future in futures.items()
        if not future.state.is_completed()
    }
    if failed:
        raise BackfillError(
            f"{len(failed)} of {len(configs)} clusters failed: "
            + ", ".join(f"{cluster} ({error})" for cluster, error in failed.items()),
            inputs_only=all(exit_code(error) == EXIT_INPUT for error in failed.values()),
        )
