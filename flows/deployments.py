"""The deployments' flows (prefect.yaml): a deployment's run is a command whose parameters arrive
as JSON (a config file's path, YYYY-MM). Each passes the edge (flows/edge.py) as a command's
arguments do in the CLI, makes its plan (flows/plan.py) and runs it as the one flow does
(flows/run_plan.py `execute`), in its own flow run: no flow here calls another.
"""

from __future__ import annotations

from prefect import flow
from prefect.runtime import flow_run as flow_run_info

from flows.config.file import load_config
from flows.core.months import Month
from flows.core.outcome import MonthOutcome, MonthSummary
from flows.edge import checked_month, checked_range, checked_study, deployment_config
from flows.plan import EmailChoice, StudyPlan, plan_backfill, plan_month
from flows.run_plan import alert_on_failure, execute

FAILURE_HOOKS = {"on_failure": [alert_on_failure], "on_crashed": [alert_on_failure]}


@flow(name="monthly-report", **FAILURE_HOOKS)
def monthly_report(
    cluster: str,
    config: str,
    month: Month | None = None,
    resend: bool = False,
    partial: bool = False,
    as_of: str | None = None,
    notify: bool = True,
    refresh: bool = False,
    update_later: bool = True,
    no_jobs_ran: bool = False,
) -> MonthSummary:
    """Build, check and report one cluster's month (default: the month before the run's scheduled
    time; a late start reports its own month) from the config file `config`; returns a summary.

    Email and the webhook go out once per set of figures; `resend` sends the unchanged report
    again; without `notify` the report is archived only. With `update_later` (default), every month
    built after this one is built with it in one dbt build, then reported again (the summary's
    `refreshed`, each with the parts of its figures that changed). A `refresh` rebuilds the month
    from the records it landed before (no pull) and sends it only as a correction where it was
    sent. A month that has not ended needs `partial`. `as_of` (ISO 8601) says when the records were
    dumped (default: the pull time of a live pull, else the latest time in the records). A month
    with no job record is refused unless `no_jobs_ran` (the operator says no job ran)."""
    cfg = deployment_config(config, cluster)
    report = month or Month.last_full(flow_run_info.scheduled_start_time)
    dumped_at = checked_month(cfg, report, partial, as_of, no_jobs_ran)
    plan = plan_month(
        cfg,
        report,
        resend=resend,
        as_of=dumped_at,
        notify=notify,
        refresh=refresh,
        update_later=update_later,
        no_jobs_ran=no_jobs_ran,
    )
    return execute(plan)


@flow(name="backfill", **FAILURE_HOOKS)
def backfill(
    cluster: str,
    config: str,
    from_month: Month,
    to_month: Month,
    force: bool = False,
    resend: bool = False,
    partial: bool = False,
    email: EmailChoice = "latest",
    no_jobs_ran: bool = False,
) -> list[MonthOutcome]:
    """Build every month from `from_month` to `to_month` (inclusive, YYYY-MM, not in the future;
    the current, unfinished month only with `partial`). `email` says which months' reports are
    sent (by email and to the webhook): none, the latest of the range (default) or all; the others
    are archived. Returns one entry per month: month, outcome (built, skipped, failed) and detail.
    A month with no job record is refused (the whole range, before any work) unless `no_jobs_ran`."""
    cfg = deployment_config(config, cluster)
    checked_range([cfg], from_month, to_month, partial, no_jobs_ran, force)
    plan = plan_backfill(cfg, from_month, to_month, force=force, resend=resend, email=email, no_jobs_ran=no_jobs_ran)
    return execute(plan)


@flow(name="study", **FAILURE_HOOKS)
def study(configs: list[str], from_month: Month, to_month: Month, notify: bool = False, resend: bool = False) -> dict:
    """The study of the clusters of the config files `configs` over `from_month`..`to_month`
    (YYYY-MM, full months). Months not built yet are built first (archived, not sent). The study
    goes to the first config's reports directory, `studies/<name>/`, and with `notify` to its email
    and webhook, once per set of figures (`resend`: again)."""
    loaded = [load_config(path) for path in configs]
    checked_study(loaded, from_month, to_month)
    return execute(StudyPlan(tuple(loaded), from_month, to_month, notify, resend))
