"""How the figures of a month's metrics.json become Prometheus samples (each figure's `series` in
flows/figures/registry.py; flows/report/openmetrics.py writes them): base units (hours as seconds),
one sample per label set."""

from __future__ import annotations

from flows.figures.figure import Sample

HOUR = 3600.0
DEFINITIONS = ("paper", "all")  # r_f: the paper's (large jobs) and every GPU job's
RUN_SETS = ("priority", "all")  # ETTR: the highest-priority long runs, and all long runs


def hours(value: float | None) -> float | None:
    return None if value is None else value * HOUR


def rate_samples(part: str):
    return lambda m: (((d,), m["node_failure_rate"][d][part]) for d in DEFINITIONS)


def ettr_samples(column: str):
    return lambda m: (
        ((row["size_bucket"], run_set), row[column]) for run_set in RUN_SETS for row in m["ettr_vs_expected"][run_set]
    )


def mttf_samples(column: str):
    return lambda m: [((b["size_bucket"],), hours(b[column])) for b in m["mttf_by_size"]]


def repairs_samples(m: dict) -> list[Sample]:
    if "node_repairs" not in m:  # a month built before repair times has none
        return []
    return [
        ((stat, kind), hours(m["node_repairs"][kind][f"{stat}_hours"]))
        for kind in ("failures", "all")
        for stat in ("mean", "median")
    ]


def lemon_count_samples(m: dict) -> list[Sample]:
    lemons = m["lemon_nodes"]
    return [((), None if lemons.get("not_measured") else len(lemons["candidates"]))]
