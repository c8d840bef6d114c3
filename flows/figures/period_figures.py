"""A period's figures of one cluster (flows/figures/registry.py declares each): what a month's
report and a study both show, each read from its mart once and only where the period's inputs and
exposure measured it (flows/figures/measured.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from pydantic import Field, create_model

from flows.config.cluster import AnalysisConfig
from flows.figures.figure import Reading
from flows.figures.figure_types import Parameters, Strict
from flows.figures.measured import exposure, not_measured, write_unmeasured
from flows.figures.period import GPU_JOBS, MTTF_BY_SIZE, WITHIN, Period, node_failure_rate, totals, unmeasured_rates
from flows.figures.rates import CONFIDENCE
from flows.figures.registry import FIGURES, read_figures
from flows.figures.table_types import CausesCompared
from flows.warehouse.engines import MartReader


class PeriodFiguresBase(Strict):
    """What every period's figures carry besides its figures: the parameters and what was not measured."""

    parameters: Parameters  # type: ignore[valid-type]
    not_measured: dict[str, str] = Field(description="figure path -> why it is not measured ({}: all measured)")

    @property
    def causes_compared(self) -> CausesCompared | None:
        """What the period's causes are compared with (a month's last month and trailing windows:
        MonthDocument's); none for a period without them (a study's range)."""
        return None


# The figures a month's report and a study both show of a cluster's period: one field per figure.
PeriodFigures = create_model(
    "PeriodFigures",
    __base__=PeriodFiguresBase,
    __doc__="The figures a month's report and a study both show of a cluster's period.",
    **{figure.key: (figure.type, Field(description=figure.doc)) for figure in FIGURES},
)


def period_figures(con: MartReader, period: Period, params: AnalysisConfig, inputs: Collection[str]) -> dict:
    """The figures a month's report and a study both show of the cluster's period, each only where
    the period's `inputs` (those landed for every month of it) and exposure measured it
    (flows/figures/measured.py): an unmeasured one is null or [] and named in `not_measured`."""
    period_totals = totals(con, period)
    r_f = node_failure_rate(con, period, params)
    # the distinct GPU jobs name the exposure in a reason's words; metrics.json counts attempts
    (jobs,) = period.rows(con, GPU_JOBS)
    buckets = period.rows(con, MTTF_BY_SIZE, order="bucket_order")
    ended = sum(b["ended_attempts"] for b in buckets)  # GPU attempts only: a failure can end only those
    seen = exposure(inputs, period_totals | jobs, r_f, within=WITHIN[period.kind], gpu_ended_attempts=ended)
    gaps = not_measured(seen, params)
    r_f = unmeasured_rates(r_f, gaps)  # before the models computed from it
    figures = read_figures(Reading(con, period, params, period_totals, r_f, buckets))
    parameters = {**dataclasses.asdict(params), "confidence": CONFIDENCE}
    return write_unmeasured({"parameters": parameters, **figures}, gaps)
