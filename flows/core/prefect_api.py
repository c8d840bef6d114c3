"""The Prefect API a command's flow runs report to: the one Prefect's settings name
(PREFECT_API_URL in the environment, the active Prefect profile, prefect.toml or .env), else a
temporary one booted in its own process as the command starts.

Prefect boots its temporary server (SubprocessASGIServer) only when a flow's client first needs
it, after `import prefect`, and its start-up imports Prefect's whole server (FastAPI, SQLAlchemy,
Alembic) into the command's process as well. Here the same server command is spawned before
anything heavy is imported, so its boot (about 3 s of CPU, bench/README.md) runs on the other core
while this process imports Prefect; the flow waits for it only when it starts. Whether a profile
names an API is known only once Prefect is imported (its settings are read then): the server is
spawned unless the environment names one, and stopped unused if the settings do. The server is the
same (its database in PREFECT_HOME, services off, no UI) and stops when the process exits.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


class PrefectApiError(RuntimeError):
    pass


class _TemporaryServer:
    def __init__(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/api"
        self.log = tempfile.TemporaryFile()  # what the server prints, shown if it cannot start
        prefect_dir = Path(importlib.util.find_spec("prefect").origin).parent  # not imported: its import takes seconds
        # as prefect.server.api.server.SubprocessASGIServer runs it
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--app-dir",
            str(prefect_dir.parent),
            "--factory",
            "prefect.server.api.server:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "error",
            "--lifespan",
            "on",
        ]
        env = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT__SERVER_EPHEMERAL": "1",  # services off
            "PREFECT__SERVER_FINAL": "1",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",  # else an error line per start on a closed network
        }
        self.process = subprocess.Popen(command, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.ready = False
        atexit.register(self.stop)

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready:
            if self.process.poll() is not None:
                self.log.seek(0)
                said = self.log.read().decode(errors="replace").strip()[-2000:]
                raise PrefectApiError(
                    f"the temporary Prefect API server exited with code {self.process.returncode}: {said or '(no output)'}; "
                    "set PREFECT_API_URL to a running Prefect server to use it instead"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                    self.ready = answer.status == 200
            except OSError:
                pass
            if not self.ready:
                if time.monotonic() > deadline:
                    raise PrefectApiError(
                        f"the temporary Prefect API server did not answer in {timeout:.0f} s; set PREFECT_API_URL "
                        "to a running Prefect server, or PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS higher"
                    )
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_server: _TemporaryServer | None = None


def start_api() -> None:
    """Spawn the temporary server unless PREFECT_API_URL is in the environment (or this process
    spawned one already). Returns at once: wait_for_api(), once Prefect is imported, says which API
    the runs use and waits for it."""
    global _server
    if _server is None and not os.environ.get("PREFECT_API_URL"):
        _server = _TemporaryServer()


def server_booting() -> bool:
    """Whether the command waits for the temporary server it spawned (not yet answering, not one an
    earlier command of this process adopted)."""
    return _server is not None and not _server.ready and os.environ.get("PREFECT_API_URL") != _server.url


def wait_for_api() -> None:
    """Return once the runs' API is known and answers: the one Prefect's settings name (a server
    start_api() spawned is then stopped unused; one in the environment, at once), else the temporary
    server, once it answers, with PREFECT_API_URL pointing at it (for Prefect's settings and the
    command's child processes). PrefectApiError naming what the server said if it cannot start."""
    global _server
    if _server is None:
        return
    adopted = os.environ.get("PREFECT_API_URL") == _server.url  # by an earlier command of this process
    if not adopted:
        from prefect.settings import Settings

        if Settings().api.url:  # a Prefect profile, prefect.toml or .env names the API: reuse it
            _server.stop()
            _server = None
            return
    # Prefect's own setting for its temporary server (flows/__init__.py gives its default)
    _server.wait(float(os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"]))
    if not adopted:
        from prefect.context import refresh_global_settings_context

        os.environ["PREFECT_API_URL"] = _server.url
        refresh_global_settings_context()
