"""metrics.json, typed (docs/metrics.md, its JSON Schema docs/metrics.schema.json): a month's
(`MonthDocument`) and a study's (`StudyDocument`), built from one set of figure classes
(flows/figures/figure_types.py: what both show of a cluster's period) and what only one of them shows.

The figures are validated against these classes once (flows/figures/read.py month_document,
study_document), before anything is drawn or rendered: a key no class declares, a missing one or a
value of the wrong type fails there; a metrics.json is read back into them by read_document. The
validated document is what every output receives (the pages, the charts, OpenMetrics, the exports,
delivery, publishing, the artifact) and what metrics.json is written from (`write_document`, its
JSON `figures_of`).
Numbers keep their JSON type (figure_types.Real), so the file's bytes are those of the figures.
metrics.json says each number once: what the report shows joined (a month's causes with what they
are compared with, a study's clusters side by side) is a property of the document, joined when read
(`MonthDocument.causes_compared`, `StudyDocument.side_by_side`), never written.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from flows.figures import side_by_side as joins
from flows.figures.compare import causes_compared
from flows.figures.coverage import PartialMonth, Period
from flows.figures.figure_types import (
    Change,
    Count,
    FlagTest,
    Headline,
    JobMixBySizeRow,
    JobMixRow,
    MonthRates,
    MonthRatesByCause,
    NodeRepairs,
    Rate,
    Real,
    Reproduce,
    Strict,
)
from flows.figures.moved_keys import LAYOUT_VERSION
from flows.figures.period_figures import PeriodFigures
from flows.figures.registry import FIGURES
from flows.figures.table_types import CausesCompared, EttrAtInterval, SideBySide
from flows.ingest.manifest import LandedInput

# metrics.json's version: its layout's, or the newest figure's (its declaration's `since`), whichever is later
SCHEMA_VERSION = max(LAYOUT_VERSION, *(figure.since for figure in FIGURES))


# --- a month's own blocks


class WindowCause(Rate):
    """A cause's rate over a trailing window, and this month's against the window's earlier months."""

    category: str
    this_month_vs_window: Change


class WindowMttf(Strict):
    size_bucket: str
    runtime_hours: Real
    infra_failures: Count
    mttf_hours: Real | None
    mttf_lower_hours: Real | None
    mttf_upper_hours: Real | None


class Window(Strict):
    """r_f, causes, MTTF and node repair times over a trailing window ending at the month."""

    months: Count
    months_available: Count
    paper: Rate
    all: Rate
    this_month_vs_window: Change
    by_cause: list[WindowCause]
    mttf_by_size: list[WindowMttf]
    node_repairs: NodeRepairs


class History(Strict):
    monthly: list[MonthRates]
    trailing: list[Window]
    earlier_months_missing: list[str] = Field(description="months of the longest window not built (YYYY-MM)")


class RunEttr(Strict):
    size_bucket: str
    runs: Count
    mean_ettr: Real | None
    median_ettr: Real | None
    min_ettr: Real | None


class CurvePoint(Strict):
    ckpt_minutes: Real
    ettr: Real | None
    valid: bool


class EttrCurve(Strict):
    """E[ETTR] against the checkpoint interval at a job size (a month's curves)."""

    gpus: Count
    points: list[CurvePoint]
    optimal_ckpt_minutes: Real | None = Field(description="Young-Daly (null: no checkpoint write time given)")


class GridCurve(Strict):
    """E[ETTR] against the checkpoint interval at a job size and a restart overhead (a study's grid)."""

    gpus: Count
    points: list[CurvePoint]
    restart_overhead_minutes: Real


class ExpectedEttr(Strict):
    r_f_definition: str
    r_f: Real | None
    curves: list[EttrCurve]
    by_interval: list[EttrAtInterval] = Field(
        default_factory=list, description="the curves at each interval (a month's; empty in one written before it)"
    )


class HealthCategory(Strict):
    category: str
    severity: str
    source: str
    events: Count


class HealthEvents(Strict):
    total: Count
    unclassified: Count
    unclassified_share: Real | None
    by_category: list[HealthCategory]


class FlagFamily(Strict):
    description: str
    tests_counted: Count
    tests: dict[str, FlagTest]


class ChangeFlags(Strict):
    """The report's flags of change, Holm-corrected per family."""

    method: str
    family_wise_error_rate: Real
    families: dict[str, FlagFamily]


class Expectation(Strict):
    """An expectation a suite's rows did not meet."""

    expectation: str
    column: str | None
    observed: JsonValue
    unexpected_count: Count | None
    sample: JsonValue
    error: str | None = None


class SuiteOutcome(Strict):
    suite: str
    table: str
    rows: Count
    evaluated: Count
    successful: Count
    failures: list[Expectation]
    warnings: list[Expectation]


class DataQualityStatus(Strict):
    status: Literal["ok", "warning", "failed"]
    reasons: list[str]
    evaluated: Count = Field(description="the expectations the suites evaluated, in all")
    successful: Count = Field(description="of them met")


class Summary(Strict):
    """What the month's report says first (flows/figures/summary.py)."""

    text: str
    trend: str
    data_quality: DataQualityStatus
    headline: list[Headline]
    earlier_months: str | None
    coverage: list[str]


