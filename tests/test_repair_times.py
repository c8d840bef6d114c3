"""Node repair time and availability (issue 43, item 5): the marts and the figure recover, exactly,
the repair times and the time out of the GPU nodes' outages that the simulator injected and wrote
as node events, over several seeds; a period without a node-event source does not measure them."""

import duckdb
import pytest
from simulated_build import simulated_build

from flows.config.cluster import AnalysisConfig
from flows.core.months import Month
from flows.figures.measured import Exposure, not_measured, unmeasured_codes
from flows.figures.period import Period
from flows.figures.repair import node_repairs
from simulator import SimParams

FIRST, LAST = Month.parse("2026-09"), Month.parse("2026-10")
MODELS = (
    "+fct_period_node_repairs",
    "+fct_period_node_out_time",
)


def _summary_matches(figure: dict, truth: dict) -> None:
    assert (figure["repairs"], figure["still_out"]) == (truth["repairs"], truth["still_out"])
    for key in ("mean", "median"):
        expected = truth[f"{key}_repair_hours"]
        assert figure[f"{key}_hours"] == (pytest.approx(expected, rel=1e-12) if expected is not None else None)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3, 4])
def test_repair_times_and_availability_recover_the_injected_outages(tmp_path, fresh_warehouse, seed):
    """Two continuous months of 24 GPU nodes at a high fault rate (faults repaired in 1-72 h, some
    still out at the dump, admin drains beside them): each month's repairs, still-out outages,
    mean and median repair hours (failures and every outage) and node-hours out are the truth's,
    availability is 1 - out / the fleet's node-hours, and the three-month trailing window of the
    second month counts both months."""
    cluster = f"rep{seed}"
    params = SimParams(cluster, FIRST, last_month=LAST, nodes=24, seed=seed, r_f=15.0)
    truth, config = simulated_build(tmp_path, fresh_warehouse, params, MODELS)
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        months = {month: node_repairs(con, Period.of_month(month)) for month in (FIRST, LAST)}
        window = node_repairs(con, Period.trailing(LAST, 3))
    assert sum(truth[str(m)]["node_repairs"]["failures"]["repairs"] for m in (FIRST, LAST)) >= 8  # the premise
    for month, figure in months.items():
        expected = truth[str(month)]["node_repairs"]
        _summary_matches(figure["failures"], expected["failures"])
        _summary_matches(figure["all"], expected["all"])
        availability = figure["availability"]
        assert availability["out_node_hours"] == pytest.approx(expected["out_node_hours"], rel=1e-12)
        assert availability["fleet_node_hours"] == pytest.approx(truth[str(month)]["fleet"]["node_days"] * 24)
        assert availability["value"] == pytest.approx(1 - expected["out_node_hours"] / availability["fleet_node_hours"])
        assert sum(row["repairs"] for row in figure["by_cause"]) == expected["all"]["repairs"]
        longest = figure["nodes_out_longest"]
        assert longest == sorted(longest, key=lambda row: -row["out_node_hours"]) and len(longest) <= 5
    both = [truth[str(m)]["node_repairs"] for m in (FIRST, LAST)]
    assert window["failures"]["repairs"] == sum(t["failures"]["repairs"] for t in both)
    assert window["availability"]["out_node_hours"] == pytest.approx(sum(t["out_node_hours"] for t in both))


def test_without_a_node_event_source_repair_times_are_not_measured():
    """Health logs tell when a node failed, not when it was back: with an Xid log alone (and with
    the job records alone) the repair times are not measured, and say why; sacctmgr events or
    scontrol snapshots measure them."""
    params = AnalysisConfig()

    def exposure(*inputs: str) -> Exposure:
        return Exposure(frozenset({"sacct_psv", *inputs}), 500, 400.0, 200.0, 12)

    assert unmeasured_codes(exposure("xid_syslog"), params)["node_repairs"] == "no_node_event_source"
    assert unmeasured_codes(exposure(), params)["node_repairs"] == "no_node_event_source"
    assert "node_repairs" not in unmeasured_codes(exposure("sacctmgr_events_psv"), params)
    assert "node_repairs" not in unmeasured_codes(exposure("scontrol_nodes"), params)
    assert "when a node went out and when it was back" in not_measured(exposure("nhc_syslog"), params)["node_repairs"]
