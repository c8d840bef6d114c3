"""A command's plan: what the one flow (flows/run_plan.py) runs, decided before it starts.

A command (run, backfill, study; a deployment's run is one of them) checks its arguments at the
edge (flows/edge.py), then makes its plan here: the months to land, the one dbt build over them
and the months built after them, then per month the report's stages in order (quality, metrics,
render, delivery), the months built after the range last, each refreshed once. The flow runs the
plan's steps in order; nothing it runs calls a flow or runs a plan again. The plan reads what
earlier runs left (reports, landings, the sent-log) and changes nothing; the months built after a
run's months are found by the flow once it holds the cluster's lock (`refreshes_after`: another
run may build one while this one waits). No Prefect here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from flows.config.cluster import ClusterConfig
from flows.core.months import MONTH_RE, Month, month_range
from flows.delivery.deliver import channels, delivery_status
from flows.delivery.subject import MonthSubject
from flows.ingest.manifest import LandedMonthError, Manifest, read_manifest

EmailChoice = Literal["none", "latest", "all"]


@dataclass(frozen=True)
class MonthStep:
    """One month's report in a plan. `refresh`: it was reported before and is reported again
    because an earlier month was built (its figures go out only as a correction, and one never sent
    is archived). `built`: the plan's one build built it, so it is only reported; otherwise it is
    landed (a refresh: from the records it landed, when whole) and built on its own first.
    `outcome` and `note`: its word and delivery note in a backfill's outcomes."""

    month: Month
    notify: bool = True
    resend: bool = False
    refresh: bool = False
    built: bool = False
    outcome: str = "built"
    note: str | None = None


@dataclass(frozen=True)
class MonthPlan:
    """`run`: land `report`'s month (`as_of`: when its records were dumped), build it in one dbt
    build with, when `update_later`, the months built after it whose landings are whole
    (landed_later_months), report it, then refresh the months built after it oldest first
    (refreshes_after). A failure of the month itself fails the run."""

    config: ClusterConfig
    report: MonthStep
    update_later: bool = True
    as_of: datetime | None = None
    no_jobs_ran: bool = False


@dataclass(frozen=True)
class BackfillPlan:
    """`backfill`: land the months of `reports` (one reported before from the records it landed,
    when whole), build them in one dbt build with the months built after the range whose landings
    are whole, report each oldest first, then refresh the months built after the range (sent as a
    correction unless `email` is none). The months of `skipped` (-> why) are up to date. A failed
    month is an outcome; the others still build."""

    config: ClusterConfig
    months: tuple[Month, ...]
    reports: tuple[MonthStep, ...]
    skipped: tuple[tuple[Month, str], ...] = ()
    email: EmailChoice = "latest"
    no_jobs_ran: bool = False


@dataclass(frozen=True)
class StudyPlan:
    """`study`: each cluster's months of the range not built yet are built first, one at a time,
    oldest first, archived (each a BackfillPlan made once its warehouse is current), then the
    clusters' periods with the range among them; then the study is written and, with `notify`,
    sent once per set of figures (`resend`: again)."""

    configs: tuple[ClusterConfig, ...]
    first: Month
    last: Month
    notify: bool = False
    resend: bool = False


@dataclass(frozen=True)
class ClustersPlan:
    """`backfill` of several clusters: each cluster's backfill of first..last with the same options
    (the command line `backfill_command` makes) in a process of its own, `parallel` at a time,
    reporting to this run's Prefect API; a failed cluster stops no other."""

    configs: tuple[ClusterConfig, ...]
    first: Month
    last: Month
    parallel: int
    force: bool = False
    resend: bool = False
    partial: bool = False
    email: EmailChoice = "latest"
    debug: bool = False
    no_jobs_ran: bool = False


Plan = MonthPlan | BackfillPlan | StudyPlan | ClustersPlan


def landed_before(config: ClusterConfig, month: Month) -> Manifest | None:
    """The manifest of the month's landed records, if a run landed them and they are whole (else None: land again)."""
    try:
        return read_manifest(config.landed_dir(month))
    except LandedMonthError:
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


def refreshes_after(
    config: ClusterConfig, month: Month, notify: bool, built: tuple[Month, ...]
) -> tuple[MonthStep, ...]:
    """Every month built after `month`, oldest first, reported again: their month-over-month change,
    trailing windows, trend and job runs that began earlier depend on the months before them, so
    figures never depend on the order months were built in. Those in `built` are built with
    `month`; any other is rebuilt from the records it landed. Sent again only as a correction, when
    its figures changed (unless not `notify`)."""
    return tuple(
        MonthStep(later, notify=notify, refresh=True, built=later in built, outcome="refreshed")
        for later in built_months_after(config, month)
    )


def plan_month(
    config: ClusterConfig,
    month: Month,
    *,
    resend: bool = False,
    as_of: datetime | None = None,
    notify: bool = True,
    refresh: bool = False,
    update_later: bool = True,
    no_jobs_ran: bool = False,
) -> MonthPlan:
    """A month's plan (the `run` command's, a monthly deployment's run's): with `update_later`
    (unless `refresh`), the months built after it are built with it, then reported again."""
    step = MonthStep(month, notify=notify, resend=resend, refresh=refresh)
    return MonthPlan(config, step, update_later and not refresh, as_of, no_jobs_ran)


def plan_backfill(
    config: ClusterConfig,
    first: Month,
    last: Month,
    *,
    force: bool = False,
    resend: bool = False,
    email: EmailChoice = "latest",
    no_jobs_ran: bool = False,
) -> BackfillPlan:
    """A backfill's plan: a month whose report exists is skipped unless `force`, or unless it is one
    to send and its figures were not sent, or unless an earlier month of the range is built: then it
    is built again from the records it landed. Only the months `email` names are sent."""
    months = month_range(first, last)
    skipped, reports = [], []
    held = f"archived, not sent (--email {email})" if channels(config) else None
    for month in months:
        notify = email == "all" or (email == "latest" and month == months[-1])
        delivered, status = delivery_status(config, MonthSubject(month), config.report_dir(month))
        up_to_date = not force and status != "no report" and (delivered or not notify)
        if up_to_date and not reports:  # an earlier month built: the later ones are refreshed, never skipped
            skipped.append((month, status))
            continue
        outcome = "refreshed" if up_to_date else "built"
        note = None if notify else held
        reports.append(MonthStep(month, notify, resend, refresh=up_to_date, built=True, outcome=outcome, note=note))
    return BackfillPlan(config, tuple(months), tuple(reports), tuple(skipped), email, no_jobs_ran)
