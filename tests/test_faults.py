"""Crash safety: the cluster lock, and runs that die at each stage (an exception, or a SIGKILL of the
whole process group) leave the previous outputs intact; the next run completes with nothing lost."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from flows import runlock

HOLD = "from flows.runlock import cluster_lock; import sys, time\nwith cluster_lock(__import__('pathlib').Path(sys.argv[1]), 'c'):\n    print('held', flush=True); time.sleep(120)\n"


def hold_lock(data_dir: Path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(data_dir)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    return holder


def test_a_live_holder_keeps_the_lock_and_is_named(tmp_path):
    holder = hold_lock(tmp_path)
    try:
        with pytest.raises(runlock.ClusterBusyError, match=rf"pid {holder.pid} on {socket.gethostname()}"):
            with runlock.cluster_lock(tmp_path, "c", timeout=1.5):
                pass
    finally:
        holder.kill()
        holder.wait()


def test_a_dead_holders_lock_is_cleared(tmp_path, caplog):
    holder = hold_lock(tmp_path)
    holder.kill()
    holder.wait()
    lock = tmp_path / "locks" / "c.lock"
    assert lock.exists()  # a SIGKILL leaves it behind
    with runlock.cluster_lock(tmp_path, "c", timeout=0):
        assert lock.read_text().split("\n")[0] == str(os.getpid())
    assert f"cleared the stale lock of cluster c left by pid {holder.pid}" in caplog.text
    assert not lock.exists()


def test_a_lock_from_another_host_is_not_taken(tmp_path):
    lock = tmp_path / "locks" / "c.lock"
    lock.parent.mkdir()
    lock.write_text("4242\nother-host\n")  # its pid cannot be checked from here
    with pytest.raises(runlock.ClusterBusyError, match="pid 4242 on other-host .* remove the lock file"):
        with runlock.cluster_lock(tmp_path, "c", timeout=0.5):
            pass
    assert lock.read_text() == "4242\nother-host\n"


def test_the_lock_is_released_when_the_run_raises(tmp_path):
    with pytest.raises(KeyError):
        with runlock.cluster_lock(tmp_path, "c", timeout=0):
            raise KeyError("boom")
    with runlock.cluster_lock(tmp_path, "c", timeout=0):
        pass
