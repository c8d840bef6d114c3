"""NVIDIA Xid kernel lines as rsyslog writes them (ISO timestamp, host, `kernel: NVRM: Xid ...`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simulator.catalog import PCI_IDS, XID_TEXT
from simulator.params import Clock


def write_xid_log(
    path: Path, xids: list[tuple[int, int, int, int, int, int]], node_names: list[str], clock: Clock, lo: int, hi: int
) -> None:
    """The Xid lines of [lo, hi) in time order (relayed duplicates kept)."""
    kept = sorted(x for x in xids if lo <= x[0] < hi)
    stamps = clock.texts(np.array([x[0] for x in kept], dtype=np.int64))
    texts: dict[tuple[int, int, int], str] = {}  # (xid, gpu, prev) -> its message; a few dozen of them

    def text(xid: int, gpu: int, prev: int) -> str:
        key = (xid, gpu, prev)
        if key not in texts:
            texts[key] = XID_TEXT[xid].format(gpu=gpu, prev=prev)
        return texts[key]

    lines = [
        f"{ts}.000000+00:00 {node_names[node]} kernel: NVRM: Xid (PCI:{PCI_IDS[gpu]}): {xid}, pid={pid}, "
        f"name=python, {text(xid, gpu, prev)}\n"
        for ts, (_, node, xid, gpu, prev, pid) in zip(stamps, kept, strict=True)
    ]
    with open(path, "w") as out:
        out.write("".join(lines))
