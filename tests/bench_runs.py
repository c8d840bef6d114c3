"""Running a bench script at toy size from the tests (tests/test_benches.py and the test_bench_*.py
files, one bench each so that the test command's workers run them side by side)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"


def bench(script: str, *args: str | Path, api: str | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run bench/<script> with this interpreter from the repository's root (as bench/README.md
    does); it must succeed. With `api`, the `reliability-report` commands it runs report to that
    Prefect server instead of each booting its own (seconds of CPU a command, not what is tested)."""
    command = [sys.executable, str(BENCH / script), *map(str, args)]
    env = {**os.environ, "PREFECT_API_URL": api} if api else None
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def read_json(path: Path) -> dict | list:
    assert path.exists(), f"{path.name} was not written"
    return json.loads(path.read_text())
