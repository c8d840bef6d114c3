"""Backfill: build a range of past months of one cluster, oldest first, one at a time.

Months run sequentially (dbt must never build two months into one DuckDB file at once), each as
a `monthly-report` subflow holding the cluster lock. A month whose report exists and whose figures
were delivered is skipped unless `force`; a failed month is reported and the next one still runs.
"""

from __future__ import annotations

from prefect import flow, get_run_logger

from flows.artifact import publish_backfill_artifact
from flows.config import ConfigError, load_config
from flows.delivery import is_delivered
from flows.months import Month
from flows.pipeline import STAGE_NOTE, MonthParam, alert_on_failure, failure, monthly_report, progress, report_month


class BackfillError(RuntimeError):
    pass


def month_range(first: Month, last: Month) -> list[Month]:
    if last < first:
        raise ValueError(f"the range {first}..{last} is empty: --from must not be after --to")
    months = [first]
    while months[-1] < last:
        months.append(months[-1].next())
    return months


@flow(name="backfill", on_failure=[alert_on_failure], on_crashed=[alert_on_failure])
def backfill(
    cluster: str,
    config: str,
    from_month: MonthParam,
    to_month: MonthParam,
    force: bool = False,
    resend: bool = False,
    partial: bool = False,
) -> list[dict]:
    """Build every month from `from_month` to `to_month` (inclusive, YYYY-MM, not in the future;
    the current, unfinished month only with `partial`). Returns one entry per month: month,
    outcome (built, skipped, failed) and detail."""
    logger = get_run_logger()
    months = month_range(report_month(from_month, partial=partial), report_month(to_month, partial=partial))
    cfg = load_config(config)
    if cfg.cluster != cluster:
        raise ConfigError(f"{cfg.config_path}: describes cluster {cfg.cluster!r}, not {cluster!r}")
    outcomes = []
    for i, month in enumerate(months, 1):
        progress.info("[%d/%d] %s %s", i, len(months), cluster, month)
        if not force and is_delivered(cfg, str(month), cfg.report_dir(month)):
            outcome = {"month": str(month), "outcome": "skipped", "detail": "report built and delivered already"}
        else:
            state = monthly_report(
                cluster=cluster, config=config, month=str(month), resend=resend, partial=partial, return_state=True
            )
            if state.is_completed():
                summary = state.result()
                outcome = {
                    "month": str(month),
                    "outcome": "built",
                    "detail": f"{summary['attempts']:,} attempts, {summary['infra_failures']:,} infrastructure "
                    f"failures in {sum(summary['stage_seconds'].values()):.0f} s; {summary['delivery']}",
                }
            else:
                stage, error = failure(state)
                outcome = {
                    "month": str(month),
                    "outcome": "failed",
                    "stage": stage,
                    "detail": f"at stage {stage}: {error}",
                }
        progress.info("[%d/%d] %s %s: %s: %s", i, len(months), cluster, month, outcome["outcome"], outcome["detail"])
        logger.info("%s: %s: %s", outcome["month"], outcome["outcome"], outcome["detail"])
        outcomes.append(outcome)
    publish_backfill_artifact(cluster, str(months[0]), str(months[-1]), outcomes)
    failed = [o for o in outcomes if o["outcome"] == "failed"]
    if failed:
        error = BackfillError(
            f"{len(failed)} of {len(months)} months failed: "
            + "; ".join(f"{o['month']}: {o['detail']}" for o in failed)
        )
        error.add_note(STAGE_NOTE + ", ".join(f"{o['month']} {o['stage']}" for o in failed))  # for the alert
        raise error
    return outcomes
