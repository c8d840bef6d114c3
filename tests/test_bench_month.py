"""bench/month_bench.py at a toy size (tests/test_benches.py lists every bench's toy run; one heavy bench a file,
so that the test command's workers run them side by side)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_runs import bench, read_json


@pytest.mark.slow
@pytest.mark.bench
def test_month_bench(tmp_path: Path, prefect_server: str):
    """month_bench's stages through the monthly flow's tasks, `reliability-report run` end to end on the
    month and the small month, and a backfill of two months: seconds, ratios and peak RSS."""
    results = tmp_path / "results"
    done = bench(
        "month_bench.py", "--toy", "--repeat", "1", "--small", "--backfill", "2",
        "--workdir", tmp_path / "work", "--results", results, api=prefect_server,
    )  # fmt: skip
    month = read_json(results / "month.json")
    stages = month["month"]["stages"]
    assert list(stages) == ["land", "dbt", "quality", "analysis", "render"]
    assert all(s["seconds"] > 0 and s["ratio_to_floor"] > 0 and s["peak_rss_mib"] > 0 for s in stages.values())
    assert month["floor_seconds"] > 0 and month["month"]["attempts"] > 1000
    for figures in (month["month"], month["small_month"]):
        assert figures["end_to_end_seconds"] > 0 and figures["end_to_end_peak_rss_mib"] > 100
        assert figures["total_seconds"] > 0 and figures["attempts"] > 0
    assert month["month"]["end_to_end_to_floor"] > 1
    backfill = read_json(results / "backfill.json")
    assert backfill["months"] == "2026-09..2026-10" and backfill["count"] == 2
    assert backfill["seconds"] > 0 and backfill["peak_rss_mib"] > 100 and backfill["to_one_month"] > 0
    assert backfill["runs"] == [{"seconds": backfill["seconds"], "peak_rss_mib": backfill["peak_rss_mib"]}]
    assert "end to end" in done.stdout and "backfill of 2 months" in done.stdout
    assert (tmp_path / "work" / "rendered" / "bench" / "report.html").exists()
