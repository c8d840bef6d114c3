"""A command's plan (flows/plan.py), decided from what earlier runs left before the flow starts:
which months a backfill builds, skips or refreshes, and which months built after a month are
reported again, in which order. No Prefect, no month built: the months' reports are stand-ins."""

from pathlib import Path

import pytest

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.plan import MonthStep, plan_backfill, plan_month, refreshes_after

AUG, SEP, OCT, NOV = (Month(2026, m) for m in (8, 9, 10, 11))


@pytest.fixture
def config(tmp_path: Path) -> ClusterConfig:
    return load_config(write_demo_config(tmp_path, "c", tmp_path / "reports"))


def reported(config: ClusterConfig, *months: Month) -> None:
    """The months have a report (no channel configured: archived, so up to date)."""
    for month in months:
        config.report_dir(month).mkdir(parents=True)
        (config.report_dir(month) / "metrics.json").write_text("{}")


def test_a_backfill_builds_every_month_without_a_report_and_emails_the_latest(config):
    plan = plan_backfill(config, AUG, OCT)
    assert plan.skipped == ()
    assert [(s.month, s.notify, s.built, s.refresh, s.outcome) for s in plan.reports] == [
        (AUG, False, True, False, "built"),
        (SEP, False, True, False, "built"),
        (OCT, True, True, False, "built"),
    ]


def test_a_backfill_skips_months_up_to_date_until_one_is_built_then_refreshes_the_rest(config):
    reported(config, AUG, OCT)
    plan = plan_backfill(config, AUG, OCT)
    assert [month for month, _ in plan.skipped] == [AUG]
    assert [(s.month, s.refresh, s.outcome) for s in plan.reports] == [(SEP, False, "built"), (OCT, True, "refreshed")]
    assert [s.month for s in plan_backfill(config, AUG, OCT, force=True).reports] == [AUG, SEP, OCT]


def test_the_months_built_after_a_month_are_refreshed_oldest_first_each_once(config):
    reported(config, AUG, OCT, NOV)
    assert refreshes_after(config, SEP, True, built=(NOV,)) == (
        MonthStep(OCT, notify=True, refresh=True, built=False, outcome="refreshed"),
        MonthStep(NOV, notify=True, refresh=True, built=True, outcome="refreshed"),
    )


def test_a_refresh_of_a_month_updates_no_later_month(config):
    assert plan_month(config, SEP).update_later
    assert not plan_month(config, SEP, refresh=True).update_later
    assert not plan_month(config, SEP, update_later=False).update_later
