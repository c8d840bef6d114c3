"""Debian's Prometheus started by a test on 127.0.0.1 over TSDB blocks that promtool made of an
OpenMetrics file (the month history of export-prometheus, a simulated dcgm-exporter month), and the
server-process helper the Pushgateway uses too."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import free_port


@contextlib.contextmanager
def server(command: list[str], ready_url: str, log: Path) -> Iterator[None]:
    """A server process of ours, until the block ends; waits until `ready_url` answers 200."""
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    try:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(ready_url, timeout=2).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{command[0]} did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def prometheus_of(openmetrics: Path, work: Path, *create_options: str) -> Iterator[str]:
    """Prometheus serving the samples of `openmetrics` (promtool's blocks in `work`/data, with
    `create_options` such as --max-block-duration) until the block ends; yields its base URL."""
    data = work / "data"
    promtool = ["promtool", "tsdb", "create-blocks-from", "openmetrics", *create_options]
    subprocess.run([*promtool, str(openmetrics), str(data)], check=True, capture_output=True)
    (work / "prometheus.yml").write_text("global:\n  scrape_interval: 1m\n")
    port = free_port()
    command = [
        "prometheus",
        f"--config.file={work / 'prometheus.yml'}",
        f"--storage.tsdb.path={data}",
        "--storage.tsdb.retention.time=100y",  # the default 15 d would delete every month but the newest
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    with server(command, f"http://127.0.0.1:{port}/-/ready", work / "prometheus.log"):
        yield f"http://127.0.0.1:{port}"
