"""bench/backfill_bench.py at a toy size (tests/test_benches.py lists every bench's toy run; one heavy bench a file,
so that the test command's workers run them side by side)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_runs import bench, read_json


@pytest.mark.slow
@pytest.mark.bench
def test_backfill_bench(tmp_path: Path, prefect_server: str):
    """Two clusters' backfills one after the other and side by side."""
    results = tmp_path / "results"
    bench(
        "backfill_bench.py", "--clusters", "2", "--months", "1", "--nodes", "2",
        "--workdir", tmp_path / "work", "--results", results, api=prefect_server,
    )  # fmt: skip
    figures = read_json(results / "backfill-clusters.json")
    assert figures["sequential_seconds"] > 0 and figures["parallel_seconds"] > 0 and figures["speedup"] > 0
    assert set(figures["attempts"]) == {"par1", "par2"} and all(n > 0 for n in figures["attempts"].values())
