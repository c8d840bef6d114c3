"""The study's charts: PNGs drawn from the study's figures alone, in the monthly charts' style
(flows/charts.py), each cluster a series."""

from __future__ import annotations

from flows.charts import Chart


def render_study_charts(study: dict) -> dict[str, Chart]:
    """Every chart the study's data supports, by name."""
    return {}
