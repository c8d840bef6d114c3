"""LBNL NHC log lines: `<ISO time> <host> nhc[pid]: ERROR:  nhc:  Health check failed:  <check>`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simulator.params import Clock


def write_nhc_log(
    path: Path, lines: list[tuple[int, int, str, int]], node_names: list[str], clock: Clock, lo: int, hi: int
) -> None:
    """The NHC failures of [lo, hi) in time order."""
    kept = sorted(x for x in lines if lo <= x[0] < hi)
    stamps = clock.texts(np.array([x[0] for x in kept], dtype=np.int64))
    with open(path, "w") as out:
        for ts, (_, node, check, pid) in zip(stamps, kept, strict=True):
            out.write(f"{ts}+00:00 {node_names[node]} nhc[{pid}]: ERROR:  nhc:  Health check failed:  {check}\n")
