"""prefect.yaml is valid offline: schema, cron, entrypoint import, parameters known to the flow; every
cluster has a monthly deployment (the demo's schedule inactive) and a backfill deployment; the
`prefect deployment run` commands of the README and docs/ name deployments that exist; flow parameters are checked."""

import asyncio
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from prefect.cli.deploy._models import PrefectYamlModel  # private module: prefect is pinned
from prefect.exceptions import ParameterTypeError
from prefect.flows import load_flow_from_entrypoint
from prefect.server.schemas.schedules import CronSchedule

from flows.core.months import Month, MonthNotEndedError, month_range, reportable
from flows.deployments import monthly_report

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def deployments(request):
    config = PrefectYamlModel.model_validate(yaml.safe_load((ROOT / "prefect.yaml").read_text()))
    return {d.name: d for d in config.deployments}


def test_prefect_yaml_is_valid(deployments, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert deployments
    for deployment in deployments.values():
        for schedule in deployment.schedules or []:
            CronSchedule(cron=schedule.cron, timezone=schedule.timezone)
        flow = load_flow_from_entrypoint(deployment.entrypoint)
        kind = deployment.name.split("-")[0]
        assert flow.name == {"monthly": "monthly-report", "backfill": "backfill", "study": "study"}[kind]
        assert set(deployment.parameters) <= set(flow.parameters.properties)
        assert ({"configs"} if kind == "study" else {"cluster", "config"}) <= set(deployment.parameters)


def test_each_cluster_runs_monthly_on_the_2nd_at_6_utc_and_can_backfill(deployments):
    clusters = {d.parameters["cluster"] for d in deployments.values() if "cluster" in d.parameters}
    for cluster in clusters:
        monthly, backfill = deployments[f"monthly-{cluster}"], deployments[f"backfill-{cluster}"]
        assert monthly.parameters == backfill.parameters and "month" not in monthly.parameters
        assert not backfill.schedules
        (schedule,) = monthly.schedules
        cron = CronSchedule(cron=schedule.cron, timezone=schedule.timezone)
        dates = asyncio.run(cron.get_dates(3, start=datetime(2026, 11, 22, tzinfo=UTC)))
        assert [d.isoformat() for d in dates] == [
            "2026-12-02T06:00:00+00:00",
            "2027-01-02T06:00:00+00:00",
            "2027-02-02T06:00:00+00:00",
        ]


def test_the_demo_ships_no_active_schedule(deployments):
    """`prefect deploy --all` must not start monthly runs of the demo cluster on a real server: its
    schedule is a template an operator copies for a cluster and activates (`active: true`)."""
    demo = [d for d in deployments.values() if d.parameters.get("cluster") == "demo" or d.name == "study-demo"]
    assert demo and any(d.schedules for d in demo)
    for deployment in demo:
        for schedule in deployment.schedules or []:
            assert schedule.active is False, f"{deployment.name}: the demo's schedule is active"
    text = (ROOT / "prefect.yaml").read_text()
    assert "active: true" in text  # the comment that says how a cluster's copy is scheduled


def test_the_readme_runs_deployments_that_exist(deployments, monkeypatch):
    monkeypatch.chdir(ROOT)
    names = {f"{load_flow_from_entrypoint(d.entrypoint).name}/{d.name}" for d in deployments.values()}
    readme = (ROOT / "README.md").read_text()
    assert re.findall(r"prefect deployment run (\S+)", readme), "the README shows no `prefect deployment run` command"
    guides = [readme] + [page.read_text() for page in sorted((ROOT / "docs").glob("*.md"))]
    run = re.findall(r"prefect deployment run (\S+)", "\n".join(guides))
    assert set(run) <= names, f"not in prefect.yaml: {sorted(set(run) - names)}"


def test_the_report_month_is_checked():
    now = datetime(2026, 11, 2, 6, 0, tzinfo=UTC)
    assert Month.last_full(now) == Month(2026, 10)  # a scheduled run reports the month before
    with pytest.raises(MonthNotEndedError, match="month 2026-11 has not ended .* pass --partial"):
        reportable(Month(2026, 11), now)  # the current month only as a partial report
    assert reportable(Month(2026, 11), now, partial=True) == Month(2026, 11)
    with pytest.raises(ValueError, match="month 2026-12 is in the future"):
        reportable(Month(2026, 12), now)
    # a run's text is made a Month by the flow parameter's validation, once
    assert monthly_report.validate_parameters({"cluster": "c", "config": "c.toml", "month": "2026-10"})[
        "month"
    ] == Month(2026, 10)
    with pytest.raises(ParameterTypeError, match="month must be YYYY-MM, got '2026-1'"):
        monthly_report.validate_parameters({"cluster": "c", "config": "c.toml", "month": "2026-1"})
    assert [str(m) for m in month_range(Month(2025, 11), Month(2026, 2))] == [
        "2025-11",
        "2025-12",
        "2026-01",
        "2026-02",
    ]
    with pytest.raises(ValueError, match="must not be after"):
        month_range(Month(2026, 2), Month(2026, 1))


def test_a_bad_month_parameter_is_refused_by_the_schema():
    from prefect.utilities.callables import parameter_schema

    from flows.deployments import backfill, monthly_report, study

    for flow, names in (
        (monthly_report, ["month"]),
        (backfill, ["from_month", "to_month"]),
        (study, ["from_month", "to_month"]),
    ):
        properties = parameter_schema(flow).model_dump()["properties"]
        for name in names:
            schemas = properties[name].get("anyOf", [properties[name]])
            assert {s.get("pattern") for s in schemas} >= {r"^(\d{4})-(0[1-9]|1[0-2])$"}
