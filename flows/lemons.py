"""Lemon-node candidates (docs/methodology.md "Lemon nodes"): nodes that fail far more often than the fleet.

Signals per node over a trailing window (default 28 days) ending at the report month's end:
- incident_hours: hours with at least one critical health event on the node (a burst of lines
  from one incident counts once);
- xid_cnt: hardware Xid events; out_count: times Slurm drained or downed the node; tickets;
- multi_node_node_fails / single_node_node_fails: infrastructure failures the node was named the
  cause of, of multi-node and of single-node attempts; single_node_node_failure_rate: the latter
  over the single-node attempts that ran on the node.
A node is a candidate by the repeat-offender rule (failures naming it in at least
`lemon_repeat_failures` separate incidents within `lemon_repeat_days`) or as an outlier: at least
`lemon_min_incidents` incident hours, more than the fleet explains (upper tail below
`lemon_p_value`). Each candidate is listed with its evidence.

Two choices keep healthy nodes off the list (measured on simulated months: see tests/test_lemons.py):
- one incident ends every job on the node, so failures of several sub-node jobs within
  INCIDENT_GAP of each other are one incident, not a repeat;
- healthy nodes differ (their rates are overdispersed), so the outlier tail is a negative binomial
  fitted to the fleet's incident hours by moments, not a Poisson at the fleet mean, which flags
  the unluckiest healthy nodes; the fit leaves out the outliers found so far (lemons would
  otherwise inflate the variance and hide each other).
"""

from __future__ import annotations

import statistics
from datetime import timedelta

import duckdb
from scipy.stats import nbinom, poisson

from flows.config import AnalysisConfig
from flows.months import Month

INCIDENT_GAP = timedelta(hours=1)  # failures naming a node closer than this are one incident


def lemon_candidates(con: duckdb.DuckDBPyConnection, month: Month, params: AnalysisConfig) -> dict:
    end = month.end.replace(tzinfo=None)
    start = end - timedelta(days=params.lemon_window_days)
    window = [start, end]
    signals = {
        row[0]: dict(zip(("incident_hours", "xid_cnt", "out_count", "tickets"), row[1:], strict=True))
        for row in con.execute(
            """
            select node,
                   count(distinct date_trunc('hour', event_at)) filter (where severity = 'critical'),
                   count(*) filter (where source = 'xid' and failure_domain = 'hardware'),
                   count(*) filter (where source = 'slurm_event' and category <> 'planned_maintenance'),
                   count(*) filter (where source = 'ticket')
            from int_health_events_classified
            where event_at >= ? and event_at < ?
            group by node""",
            window,
        ).fetchall()
    }
    failures: dict[str, list] = {}
    for node, failed_at, n_nodes in con.execute(
        "select cause_node, failed_at, n_nodes from fct_failures where cause_node is not null "
        "and failed_at >= ? and failed_at < ? order by failed_at",
        window,
    ).fetchall():
        failures.setdefault(node, []).append((failed_at, n_nodes))
    single_node_attempts = dict(
        con.execute(
            """
            select n.node, count(*) from fct_attempts a
            join stg_slurm__attempt_nodes n on n.attempt_id = a.attempt_id
            where a.month = ? and a.n_nodes = 1 and a.runtime_seconds > 0
            group by n.node""",
            [str(month)],
        ).fetchall()
    )
    # the fleet is the nodes seen in this month, so a month's figures never depend on which other
    # months have been built
    fleet = con.execute("select count(distinct node) from fct_node_days where month = ?", [str(month)]).fetchall()[0][0]
    counts = {node: s["incident_hours"] for node, s in signals.items()}
    quiet_nodes = max(fleet - len(counts), 0)
    outliers: set[str] = set()
    for _ in range(10):  # fit the healthy fleet: refit without the outliers until they stop changing
        tail, mean_incidents, dispersion = fleet_tail(
            [c for node, c in counts.items() if node not in outliers] + [0] * quiet_nodes
        )
        found = {
            node for node, c in counts.items() if c >= params.lemon_min_incidents and tail(c) < params.lemon_p_value
        }
        if found == outliers:
            break
        outliers = found

    candidates = []
    for node in sorted(set(signals) | set(failures)):
        s = signals.get(node, {"incident_hours": 0, "xid_cnt": 0, "out_count": 0, "tickets": 0})
        fails = failures.get(node, [])
        single = sum(1 for _, n in fails if n == 1)
        incidents = _incidents([at for at, _ in fails])
        repeat = _most_within(incidents, timedelta(days=params.lemon_repeat_days)) >= params.lemon_repeat_failures
        p_value = tail(s["incident_hours"])
        outlier = node in outliers
        if not (repeat or outlier):
            continue
        candidates.append(
            {
                "node": node,
                "rules": [r for r, hit in (("repeat_offender", repeat), ("outlier", outlier)) if hit],
                **s,
                "incident_p_value": p_value,
                "failure_incidents": len(incidents),
                "multi_node_node_fails": len(fails) - single,
                "single_node_node_fails": single,
                "single_node_node_failure_rate": single / single_node_attempts[node]
                if single_node_attempts.get(node)
                else None,
                "failures": [at.isoformat() for at, _ in fails],
            }
        )
    candidates.sort(key=lambda c: (-len(c["failures"]), -c["incident_hours"], c["node"]))
    return {
        "window_start": start.isoformat(),
        "window_end": end.isoformat(),
        "fleet_nodes": fleet,
        "fleet_mean_incident_hours": mean_incidents,
        "fleet_incident_dispersion": dispersion,
        "candidates": candidates,
    }


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


def _incidents(times: list) -> list:
    """The first of each run of (sorted) times closer than INCIDENT_GAP to the one before."""
    firsts: list = []
    for i, at in enumerate(times):
        if i == 0 or at - times[i - 1] > INCIDENT_GAP:
            firsts.append(at)
    return firsts


def _most_within(times: list, span: timedelta) -> int:
    """The most of the (sorted) times that fit in any window of length `span`."""
    best, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] > span:
            first += 1
        best = max(best, last - first + 1)
    return best
