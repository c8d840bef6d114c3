"""bench/periods_bench.py at a toy size (tests/test_benches.py lists every bench's toy run; one heavy bench a file,
so that the test command's workers run them side by side)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_runs import bench, read_json


@pytest.mark.slow
@pytest.mark.bench
def test_periods_bench(tmp_path: Path, prefect_server: str):
    """run, backfill, rerun and study of this checkout, each a fresh `reliability-report` process."""
    results = tmp_path / "results"
    work = tmp_path / "work"
    bench(
        "periods_bench.py", "--nodes", "2", "--months", "2", "--workdir", work, "--results", results, api=prefect_server
    )
    figures = read_json(results / "periods.json")
    assert figures["months"] == "2026-09..2026-10" and "before" not in figures
    after = figures["after"]
    assert set(after["median"]) == {"first_run", "run", "backfill", "rerun", "study"}
    assert all(s > 0 for s in after["median"].values()) and all(r > 0 for r in after["ratios"].values())
