"""One run at a time per cluster and per warehouse: lock files naming their holder.

`<data>/locks/<cluster>.lock` serialises the runs of a cluster; `<warehouse>.lock`, beside the
DuckDB file, the runs that build into one warehouse (two configs may share one warehouse but not
their data directory; DuckDB itself would refuse the second writer with its raw lock error).

filelock's SoftFileLock writes the holder's pid, host and process start time into the file. A lock
left by a process that died (killed, machine crash) is detected and taken over by the next run on
the same host: the pid is gone, or now belongs to a process that started later. A lock held from
another host cannot be checked from here; the error names it so that an operator can remove it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from filelock import SoftFileLock, Timeout

from flows.core.escape import escaped_logger

log = escaped_logger(__name__)
# How long a run waits for another run of the same cluster (e.g. the monthly run during a backfill).
WAIT_SECONDS = 3600.0
# A lock file that names no holder (a run killed between creating and writing it) older than this is stale.
UNNAMED_STALE_SECONDS = 60.0


class ClusterBusyError(RuntimeError):
    """Another run holds the cluster's (or the warehouse's) lock and did not let go in time."""


def holder(lock_path: Path) -> str | None:
    """ "pid <pid> on <host>" from a lock file, or None if there is none."""
    try:
        pid, host, *_ = lock_path.read_text().split("\n")
    except (FileNotFoundError, ValueError):
        return None
    return f"pid {pid} on {host}"


# The runs this thread holds the locks of, as (data dir, cluster, warehouse): a run inside another
# of the same config (a later month refreshed by the run that built an earlier one,
# flows/pipeline.py) has its locks already.
_runs_held = threading.local()


class LockedRun(Protocol):
    """What a run's locks are taken on: a config's (flows/config/cluster.py ClusterConfig)."""

    data_dir: Path
    cluster: str
    warehouse_path: Path


@contextmanager
def run_lock(config: LockedRun, timeout: float | None = None) -> Iterator[None]:
    """Hold both locks of a run of `config`: its cluster's, then its warehouse's (always in this
    order, so two runs never hold one each and wait for the other)."""
    held: set = _runs_held.__dict__.setdefault("runs", set())
    run = (config.data_dir, config.cluster, config.warehouse_path)
    if run in held:
        yield
        return
    with cluster_lock(config.data_dir, config.cluster, timeout), warehouse_lock(config.warehouse_path, timeout):
        held.add(run)
        try:
            yield
        finally:
            held.discard(run)


@contextmanager
def cluster_lock(data_dir: Path, cluster: str, timeout: float | None = None) -> Iterator[Path]:
    """Hold the lock of `cluster`'s runs (waiting up to `timeout`, default WAIT_SECONDS)."""
    with _held(data_dir / "locks" / f"{cluster}.lock", f"cluster {cluster}", timeout) as path:
        yield path


@contextmanager
def warehouse_lock(warehouse: Path, timeout: float | None = None) -> Iterator[Path]:
    """Hold the lock of the runs that build into `warehouse` (waiting up to `timeout`)."""
    with _held(warehouse.with_name(warehouse.name + ".lock"), f"warehouse {warehouse}", timeout) as path:
        yield path


@contextmanager
def _held(path: Path, what: str, timeout: float | None) -> Iterator[Path]:
    path.parent.mkdir(parents=True, exist_ok=True)
    earlier = holder(path)
    if earlier is None and _unnamed_and_old(path):  # filelock would take it for a live holder's
        log.warning("cleared the lock of %s that names no holder (%s), left by a run killed as it took it", what, path)
        path.unlink(missing_ok=True)
    lock = SoftFileLock(path)
    try:
        lock.acquire(timeout=0)  # takes over a dead process's lock
        if earlier:
            log.warning("cleared the stale lock of %s left by %s, which is no longer running", what, earlier)
    except Timeout:
        log.warning("%s is being processed by %s; waiting for it", what, holder(path) or "another run")
        try:
            lock.acquire(timeout=WAIT_SECONDS if timeout is None else timeout, poll_interval=1.0)
        except Timeout:
            raise ClusterBusyError(
                f"{what} is being processed by {holder(path) or 'another run'} (lock {path}); "
                "if that process is gone (e.g. it ran on another host), remove the lock file"
            ) from None
    try:
        yield path
    finally:
        lock.release()


def _unnamed_and_old(path: Path) -> bool:
    try:
        return time.time() - path.stat().st_mtime > UNNAMED_STALE_SECONDS
    except FileNotFoundError:
        return False
