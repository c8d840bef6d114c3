"""The dbt models' unit tests (attribution window edges, cause priority, job-run chaining, month
boundaries...): they check the SQL, not a month's data, so they run here, in the quick tier, rather
than in every monthly build (flows/warehouse/build.py build_month leaves them out)."""

from pathlib import Path

import yaml

from flows import DBT_PROJECT_DIR
from flows.core.config_file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.warehouse.build import dbt_command
from simulator import SimParams, simulate

MONTH = Month.parse("2026-10")


def test_the_models_unit_tests_pass(tmp_path: Path, fresh_warehouse) -> None:
    config_path = write_demo_config(tmp_path, "unit", tmp_path / "reports")
    fresh_warehouse(config_path)
    simulate(SimParams("unit", MONTH, nodes=2, seed=1), tmp_path / "sim" / "unit" / str(MONTH))
    config = load_config(config_path)
    declared = sum(
        len(yaml.safe_load(path.read_text()).get("unit_tests", []))
        for path in (DBT_PROJECT_DIR / "models").rglob("*.yml")
    )
    # in a build: a unit test reads its inputs' columns from them, and the month's intermediate
    # tables exist only during a build (in its in-memory scratch database); without the data tests,
    # which check a month's data (every month build runs them)
    result = dbt_command(config, MONTH, land_month(config, MONTH), "build", "--exclude-resource-type", "test")
    unit = [r for r in result.result.results if r.node.resource_type == "unit_test"]
    assert result.success and declared >= 7
    assert len(unit) == declared and all(str(r.status) == "pass" for r in unit)
