"""The saved month the quick tier renders instead of building one: the golden month's report
directory (tests/data/golden/reports/month, written by tests/test_study.py), its metrics.json
read afresh for each test to edit."""

from __future__ import annotations

import json
from pathlib import Path

SAVED_MONTH = Path(__file__).resolve().parent / "data" / "golden" / "reports" / "month"


def saved_metrics() -> dict:
    """The saved month's metrics.json, a new copy each call."""
    return json.loads((SAVED_MONTH / "metrics.json").read_text())
