"""The flow also runs against a real Prefect server (started here on 127.0.0.1), not only ephemerally."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from flows.cli import write_demo_config
from flows.months import Month
from flows.simulate import SimParams, simulate

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory):
    port = free_port()
    env = {
        **os.environ,
        # Its own home, kept between runs so migrations run once per machine.
        "PREFECT_HOME": str(ROOT / ".prefect-test-server"),
        "PREFECT_SERVER_UI_ENABLED": "false",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    env.pop("PREFECT_API_URL", None)
    log = tmp_path_factory.mktemp("server") / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    api = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"prefect server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield api
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def test_run_against_a_prefect_server(prefect_server, tmp_path):
    month = Month.parse("2026-09")
    config = write_demo_config(tmp_path, "srv", tmp_path / "reports")
    simulate(SimParams("srv", month, nodes=16, seed=4), tmp_path / "sim" / "srv" / str(month))
    env = {**os.environ, "PREFECT_API_URL": prefect_server}
    done = subprocess.run(
        [str(BIN / "reliability-report"), "run", "--month", str(month), "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "reports" / "srv" / str(month) / "report.html").is_file()
    runs = httpx.post(
        f"{prefect_server}/flow_runs/filter",
        json={"flow_runs": {"state": {"type": {"any_": ["COMPLETED"]}}}, "sort": "START_TIME_DESC", "limit": 20},
        timeout=10,
    ).json()
    assert any(run["parameters"].get("config") == str(config) for run in runs)
    assert "Starting temporary server" not in done.stderr
