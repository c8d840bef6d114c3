"""prefect.yaml is valid offline: schema, cron, entrypoint import, parameters known to the flow."""

from pathlib import Path

import yaml
from prefect.cli.deploy._models import PrefectYamlModel  # private module: prefect is pinned
from prefect.flows import load_flow_from_entrypoint
from prefect.server.schemas.schedules import CronSchedule

ROOT = Path(__file__).resolve().parents[1]


def test_prefect_yaml_is_valid(monkeypatch):
    monkeypatch.chdir(ROOT)
    config = PrefectYamlModel.model_validate(yaml.safe_load((ROOT / "prefect.yaml").read_text()))
    assert config.deployments
    for deployment in config.deployments:
        for schedule in deployment.schedules:
            CronSchedule(cron=schedule.cron, timezone=schedule.timezone)
        flow = load_flow_from_entrypoint(deployment.entrypoint)
        assert flow.name == "monthly-report"
        assert set(deployment.parameters) <= set(flow.parameters.properties)
