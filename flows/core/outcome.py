"""A month's outcome in a run of several (a backfill's months, a refresh's later months): the
runs make it (flows/stages.py month_outcome, failed_outcome), the commands print it, the backfill's
artifact lists it (flows/report/artifact.py)."""

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
