"""When failures strike (issue 53): the figure recovers, exactly, how long each infrastructure
failure's attempt had run when it failed, by cause, as the simulator injected the faults and the
attribution rule counts them, over several seeds and a month with an attempt across its start; its
failures are those of failures by cause; without a node source it is not measured."""

import duckdb
import pytest
from simulated_build import simulated_build

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.figures.failure_times import time_to_failure
from flows.figures.figure import Reading
from flows.figures.measured import Exposure, unmeasured_codes
from flows.figures.period import Period, failures_by_cause
from simulator import SimParams

FIRST, LAST = Month.parse("2026-09"), Month.parse("2026-10")
MODELS = (
    "+fct_period_time_to_failure",
    "+fct_period_failures_by_cause",
)


def _matches(figure: dict, truth: dict) -> None:
    for key in ("failures", "within_10_minutes", "within_1_hour", "later"):
        assert figure[key] == truth[key], key
    expected = truth["median_hours"]
    assert figure["median_hours"] == (pytest.approx(expected, rel=1e-12) if expected is not None else None)
    if truth["failures"]:
        assert figure["share_within_10_minutes"] == pytest.approx(truth["within_10_minutes"] / truth["failures"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [5, 6, 7])
def test_the_time_to_failure_recovers_the_injected_faults(tmp_path, fresh_warehouse, seed):
    """Two continuous months of 32 GPU nodes at a high fault rate: each month's failures by how
    long their attempt had run (all causes and each cause) are the truth's, the three-month window
    of the second counts both, and the figure's failures are failures by cause's."""
    cluster = f"ttf{seed}"
    params = SimParams(cluster, FIRST, last_month=LAST, nodes=32, seed=seed, r_f=20.0)
    truth, config = simulated_build(tmp_path, fresh_warehouse, params, MODELS)
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        for month in (FIRST, LAST):
            period = Period.of_month(month)
            figure = time_to_failure(Reading(con, period, AnalysisConfig(), {}, {}, []))
            expected = truth[str(month)]["time_to_failure"]
            assert expected["all"]["failures"] >= 5  # the premise: failures to time
            _matches(figure["all"], expected["all"])
            assert {c["category"] for c in figure["by_cause"]} == set(expected["by_cause"])
            for row in figure["by_cause"]:
                _matches(row, expected["by_cause"][row["category"]])
            causes = {c["category"]: c["failures"] for c in failures_by_cause(con, period)}
            assert {c["category"]: c["failures"] for c in figure["by_cause"]} == causes
        window = time_to_failure(Reading(con, Period.trailing(LAST, 3), AnalysisConfig(), {}, {}, []))
    both = [truth[str(m)]["time_to_failure"]["all"] for m in (FIRST, LAST)]
    assert window["all"]["failures"] == sum(t["failures"] for t in both)
    assert window["all"]["within_1_hour"] == sum(t["within_1_hour"] for t in both)


def test_without_a_node_source_the_time_to_failure_is_not_measured():
    """Its causes need a node-event or health source, as failures by cause do."""
    jobs_only = Exposure(frozenset({"sacct_psv"}), 900, 1749.0, 629.0, 12, gpu_ended_attempts=900)
    assert unmeasured_codes(jobs_only, AnalysisConfig())["time_to_failure"] == "no_node_source"
