"""The truth of node repair times and the fleet's availability: the GPU nodes' outages as a
month's node events hold them (the events that began from an hour before the month to its dump,
an end after the dump unknown), by the pipeline's rule (docs/methodology.md "Node repair time and
availability"): a repair is an outage that began in the month and ended by the dump; time out is
inside the month's observed time, once per node."""

from __future__ import annotations

from collections import defaultdict
from statistics import mean, median

from simulator.params import MonthWindow

HEALTH_LOG_LEAD = 3600  # a month's health logs start this long before it, for attempts ending at its start
MAINTENANCE_REASONS = ("Reboot ASAP", "scheduled maintenance: BIOS update")  # admin drains: not failures


def _summary(hours: list[float], still_out: int) -> dict:
    return {
        "repairs": len(hours),
        "still_out": still_out,
        "mean_repair_hours": mean(hours) if hours else None,
        "median_repair_hours": median(hours) if hours else None,
    }


def repair_truth(events: list[tuple[int, int, int, str, str]], gpu_nodes: int, w: MonthWindow) -> dict:
    """Repairs and still-out counts of the failures (every outage but an admin drain) and of every
    outage, and the node-hours out, of the GPU nodes (`node < gpu_nodes`) in month `w`."""
    period_end = min(w.end, w.as_of)
    hours: dict[str, list[float]] = {"failures": [], "all": []}
    still_out = {"failures": 0, "all": 0}
    intervals: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for start, end, node, _state, reason in events:
        if not (w.start - HEALTH_LOG_LEAD <= start < w.as_of and node < gpu_nodes):
            continue
        back = end if end < w.as_of else None  # the dump prints Unknown for an outage not over
        if w.start <= start < period_end:  # began in the month (a later one is the next month's)
            for kind in ("all",) if reason in MAINTENANCE_REASONS else ("all", "failures"):
                if back is None:
                    still_out[kind] += 1
                else:
                    hours[kind].append((back - start) / 3600)
        until = min(period_end if back is None else back, period_end)
        if until > max(start, w.start):
            intervals[node].append((max(start, w.start), until))
    out_seconds = 0
    for spans in intervals.values():
        covered = None
        for begin, until in sorted(spans):
            begin = begin if covered is None else max(begin, covered)
            out_seconds += max(until - begin, 0)
            covered = until if covered is None else max(covered, until)
    return {
        "failures": _summary(hours["failures"], still_out["failures"]),
        "all": _summary(hours["all"], still_out["all"]),
        "out_node_hours": out_seconds / 3600,
    }
