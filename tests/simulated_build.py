"""A simulated history landed and built: the months of `params` simulated, each landed, and the dbt
models a figure reads built over them in one build (no tests: the suite runs those), for the tests
that recover a figure from the simulator's truth."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lemon_history import NO_TESTS

from flows.config.cluster import ClusterConfig
from flows.config.file import load_config
from flows.core.months import Month
from flows.demo import write_demo_config
from flows.ingest.land import land_month
from flows.warehouse.build import dbt_command
from simulator import SimParams, simulate


def simulated_build(
    work: Path, fresh_warehouse: Callable[..., Path], params: SimParams, models: tuple[str, ...]
) -> tuple[dict, ClusterConfig]:
    """The truth of each month of `params` (YYYY-MM -> its truth) and the config of its warehouse,
    where `models` (dbt selectors: `+fct_period_x`) are built over every month in one build."""
    truth = simulate(params, work / "sim" / params.cluster)["months"]
    config_path = write_demo_config(work, params.cluster, work / "reports")
    fresh_warehouse(config_path)
    config = load_config(config_path)
    landed = {Month.parse(month): land_month(config, Month.parse(month)) for month in truth}
    built = dbt_command(config, landed, "build", "--select", *models, *NO_TESTS)
    assert built.success, [r.message for r in built.result.results if str(r.status) not in ("success", "pass")]
    return truth, config
