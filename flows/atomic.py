"""Crash-safe replacement of output directories: a failed run never loses an earlier result."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def replace_dir_atomically(target: Path, fill: Callable[[Path], None]) -> None:
    """Fill a sibling temporary directory, then swap it in with renames.

    Until the swap the previous content of `target` is untouched, so an exception (or a kill)
    during `fill` leaves the last good result in place. What a killed run left behind is cleared
    first (callers hold the cluster's run lock, so no other run is filling): its temporary
    directory, and, if it died between the two renames, its `old` directory is the last good
    result and goes back in place.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for stale in sorted(
        target.parent.glob(f".{target.name}.old-*"), key=lambda path: path.stat().st_mtime, reverse=True
    ):
        if not target.exists():
            stale.rename(target)
        else:
            shutil.rmtree(stale, ignore_errors=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        fill(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)
