"""A period's node repair times and the fleet's availability (docs/methodology.md "Node repair
time and availability"), read from fct_period_node_repairs and fct_period_node_out_time: the mean and
median time to repair of the failures, of every outage and of each cause, with their intervals,
the GPU nodes' availability and the nodes out longest. The marts count; this module adds only the
intervals (flows/figures/rates.py)."""

from __future__ import annotations

from flows.figures.figure import Figure, Series
from flows.figures.figure_types import NodeRepairs
from flows.figures.period import OF_PERIOD, Period
from flows.figures.rates import lognormal_mean_interval, median_interval
from flows.figures.samples import repairs_samples
from flows.warehouse.engines import MartReader

NODES_OUT_LONGEST = 5  # the nodes out longest that a report lists


def _rows(con: MartReader, query: str, args: list) -> list[dict]:
    cursor = con.execute(query, args)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# The fewest repairs whose mean and median get a 95% interval: the median's exact order-statistic
# interval needs 6 (flows/figures/rates.py median_interval), and the mean's is given from as many, so
# that a cause has both intervals or neither ("too few repairs to bound" in the report and the chart).
MIN_REPAIRS_TO_BOUND = 6


def repair_summary(row: dict | None) -> dict:
    """Repairs, still out, and the mean and median repair hours with their 95% intervals from
    MIN_REPAIRS_TO_BOUND repairs (the mean's a log-normal one, positive as a repair time is; the
    median's exact order-statistic one; none from fewer repairs)."""
    row = row or {}
    repairs = row.get("repairs") or 0
    hours = sorted(row.get("repair_hours") or [])
    bounded = min(repairs, len(hours)) >= MIN_REPAIRS_TO_BOUND
    mean_lower, mean_upper = lognormal_mean_interval(hours) if bounded else (None, None)
    median_lower, median_upper = median_interval(hours) if bounded else (None, None)
    mean = row.get("mean_repair_hours")
    return {
        "outages": row.get("outages") or 0,
        "repairs": repairs,
        "still_out": row.get("still_out") or 0,
        "mean_hours": mean,
        "mean_lower_hours": mean_lower,
        "mean_upper_hours": mean_upper,
        "median_hours": row.get("median_repair_hours"),
        "median_lower_hours": median_lower,
        "median_upper_hours": median_upper,
        "out_node_hours": row.get("out_node_hours") or 0.0,
    }


def node_repairs(con: MartReader, period: Period) -> dict:
    """The period's repair times (failures, every outage, each cause), availability and nodes out longest."""
    rows = _rows(
        con,
        f"select * from fct_period_node_repairs where {OF_PERIOD} order by grain, outages desc, category",
        period.key,
    )
    grains = {row["grain"]: row for row in rows if row["grain"] != "cause"}
    every = grains.get("all") or {}
    return {
        "unit": "hours",
        "failures": repair_summary(grains.get("failures")),
        "all": repair_summary(every),
        "by_cause": [
            {"category": row["category"], "failure_domain": row["failure_domain"], "severity": row["severity"]}
            | repair_summary(row)
            for row in rows
            if row["grain"] == "cause"
        ],
        "availability": {
            "value": every.get("availability"),
            "out_node_hours": every.get("out_node_hours") or 0.0,
            "fleet_node_hours": every.get("fleet_node_hours") or 0.0,
        },
        "nodes_out_longest": _rows(
            con,
            "select node, outages, out_node_hours, longest_outage_hours, longest_outage_category "
            f"from fct_period_node_out_time where {OF_PERIOD} and out_node_hours > 0 "
            f"order by out_node_hours desc, node limit {NODES_OUT_LONGEST}",
            period.key,
        ),
    }


FIGURE = Figure(
    "node_repairs",
    "node repairs",
    NodeRepairs,
    lambda reading: node_repairs(reading.con, reading.period),
    (
        'node repair time and availability over the GPU nodes (methodology "Node repair time and '
        'availability"; `fct_period_node_repairs`, `fct_period_node_out_time`): `failures` (the critical '
        "causes), `all` (every outage) and `by_cause[]` (with `category`, `failure_domain`, `severity`) each "
        "with `outages` (begun in the period), `repairs` (ended by the dump), `still_out`, `mean_hours`, "
        "`mean_lower_hours`, `mean_upper_hours` (log-normal 95%, positive), `median_hours`, "
        "`median_lower_hours`, `median_upper_hours` (exact; both intervals null below 6 repairs) and "
        "`out_node_hours`; `availability` (`value` = 1 - `out_node_hours` / `fleet_node_hours`); "
        "`nodes_out_longest[]` (at most 5: `node`, `outages`, `out_node_hours`, `longest_outage_hours`, "
        "`longest_outage_category`); `unit` hours. Not measured (`no_node_event_source`) without sacctmgr "
        "events or scontrol snapshots"
    ),
    marts=(
        "fct_period_node_repairs",
        "fct_period_node_out_time",
    ),
    needs=("node_event_source",),
    keep=("unit",),
    section="repair",
    charts=("repair",),
    series=(
        Series(
            "node_repair_seconds",
            "Time to repair a node (DOWN/DRAIN to back) of the outages begun in the month; outages: failures or all",
            ("statistic", "outages"),
            repairs_samples,
            ("node_repairs",),
        ),
        Series(
            "node_availability_ratio",
            "Share of the GPU nodes' time in the month that they were not DOWN or drained",
            (),
            lambda m: [((), m.node_repairs.availability.value)],
            ("node_repairs",),
        ),
    ),
    panel="Node repair time",
)
