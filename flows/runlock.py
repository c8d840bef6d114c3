"""One run per cluster at a time: a lock file `<data>/locks/<cluster>.lock` naming its holder.

filelock's SoftFileLock writes the holder's pid, host and process start time into the file. A lock
left by a process that died (killed, machine crash) is detected and taken over by the next run on
the same host: the pid is gone, or now belongs to a process that started later. A lock held from
another host cannot be checked from here; the error names it so that an operator can remove it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import SoftFileLock, Timeout

log = logging.getLogger(__name__)
# How long a run waits for another run of the same cluster (e.g. the monthly run during a backfill).
WAIT_SECONDS = 3600.0


class ClusterBusyError(RuntimeError):
    pass


def holder(lock_path: Path) -> str | None:
    """ "pid <pid> on <host>" from a lock file, or None if there is none."""
    try:
        pid, host, *_ = lock_path.read_text().split("\n")
    except (FileNotFoundError, ValueError):
        return None
    return f"pid {pid} on {host}"


@contextmanager
def cluster_lock(data_dir: Path, cluster: str, timeout: float | None = None) -> Iterator[Path]:
    path = data_dir / "locks" / f"{cluster}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    earlier = holder(path)
    lock = SoftFileLock(path)
    try:
        lock.acquire(timeout=0)  # takes over a dead process's lock
        if earlier:
            log.warning("cleared the stale lock of cluster %s left by %s, which is no longer running", cluster, earlier)
    except Timeout:
        log.warning("cluster %s is being processed by %s; waiting for it", cluster, holder(path) or "another run")
        try:
            lock.acquire(timeout=WAIT_SECONDS if timeout is None else timeout, poll_interval=1.0)
        except Timeout:
            raise ClusterBusyError(
                f"cluster {cluster} is being processed by {holder(path) or 'another run'} (lock {path}); "
                "if that process is gone (e.g. it ran on another host), remove the lock file"
            ) from None
    try:
        yield path
    finally:
        lock.release()
