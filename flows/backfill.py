"""Backfill: build a range of past months of one cluster, oldest first, one at a time; or of
several clusters side by side, each in its own process.

A cluster's months run sequentially (dbt must never build two months into one DuckDB file at once,
and each month's incremental marts and run history follow from the months before it), each as a
`monthly-report` subflow holding the cluster lock. A month whose report exists is skipped unless
`force`, or unless it is one to send and its figures were not sent, or unless an earlier month of
the range was built: then it is refreshed from the records it landed, and so are the months built
after the range (flows/pipeline.py `refresh_later_months`). A failed month is reported and the
next one still runs. Only the months `email` names are sent: rebuilding a year must not email
a year of reports. Clusters share nothing (warehouse, lock, data directories), so
`backfill-clusters` runs their backfills at the same time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import IO, Literal

from prefect import flow, get_client, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import wait
from prefect.task_runners import ThreadPoolTaskRunner

from flows.core.config import ClusterConfig
from flows.core.errors import EXIT_FAILED, EXIT_INPUT, exit_code
from flows.core.months import Month
from flows.delivery.deliver import channels, delivery_status
from flows.delivery.subject import MonthSubject
from flows.edge import checked_range, deployment_config
from flows.pipeline import (
    config_path,
    failure,
    month_outcome,
    monthly_report,
    progress,
    refresh_later_months,
    send_failure_alert,
)
from flows.report.artifact import publish_backfill_artifact

EmailChoice = Literal["none", "latest", "all"]


class BackfillError(RuntimeError):
    """Some months failed; exit 2 when each of them failed on its inputs (flows/core/errors.py), else 1.
    `stages` names each failed month's stage (`2026-09 land, 2026-10 dbt`), for the alert."""

    def __init__(self, message: str, *, inputs_only: bool, stages: str = "") -> None:
        super().__init__(message)
        self.exit_code = EXIT_INPUT if inputs_only else EXIT_FAILED
        self.stages = stages


def month_range(first: Month, last: Month) -> list[Month]:
    if last < first:
        raise ValueError(f"the range {first}..{last} is empty: --from must not be after --to")
    months = [first]
    while months[-1] < last:
        months.append(months[-1].next())
    return months


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
    outcomes = []
    built_earlier = False  # a month of this backfill was built: the later ones are refreshed, never skipped
    for i, month in enumerate(months, 1):
        progress.info("[%d/%d] %s %s", i, len(months), cluster, month)
        notify = email == "all" or (email == "latest" and month == months[-1])
        delivered, status = delivery_status(cfg, MonthSubject(month), cfg.report_dir(month))
        up_to_date = not force and status != "no report" and (delivered or not notify)
        if up_to_date and not built_earlier:
            outcome = {"month": str(month), "outcome": "skipped", "detail": status}
        else:
            state = monthly_report(
                cluster=cluster,
                config=cfg,
                month=str(month),
                resend=resend,
                notify=notify,
                refresh=up_to_date,  # built before, and only an earlier month changed
                update_later=False,  # the range's later months follow here, the months after it below
                no_jobs_ran=no_jobs_ran,
                return_state=True,
            )
            held = not notify and channels(cfg)  # (with nothing configured, the summary says so)
            note = f"archived, not sent (--email {email})" if held else None
            outcome = month_outcome(cfg, month, state, "refreshed" if up_to_date else "built", note)
            built_earlier |= state.is_completed()
        progress.info("[%d/%d] %s %s: %s: %s", i, len(months), cluster, month, outcome["outcome"], outcome["detail"])
        logger.info("%s: %s: %s", outcome["month"], outcome["outcome"], outcome["detail"])
        outcomes.append(outcome)
    if built_earlier:
        outcomes += refresh_later_months(cfg, months[-1], notify=email != "none")
    publish_backfill_artifact(cluster, str(months[0]), str(months[-1]), outcomes)
    failed = [o for o in outcomes if o["outcome"] == "failed"]
    if failed:
        raise BackfillError(
            f"{len(failed)} of {len(outcomes)} months failed: "
            + "; ".join(f"{o['month']}: {o['detail']}" for o in failed),
            inputs_only=all(o["input_error"] for o in failed),
            stages=", ".join(f"{o['month']} {o['stage']}" for o in failed),
        )
    return outcomes


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
