"""Slurm's compressed host lists."""

from __future__ import annotations


def fold_hostlist(prefix: str, indices: list[int], width: int) -> str:
    """Slurm's compressed host list of `prefix` + zero-padded numbers, e.g. gpu[0001-0004,0007].

    Written here instead of ClusterShell's NodeSet.fromlist because the simulator already holds
    sorted integers and NodeSet costs ~60 us per job; the reader's ClusterShell expansion checks
    the result in the tests.
    """
    if len(indices) == 1:
        return f"{prefix}{indices[0]:0{width}d}"
    ranges, start, prev = [], indices[0], indices[0]
    for i in indices[1:]:
        if i != prev + 1:
            ranges.append((start, prev))
            start = i
        prev = i
    ranges.append((start, prev))
    parts = [f"{a:0{width}d}" if a == b else f"{a:0{width}d}-{b:0{width}d}" for a, b in ranges]
    return f"{prefix}[{','.join(parts)}]"
