"""Lemon-node candidates (docs/methodology.md "Lemon nodes"): nodes that fail far more often than the fleet.

The signals are dbt models (their yml defines each): fct_node_lemon_signals has, per node over a
trailing window (default 28 days) ending at the report month's end, incident_hours (hours with at
least one critical health event on the node), xid_cnt, out_count, tickets, the infrastructure
failures that named the node as the cause (multi-node, single-node, and the single-node failure
rate), the failure incidents (failures within an hour of each other are one: one fault ends every
job on the node) and the repeat-offender rule (at least `lemon_repeat_failures` incidents within
`lemon_repeat_days`); fct_lemon_fleet_monthly has the window and the fleet.

Python does what SQL should not: the fleet fit and the outlier rule. A node is an outlier with at
least `lemon_min_incidents` incident hours, more than the fleet explains (upper tail below
`lemon_p_value`). Healthy nodes differ (their rates are overdispersed), so the tail is a negative
binomial fitted to the fleet's incident hours by moments, not a Poisson at the fleet mean, which
flags the unluckiest healthy nodes; the fit leaves out the outliers found so far (lemons would
otherwise inflate the variance and hide each other). Measured on simulated months: see
tests/test_lemons.py. A candidate (repeat offender or outlier) is listed with its evidence.
"""

from __future__ import annotations

import statistics

import duckdb
from scipy.stats import nbinom, poisson

from flows.config import AnalysisConfig
from flows.months import Month

# the columns of fct_node_lemon_signals read here (its yml defines each)
SIGNALS = (
    "node",
    "health_events",
    "incident_hours",
    "xid_cnt",
    "out_count",
    "tickets",
    "failure_incidents",
    "multi_node_node_fails",
    "single_node_node_fails",
    "single_node_node_failure_rate",
    "is_repeat_offender",
)
CANDIDATE_FAILURE_SIGNALS = SIGNALS[6:10]


def lemon_candidates(con: duckdb.DuckDBPyConnection, month: Month, params: AnalysisConfig) -> dict:
    """The month's candidates with their evidence, from the marts fct_lemon_fleet_monthly (window
    and fleet) and fct_node_lemon_signals (a node's signals and the repeat-offender rule)."""
    window_start, window_end, fleet, quiet_nodes = con.execute(
        "select window_start, window_end, fleet_nodes, quiet_nodes from fct_lemon_fleet_monthly where month = ?",
        [str(month)],
    ).fetchone()
    cursor = con.execute(f"select {', '.join(SIGNALS)} from fct_node_lemon_signals where month = ?", [str(month)])
    signals = [dict(zip(SIGNALS, row, strict=True)) for row in cursor.fetchall()]
    # the fleet fit counts every node of the fleet: those with a health event in the window with
    # their incident hours, the quiet ones with none
    counts = {s["node"]: s["incident_hours"] for s in signals if s["health_events"]}
    outliers, tail, mean_incidents, dispersion = fleet_outliers(counts, quiet_nodes, params)
    candidates = []
    for s in signals:
        repeat, outlier = s["is_repeat_offender"], s["node"] in outliers
        if repeat or outlier:
            candidates.append(
                {
                    "node": s["node"],
                    "rules": [r for r, hit in (("repeat_offender", repeat), ("outlier", outlier)) if hit],
                    **{k: s[k] for k in ("incident_hours", "xid_cnt", "out_count", "tickets")},
                    "incident_p_value": tail(s["incident_hours"]),
                    **{k: s[k] for k in CANDIDATE_FAILURE_SIGNALS},
                }
            )
    failures = _failure_times(con, [c["node"] for c in candidates], window_start, window_end)
    for candidate in candidates:
        candidate["failures"] = failures.get(candidate["node"], [])
    candidates.sort(key=lambda c: (-len(c["failures"]), -c["incident_hours"], c["node"]))
    return {
        "window_start": window_start.isoformat(),
        "window_end": window_end.isoformat(),
        "fleet_nodes": fleet,
        "fleet_mean_incident_hours": mean_incidents,
        "fleet_incident_dispersion": dispersion,
        "candidates": candidates,
    }


def fleet_outliers(counts: dict[str, int], quiet_nodes: int, params: AnalysisConfig):
    """The outliers among `counts` (node -> incident hours; `quiet_nodes` more nodes have none):
    at least lemon_min_incidents and a fleet tail below lemon_p_value. The fleet is refitted without
    the outliers found until they stop changing (lemons would otherwise inflate the variance and
    hide each other). Returns the outliers and the last fit: tail, mean and dispersion."""
    outliers: set[str] = set()
    for _ in range(10):
        tail, mean_incidents, dispersion = fleet_tail(
            [c for node, c in counts.items() if node not in outliers] + [0] * quiet_nodes
        )
        found = {
            node for node, c in counts.items() if c >= params.lemon_min_incidents and tail(c) < params.lemon_p_value
        }
        if found == outliers:
            break
        outliers = found
    return outliers, tail, mean_incidents, dispersion


def _failure_times(con: duckdb.DuckDBPyConnection, nodes: list[str], start, end) -> dict[str, list[str]]:
    """node -> the times (ISO) of the failures in the window that named it as the cause, in order:
    rows of the mart fct_failures, the evidence listed with each candidate."""
    times: dict[str, list[str]] = {node: [] for node in nodes}
    if nodes:
        for node, failed_at in con.execute(
            "select cause_node, failed_at from fct_failures where failed_at >= ? and failed_at < ? "
            f"and cause_node in ({', '.join(['?'] * len(nodes))}) order by failed_at",
            [start, end, *nodes],
        ).fetchall():
            times[node].append(failed_at.isoformat())
    return times


def fleet_tail(counts: list[int]):
    """P(X >= k) for a node drawn from the fleet, fitted to every node's count by moments: a negative
    binomial when the counts vary more than a Poisson's would (dispersion = variance / mean > 1),
    else a Poisson. Returns the tail function, the mean and the dispersion."""
    n = len(counts)
    # exact arithmetic: the same counts in any order give the same bits (a re-run must not differ)
    mean = statistics.fmean(counts) if n else 0.0
    variance = statistics.variance(counts) if n > 1 else 0.0
    dispersion = variance / mean if mean else 1.0
    if not mean:
        return (lambda k: 1.0 if k <= 0 else 0.0), mean, dispersion
    if dispersion <= 1.0:
        return (lambda k: float(poisson.sf(k - 1, mean))), mean, dispersion
    size = mean * mean / (variance - mean)  # scipy's n; p = size / (size + mean)
    return (lambda k: float(nbinom.sf(k - 1, size, size / (size + mean)))), mean, dispersion
