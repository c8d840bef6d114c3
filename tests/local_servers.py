"""Servers the tests (and bench/prometheus_recall_real.py) start themselves on 127.0.0.1: a free
port, a server process waited for until it answers and stopped however the block ends, and
Debian's Prometheus over TSDB blocks promtool made of an OpenMetrics file (the month history of
export-prometheus, a simulated dcgm-exporter month). No pytest here: a bench imports it too."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running(
    command: list[str], ready_url: str, log: Path, env: Mapping[str, str] | None = None, timeout: float = 60
) -> Iterator[None]:
    """A server process of ours (its own session, its output in `log`) until the block ends, however
    it ends; waits until `ready_url` answers 200, a RuntimeError with the log's end if it never does."""
    with open(log, "w") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(ready_url, timeout=2).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextlib.contextmanager
def prometheus_serving(data: Path, work: Path, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    """Prometheus over the TSDB blocks in `data` on a free port until the block ends (its command run
    after `prefix`, e.g. ("nice", "-n", "10")); yields its base URL."""
    (work / "prometheus.yml").write_text("global:\n  scrape_interval: 1m\n")
    port = free_port()
    command = [
        *prefix,
        "prometheus",
        f"--config.file={work / 'prometheus.yml'}",
        f"--storage.tsdb.path={data}",
        "--storage.tsdb.retention.time=100y",  # the default 15 d would delete every month but the newest
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    url = f"http://127.0.0.1:{port}"
    with running(command, f"{url}/-/ready", work / "prometheus.log", timeout=120):
        yield url


@contextlib.contextmanager
def prometheus_of(openmetrics: Path, work: Path, *create_options: str) -> Iterator[str]:
    """Prometheus serving the samples of `openmetrics` (promtool's blocks in `work`/data, with
    `create_options` such as --max-block-duration) until the block ends; yields its base URL."""
    data = work / "data"
    promtool = ["promtool", "tsdb", "create-blocks-from", "openmetrics", *create_options]
    subprocess.run([*promtool, str(openmetrics), str(data)], check=True, capture_output=True)
    with prometheus_serving(data, work) as url:
        yield url
