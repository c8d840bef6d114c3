"""The one flow: it runs any plan a command made (flows/plan.py), its steps as Prefect tasks.

A month's plan lands the month, builds it with the months built after it, reports it and then
refreshes those months; a backfill's lands its range, builds it once, reports each month, then
refreshes; a study's builds each cluster's missing months as a backfill's plan, then the study. Each
step runs once, in the plan's order: nothing here calls a flow or runs a plan from inside another
(tests/test_architecture_flows.py). The flow's failure hook alerts with the month (or range) and
stage that failed, which the run's context holds (flows/stages.py), not a registry of runs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from prefect import Flow, flow
from prefect.logging.loggers import flow_run_logger
from prefect.runtime import flow_run as flow_run_info

from flows.backfill import BackfillError, run_backfill, run_clusters
from flows.config.file import load_config
from flows.core.months import Month
from flows.core.outcome import MonthSummary
from flows.core.runlock import run_lock
from flows.delivery.deliver import send_alert
from flows.pipeline import refresh_months, report_month
from flows.plan import (
    BackfillPlan,
    ClustersPlan,
    MonthPlan,
    Plan,
    StudyPlan,
    landed_later_months,
    refreshes_after,
)
from flows.stages import RunAlert, alert_of, alerted, failure


def month_alert(plan: MonthPlan) -> RunAlert:
    month = plan.report.month
    rerun = f"reliability-report run --config {plan.config.config_path} --month {month}"
    return RunAlert(flow_run_info.id, plan.config, str(month), rerun)


def backfill_alert(plan: BackfillPlan) -> RunAlert:
    first, last = plan.months[0], plan.months[-1]
    rerun = f"reliability-report backfill --config {plan.config.config_path} --from {first} --to {last}"
    return RunAlert(flow_run_info.id, plan.config, f"{first}..{last}", rerun)


def execute(plan: Plan) -> Any:
    """Run `plan`'s steps in the flow run it is called in: a month's summary, a backfill's outcomes
    (one per month), a study's result."""
    if isinstance(plan, MonthPlan):
        with alerted(month_alert(plan)):
            return run_month(plan)
    if isinstance(plan, BackfillPlan):
        with alerted(backfill_alert(plan)):
            return run_backfill(plan)
    if isinstance(plan, ClustersPlan):  # each cluster's backfill alerts on its own failures
        return run_clusters(plan)
    from flows.study import run_study  # scipy, pandas and matplotlib come with a study's figures: for a study only

    return run_study(plan)


def run_month(plan: MonthPlan) -> MonthSummary:
    """A month, built with the months built after it, then those months reported again; its summary
    with their outcomes (`refreshed`). A failure of the month itself fails the run."""
    config, month = plan.config, plan.report.month
    with run_lock(config):  # one run per cluster, and per warehouse (two configs may share one), writes at a time
        later = landed_later_months(config, month) if plan.update_later else {}
        summary = report_month(config, plan.report, later, plan.as_of, plan.no_jobs_ran)
        refreshes = refreshes_after(config, month, plan.report.notify, tuple(later)) if plan.update_later else ()
        refreshed = refresh_months(config, month, refreshes)
    return replace(summary, refreshed=tuple(refreshed))


def send_failure_alert(flow, flow_run, alert: RunAlert, stage: str, error: str) -> None:
    """Say which run failed, at which stage and why, in the run log and by email to `alert_to`."""
    logger = flow_run_logger(flow_run, flow)
    cluster = alert.config.cluster if alert.config else flow_run.parameters.get("cluster")
    logger.error("%s of cluster %s failed at stage %s: %s", alert.what, cluster, stage, error)
    try:
        config = alert.config or load_config(flow_run.parameters["config"])
        logger.info(send_alert(config, alert.what, stage, error, alert.rerun))
    except Exception as exc:  # a hook must not hide the run's own failure
        logger.error("failure alert not sent: %s: %s", type(exc).__name__, exc)


def refused_alert(flow_run) -> RunAlert | None:
    """The alert of a monthly or backfill deployment's run that failed before its plan ran (its
    parameters refused, or its config or months at the edge), from its parameters."""
    params = flow_run.parameters
    if "from_month" in params and "config" in params:
        what = f"{params['from_month']}..{params['to_month']}"
        rerun = f"reliability-report backfill --config {params['config']} --from {params['from_month']} --to {params['to_month']}"
    elif "config" in params:
        what = params.get("month") or str(Month.last_full(flow_run.expected_start_time))
        rerun = f"reliability-report run --config {params['config']} --month {what}"
    else:
        return None
    return RunAlert(str(flow_run.id), None, what, rerun)


def alert_on_failure(flow, flow_run, state) -> None:
    """The flows' failure hook (failed or crashed): one alert naming the month or range and the stage
    that failed (a backfill's: each failed month with its stage)."""
    alert = alert_of(flow_run.id) or refused_alert(flow_run)
    if alert is None:  # a study that failed outside its clusters' backfills: its error is the run's
        return
    stage, error = failure(state)
    if isinstance(raised := state.result(raise_on_failure=False), BackfillError):
        stage = raised.stages  # each failed month with its stage
    send_failure_alert(flow, flow_run, alert, stage, error)


# The flow's name for each plan: the Prefect UI lists a command's runs under the name a
# deployment's runs of the same command have (flows/deployments.py).
FLOW_NAMES = {
    MonthPlan: "monthly-report",
    BackfillPlan: "backfill",
    StudyPlan: "study",
    ClustersPlan: "backfill-clusters",
}


@flow(name="run-plan", on_failure=[alert_on_failure], on_crashed=[alert_on_failure], validate_parameters=False)
def run_plan(plan: Plan) -> Any:
    """Run a plan a command made and checked (flows/plan.py): its parameters are not checked again."""
    return execute(plan)


def flow_of(plan: Plan) -> Flow:
    """The one flow, named for the command whose plan it runs."""
    return run_plan.with_options(name=FLOW_NAMES[type(plan)])