class MonthDocument(PeriodFigures):
    """A month's metrics.json: the period's figures of one cluster's month and what only a month shows."""

    schema_version: Literal[SCHEMA_VERSION]  # type: ignore[valid-type]
    month: str
    cluster: str
    period: Period
    job_mix: list[JobMixRow]
    month_over_month: Change
    month_over_month_by_cause: dict[str, Change] = Field(description="cause -> its rate against last month's")
    history: History
    run_ettr: list[RunEttr]
    expected_ettr: ExpectedEttr
    health_events: HealthEvents
    change_flags: ChangeFlags
    inputs: dict[str, LandedInput] = Field(description="the landing manifest's sources (flows/ingest/manifest.py)")
    quarantine_sample: list[str]
    data_quality: list[SuiteOutcome]
    reproduce: Reproduce
    summary: Summary
    no_jobs_declared: bool | None = Field(None, description="present (true) on a month built with --no-jobs-ran")

    @cached_property
    def causes_compared(self) -> CausesCompared:
        """The month's causes with what they are compared with, joined by category from where the
        document says each number once (flows/figures/compare.py causes_compared)."""
        # the parts the join reads, as metrics.json holds them
        parts = {"failures_by_cause", "month_over_month_by_cause", "history", "change_flags"}
        written = self.model_dump(mode="json", exclude_unset=True, include=parts)
        joined = causes_compared(
            written["failures_by_cause"],
            written["month_over_month_by_cause"],
            written["history"],
            written["change_flags"],
        )
        return CausesCompared.model_validate(joined)


# --- a study's own blocks


class SizeRow(Strict):
    size_bucket: str
    bucket_order: Count
    attempts: Count
    gpu_hours: Real


class LostBySize(Strict):
    size_bucket: str
    bucket_order: Count
    lost_gpu_hours: Real
    first_order_gpu_hours: Real
    second_order_gpu_hours: Real
    second_order_preemptions: Count
    infra_failures: Count
    gpu_hours: Real
    share_of_gpu_hours: Real | None


class OptimalCkpt(Strict):
    gpus: Count
    minutes: Real | None


class EttrGrid(Strict):
    """E[ETTR] against the checkpoint interval at several restart overheads."""

    r_f_definition: str
    r_f: Real | None
    restart_overheads_minutes: list[Real]
    curves: list[GridCurve]
    optimal_ckpt_minutes: list[OptimalCkpt]


class StudyCluster(PeriodFigures):
    """One cluster's figures over the study's range and what only a study shows of it."""

    job_mix: list[JobMixBySizeRow]
    job_mix_by_size: list[SizeRow]
    monthly: list[MonthRatesByCause]
    expected_ettr_grid: EttrGrid
    lost_goodput_by_size: list[LostBySize]
    partial_months: list[PartialMonth] = Field(description="the months its records observe in part ([]: none)")


class Ratio(Strict):
    measure: str
    ratio: Real | None
    lower: Real | None
    upper: Real | None
    p_value: Real | None
    p_adjusted: Real | None
    flagged: bool


class Pair(Strict):
    """Two clusters compared: rate ratios with exact intervals, Holm-corrected."""

    a: str
    b: str
    differ: bool
    verdict: str
    tests_run: Count
    ratios: list[Ratio]


class StudySummary(Strict):
    text: str
    headline: list[Headline]


class StudyDocument(Strict):
    """A study's metrics.json: each cluster's period figures over the range, compared."""

    schema_version: Literal[SCHEMA_VERSION]  # type: ignore[valid-type]
    from_month: str
    to_month: str
    months: Count
    clusters: dict[str, StudyCluster]
    reproduce: Reproduce
    comparison: list[Pair]
    summary: StudySummary

    @cached_property
    def clusters_written(self) -> dict[str, dict]:
        """Each cluster's figures as metrics.json holds them (what the joins below read)."""
        return self.model_dump(mode="json", exclude_unset=True, include={"clusters"})["clusters"]

    @cached_property
    def side_by_side(self) -> SideBySide:
        """The clusters' tables joined by each row's key (flows/figures/side_by_side.py), when read."""
        return SideBySide.model_validate(joins.side_by_side(self.clusters_written))

    @cached_property
    def causes(self) -> list[str]:
        """Every cause any cluster had: the first cluster's in its order, then the others'."""
        return joins.cause_order(self.clusters_written)

    @cached_property
    def ettr_buckets(self) -> list[str]:
        """Every size bucket with a measured ETTR at some cluster, by size."""
        return joins.ettr_buckets(self.clusters_written)


def figures_of(document: BaseModel) -> dict:
    """A validated document's figures as metrics.json holds them: JSON types, and only the keys it
    was given (an optional field the figures do not carry stays absent)."""
    return document.model_dump(mode="json", exclude_unset=True)


def write_document(path: Path, document: BaseModel) -> None:
    """Write metrics.json from a validated document (`figures_of`), its keys sorted, one space of indent."""
    path.write_text(document_text(document))


def document_text(document: BaseModel) -> str:
    """metrics.json's text of a validated document (write_document)."""
    return json.dumps(figures_of(document), indent=1, sort_keys=True) + "\n"
