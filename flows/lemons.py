"""Lemon-node candidates (domain.md "Lemon nodes"): nodes that fail far more often than the fleet.

Signals per node over a trailing window (default 28 days) ending at the report month's end:
- incident_hours: hours with at least one critical health event on the node (a burst of lines
  from one incident counts once);
- xid_cnt: hardware Xid events; out_count: times Slurm drained or downed the node; tickets;
- multi_node_node_fails / single_node_node_fails: infrastructure failures the node was named the
  cause of, of multi-node and of single-node attempts; single_node_node_failure_rate: the latter
  over the single-node attempts that ran on the node.
A node is a candidate by the repeat-offender rule (at least `lemon_repeat_failures` failures
naming it within `lemon_repeat_days`) or as an outlier: at least `lemon_min_incidents` incident
hours, more than the fleet's mean rate explains (Poisson upper tail below `lemon_p_value`).
Each candidate is listed with its evidence.
"""

from __future__ import annotations

from datetime import timedelta

import duckdb
from scipy.stats import poisson

from flows.config import AnalysisConfig
from flows.months import Month


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
    fleet = con.execute("select count(*) from dim_nodes").fetchall()[0][0]
    total_incidents = sum(s["incident_hours"] for s in signals.values())
    mean_incidents = total_incidents / fleet if fleet else 0.0

    candidates = []
    for node in sorted(set(signals) | set(failures)):
        s = signals.get(node, {"incident_hours": 0, "xid_cnt": 0, "out_count": 0, "tickets": 0})
        fails = failures.get(node, [])
        single = sum(1 for _, n in fails if n == 1)
        repeat = (
            _most_within([at for at, _ in fails], timedelta(days=params.lemon_repeat_days))
            >= params.lemon_repeat_failures
        )
        p_value = float(poisson.sf(s["incident_hours"] - 1, mean_incidents)) if mean_incidents else 1.0
        outlier = s["incident_hours"] >= params.lemon_min_incidents and p_value < params.lemon_p_value
        if not (repeat or outlier):
            continue
        candidates.append(
            {
                "node": node,
                "rules": [r for r, hit in (("repeat_offender", repeat), ("outlier", outlier)) if hit],
                **s,
                "incident_p_value": p_value,
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
        "candidates": candidates,
    }


def _most_within(times: list, span: timedelta) -> int:
    """The most of the (sorted) times that fit in any window of length `span`."""
    best, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] > span:
            first += 1
        best = max(best, last - first + 1)
    return best
