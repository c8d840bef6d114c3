"""`node NAME`: a node's months: its faults and their causes, its outages and repair times, the
infrastructure failures it caused, and its lemon signals against the month's thresholds."""

from __future__ import annotations

from collections import defaultdict

from flows.core.errors import UsageError
from flows.explain.explanation_types import Fault, LemonSignals, NodeAnswer, NodeFailure, NodeMonth, Outage
from flows.explain.lemon_marks import month_report, windows
from flows.explain.warehouse import Warehouse
from flows.ingest.sources.node_names import _NODE_NAME, NODE_NAME_RULE


def checked_node(text: str) -> str:
    """`text` as a node's name; UsageError (exit 2) when it cannot be one."""
    if not _NODE_NAME.fullmatch(text):
        shown = text if text.isprintable() and len(text) <= 60 else repr(text[:60])
        raise UsageError(f"node {shown}: not a node's name ({NODE_NAME_RULE})")
    return text


def _grouped(wh: Warehouse, statement: str, node: str, months: tuple[str, ...]) -> dict[str, list[tuple]]:
    """The rows of `statement` for the node, by month (its first column)."""
    by_month: dict[str, list[tuple]] = defaultdict(list)
    for month, *rest in wh.rows(statement, {"node": node, "months": list(months)}):
        by_month[month].append(tuple(rest))
    return by_month


def node_history(wh: Warehouse, node: str, months: tuple[str, ...]) -> NodeAnswer:
    """The node over `months`; UsageError (exit 2) when the warehouse never saw it."""
    seen = next(iter(wh.rows("node__seen", {"node": node})), None)
    faults = _grouped(wh, "node__faults", node, months)
    outages = _grouped(wh, "node__outages", node, months)
    failures = _grouped(wh, "node__failures", node, months)
    if seen is None and not (faults or outages or failures):
        raise UsageError(f"node {node} is not in {wh.config.warehouse_path} ({wh.built_span()})")
    signals = _signals(wh, node, months)
    answered = []
    for month in months:
        sources, not_measured = wh.node_sources(month)
        answered.append(
            NodeMonth(
                month=month,
                node_sources=sources,
                not_measured=not_measured,
                faults=[
                    Fault(at=a, last_event_at=b, category=c, source=s, critical_events=n)
                    for a, b, c, s, n in faults[month]
                ],
                outages=[
                    Outage(
                        out_at=o,
                        back_at=b,
                        state=st,
                        reason=r,
                        category=c,
                        repair_hours=None if rs is None else rs / 3600,
                    )
                    for o, b, st, r, c, rs in outages[month]
                ],
                failures=[
                    NodeFailure(attempt_id=a, job_id=j, failed_at=t, cause_category=c, gpus=g, n_nodes=n, size_bucket=b)
                    for a, j, t, c, g, n, b in failures[month]
                ],
                lemon=_lemon(wh, node, month, signals.get(month, {})),
            )
        )
    return NodeAnswer(
        cluster=wh.config.cluster,
        node=node,
        is_gpu_node=bool(seen and seen[0]),
        first_seen=str(seen[1]) if seen and seen[1] else None,
        last_seen=str(seen[2]) if seen and seen[2] else None,
        months_searched=list(months),
        months=answered,
    )


def _signals(wh: Warehouse, node: str, months: tuple[str, ...]) -> dict[str, dict[str, dict]]:
    """fct_node_lemon_signals' rows of the node: month -> lemon window -> its signals."""
    found: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in wh.records("node__lemon_signals", {"node": node, "periods": [f"month:{m}" for m in months]}):
        found[r["period_id"].removeprefix("month:")][r["lemon_window"]] = r
    return found


def _lemon(wh: Warehouse, node: str, month: str, signals: dict[str, dict]) -> list[LemonSignals]:
    """The node's signals in each of the month's lemon windows its report judged, with the thresholds."""
    document = month_report(wh, month)
    if document is None:
        return []
    answered = []
    for name, window in windows(document.lemon_nodes):
        if window.not_measured is not None:
            continue
        s = signals.get(name, {})
        candidate = next((c for c in window.candidates if c.node == node), None)
        answered.append(
            LemonSignals(
                window=name,
                window_start=window.window_start,
                window_end=window.window_end,
                incident_hours=s.get("incident_hours", 0),
                min_incident_hours=document.parameters.lemon_min_incidents,
                fleet_mean_incident_hours=window.fleet_mean_incident_hours,
                failure_incidents=s.get("failure_incidents", 0),
                most_incidents_within_repeat_days=s.get("most_incidents_within_repeat_days", 0),
                repeat_days=document.parameters.lemon_repeat_days,
                repeat_threshold=window.repeat_threshold,
                xid_cnt=s.get("xid_cnt", 0),
                out_count=s.get("out_count", 0),
                tickets=s.get("tickets", 0),
                candidate=candidate is not None,
                rules=candidate.rules if candidate else [],
                p_value=candidate.p_value if candidate else None,
            )
        )
    return answered
