"""How the figures of a month's document (flows/figures/document.py MonthDocument) become Prometheus
samples (each figure's `series` in flows/figures/registry.py; flows/report/openmetrics.py writes
them): base units (hours as seconds), one sample per label set."""

from __future__ import annotations

from typing import Any

from flows.figures.figure import Sample

# a month's document, flows/figures/document.py MonthDocument: not imported, as the document's module
# imports the registry, which imports this one
MonthDocument = Any

HOUR = 3600.0
DEFINITIONS = ("paper", "all")  # r_f: the paper's (large jobs) and every GPU job's
RUN_SETS = ("priority", "all")  # ETTR: the highest-priority long runs, and all long runs


def hours(value: float | None) -> float | None:
    return None if value is None else value * HOUR


def rate_samples(part: str):
    """r_f's `part` (value, lower, upper) under each definition."""
    return lambda m: (((d,), getattr(getattr(m.node_failure_rate, d), part)) for d in DEFINITIONS)


def ettr_samples(column: str):
    """An ETTR bucket's `column` of each run set."""
    return lambda m: (
        ((row.size_bucket, run_set), getattr(row, column))
        for run_set in RUN_SETS
        for row in getattr(m.ettr_vs_expected, run_set)
    )


def mttf_samples(column: str):
    """An MTTF bucket's `column` (hours) in seconds."""
    return lambda m: [((b.size_bucket,), hours(getattr(b, column))) for b in m.mttf_by_size]


def repairs_samples(m: MonthDocument) -> list[Sample]:
    return [
        ((stat, kind), hours(getattr(getattr(m.node_repairs, kind), f"{stat}_hours")))
        for kind in ("failures", "all")
        for stat in ("mean", "median")
    ]


def lemon_count_samples(m: MonthDocument) -> list[Sample]:
    lemons = m.lemon_nodes
    return [((), None if lemons.not_measured else len(lemons.candidates))]
