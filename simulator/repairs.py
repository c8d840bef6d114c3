"""The truth of node repair times and the fleet's availability: the GPU nodes' outages as a
month's node events hold them (the events that began from an hour before the month to its dump,
an end after the dump unknown), by the pipeline's rule (docs/methodology.md "Node repair time and
availability"): a node's events that overlap or touch are one outage, a failure unless every event
of it is an admin drain; a repair is an outage that began in the month and ended by the dump; time
out is inside the month's observed time."""

from __future__ import annotations

from collections import defaultdict
from statistics import mean, median

from simulator.params import MonthWindow

HEALTH_LOG_LEAD = 3600  # a month's health logs start this long before it, for attempts ending at its start
MAINTENANCE_REASONS = ("Reboot ASAP", "scheduled maintenance: BIOS update")  # admin drains: not failures

Outage = tuple[int, int | None, bool]  # start, end (None: still out at the dump), a failure


def outages(events: list[tuple[int, int, int, str, str]], gpu_nodes: int, w: MonthWindow) -> dict[int, list[Outage]]:
    """Each GPU node's outages in the month's node events, in order."""
    spans: dict[int, list[tuple[int, int | None, bool]]] = defaultdict(list)
    for start, end, node, _state, reason in sorted(events):
        if w.start - HEALTH_LOG_LEAD <= start < w.as_of and node < gpu_nodes:
            spans[node].append((start, end if end < w.as_of else None, reason not in MAINTENANCE_REASONS))
    merged: dict[int, list[Outage]] = {}
    for node, events_of_node in spans.items():
        runs: list[list] = []
        for start, end, failure in events_of_node:
            if runs and start <= (runs[-1][1] if runs[-1][1] is not None else w.as_of):
                run = runs[-1]
                run[1] = None if run[1] is None or end is None else max(run[1], end)
                run[2] = run[2] or failure
            else:
                runs.append([start, end, failure])
        merged[node] = [(start, end, failure) for start, end, failure in runs]
    return merged


def _summary(hours: list[float], still_out: int) -> dict:
    return {
        "repairs": len(hours),
        "still_out": still_out,
        "mean_repair_hours": mean(hours) if hours else None,
        "median_repair_hours": median(hours) if hours else None,
    }


def repair_truth(events: list[tuple[int, int, int, str, str]], gpu_nodes: int, w: MonthWindow) -> dict:
    """Repairs and still-out counts of the failures and of every outage, and the node-hours out, of
    the GPU nodes (`node < gpu_nodes`) in month `w`."""
    period_end = min(w.end, w.as_of)
    hours: dict[str, list[float]] = {"failures": [], "all": []}
    still_out = {"failures": 0, "all": 0}
    out_seconds = 0
    for node_outages in outages(events, gpu_nodes, w).values():
        for start, end, failure in node_outages:
            if start >= period_end:  # the next month's
                continue
            if start >= w.start:
                for kind in ("all", "failures") if failure else ("all",):
                    if end is None:
                        still_out[kind] += 1
                    else:
                        hours[kind].append((end - start) / 3600)
            until = min(period_end if end is None else end, period_end)
            out_seconds += max(until - max(start, w.start), 0)
    return {
        "failures": _summary(hours["failures"], still_out["failures"]),
        "all": _summary(hours["all"], still_out["all"]),
        "out_node_hours": out_seconds / 3600,
    }
