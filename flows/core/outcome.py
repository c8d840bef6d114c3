"""What a month's run reports (`MonthSummary`: flows/pipeline.py report_month makes it, the `run`
command and the monthly deployment return it) and a month's outcome in a run of several
(`MonthOutcome`: a backfill's months, a refresh's later months; flows/stages.py month_outcome,
failed_outcome make it, the commands print it, the backfill's artifact lists it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MonthOutcome:
    """A month's line in a backfill's or a refresh's outcomes: what happened to it (`outcome`: built,
    refreshed, skipped or failed) and the detail said beside it."""

    month: str
    outcome: str
    detail: str
    changed: tuple[str, ...] = ()  # a month built before: the parts of its figures that changed
    stage: str | None = None  # a failed month's stage
    input_error: bool = False  # a failed month's error was its inputs' (exit code 2)


@dataclass(frozen=True)
class MonthSummary:
    """A month's run: where its report is, what it delivered, its counts in words and its stages'
    seconds; the parts of its figures that changed (None: it was not built before) and the later
    months refreshed after it (their outcomes)."""

    cluster: str
    month: str
    report: str  # report.html's path
    metrics: str  # metrics.json's path
    dbt: dict[str, int]  # the build's node statuses, counted
    delivery: str
    counts: str  # the attempts and failures as every output says them
    period_notice: str | None  # what the report says of a partial month
    stage_seconds: dict[str, float]
    changed: list[str] | None
    refreshed: tuple[MonthOutcome, ...] = ()
