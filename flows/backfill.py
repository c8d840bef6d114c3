"""Backfill: build a range of past months of one cluster, oldest first, one at a time.

Months run sequentially (dbt must never build two months into one DuckDB file at once), each as
a `monthly-report` subflow holding the cluster lock. A month whose report exists is skipped unless
`force`, or unless it is one to send and its figures were not sent; a failed month is reported and
the next one still runs. Only the months `email` names are sent: rebuilding a year must not email
a year of reports.
"""

from __future__ import annotations

from typing import Literal

from prefect import flow, get_run_logger

from flows.artifact import publish_backfill_artifact
from flows.config import ClusterConfig
from flows.delivery import channels, delivery_status
from flows.errors import EXIT_FAILED, EXIT_INPUT, is_input_error
from flows.months import Month
from flows.pipeline import (
    config_path,
    failure,
    monthly_report,
    progress,
    report_month,
    run_config,
    send_failure_alert,
)

EmailChoice = Literal["none", "latest", "all"]


class BackfillError(RuntimeError):
    """Some months failed; exit 2 when each of them failed on its inputs (flows/errors.py), else 1.
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
) -> list[dict]:
    """Build every month from `from_month` to `to_month` (inclusive, YYYY-MM, not in the future;
    the current, unfinished month only with `partial`). `email` says which months' reports are
    sent (by email and to the webhook): none, the latest of the range (default) or all; the others
    are archived. `config` is the ClusterConfig the CLI loaded or the config file's path (a
    deployment's run), loaded once and passed to each month's run. Returns one entry per month:
    month, outcome (built, skipped, failed) and detail."""
    logger = get_run_logger()
    months = month_range(report_month(from_month, partial=partial), report_month(to_month, partial=partial))
    cfg = run_config(config, cluster)
    outcomes = []
    for i, month in enumerate(months, 1):
        progress.info("[%d/%d] %s %s", i, len(months), cluster, month)
        notify = email == "all" or (email == "latest" and month == months[-1])
        delivered, status = delivery_status(cfg, str(month), cfg.report_dir(month))
        if not force and status != "no report" and (delivered or not notify):
            outcome = {"month": str(month), "outcome": "skipped", "detail": status}
        else:
            state = monthly_report(
                cluster=cluster,
                config=cfg,
                month=str(month),
                resend=resend,
                partial=partial,
                notify=notify,
                return_state=True,
            )
            if state.is_completed():
                summary = state.result()
                held = not notify and channels(cfg)  # (with nothing configured, the summary says so)
                delivery = f"archived, not sent (--email {email})" if held else summary["delivery"]
                outcome = {
                    "month": str(month),
                    "outcome": "built",
                    "detail": f"{summary['attempts']:,} attempts, {summary['infra_failures']:,} infrastructure "
                    f"failures in {sum(summary['stage_seconds'].values()):.0f} s; {delivery}",
                }
            else:
                stage, error = failure(state)
                outcome = {
                    "month": str(month),
                    "outcome": "failed",
                    "stage": stage,
                    "detail": f"at stage {stage}: {error}",
                    "input_error": is_input_error(state.result(raise_on_failure=False)),
                }
        progress.info("[%d/%d] %s %s: %s: %s", i, len(months), cluster, month, outcome["outcome"], outcome["detail"])
        logger.info("%s: %s: %s", outcome["month"], outcome["outcome"], outcome["detail"])
        outcomes.append(outcome)
    publish_backfill_artifact(cluster, str(months[0]), str(months[-1]), outcomes)
    failed = [o for o in outcomes if o["outcome"] == "failed"]
    if failed:
        raise BackfillError(
            f"{len(failed)} of {len(months)} months failed: "
            + "; ".join(f"{o['month']}: {o['detail']}" for o in failed),
            inputs_only=all(o["input_error"] for o in failed),
            stages=", ".join(f"{o['month']} {o['stage']}" for o in failed),
        )
    return outcomes
