"""A run's start-up pays only for what the run uses (issue 52): importing the pipeline imports no
stage's library and prints no third-party warning; Great Expectations is imported without pyspark,
which stays importable for the Spark engine; the Prefect API a profile names is reused."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

import flows.core.prefect_api as prefect_api

# What each stage imports when it starts: dbt (the build), GX with pandas (quality), scipy
# (metrics), matplotlib (render); pyspark only on the Spark engine
STAGE_LIBRARIES = ("dbt", "great_expectations", "pandas", "scipy", "matplotlib", "pyspark")


def python(code: str, *options: str) -> subprocess.CompletedProcess:
    """`code` run by a fresh interpreter (no module imported before it), its output captured."""
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    return subprocess.run([sys.executable, *options, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_importing_the_pipeline_imports_no_stage_library_and_warns_nothing():
    code = (
        "import sys, flows.pipeline, flows.run_plan\n"  # the stages, and the one flow the commands import
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({STAGE_LIBRARIES!r})))\n"
    )
    done = python(code, "-W", "error")  # any warning is an error: a third-party one too
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.strip() == "[]", f"flows.run_plan imports {done.stdout.strip()}"


def test_great_expectations_is_imported_without_pyspark_which_stays_importable():
    code = (
        "import sys, warnings\n"
        "from flows.quality.suites import import_gx\n"
        "gx = import_gx()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark'))\n"
        "sys.stderr.flush()\n"
        "with warnings.catch_warnings():  # pyspark's own import warnings are the Spark engine's to filter\n"
        "    warnings.simplefilter('ignore')\n"
        "    import pyspark.sql\n"
        "print(pyspark.sql.SparkSession.__name__)\n"
    )
    if importlib.util.find_spec("pyspark") is None:  # the Spark extras not installed: GX's import alone
        code = code.split("sys.stderr.flush()")[0]
    done = python(code)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr  # no pyspark line, no warning
    lines = done.stdout.splitlines()
    assert lines[0] == "[]", f"GX imported pyspark: {lines[0]}"
    assert lines[1:] in ([], ["SparkSession"])


class FakeServer:
    """Stands for the temporary server (the quick tier starts none)."""

    url = "http://127.0.0.1:1/api"

    def __init__(self) -> None:
        self.waited = self.stopped = False

    def wait(self, timeout: float) -> None:
        self.waited = True

    def stop(self) -> None:
        self.stopped = True


@pytest.fixture
def no_api_in_environment(monkeypatch, tmp_path):
    """No PREFECT_API_URL in the environment (restored after), no temporary server started yet, and
    the Prefect profiles of tmp_path/profiles.toml. The tests start a FakeServer (patched in the test:
    the quick tier refuses the real one during a test's call)."""
    from prefect.context import refresh_global_settings_context

    monkeypatch.setenv("PREFECT_API_URL", "recorded, to be restored")
    monkeypatch.delenv("PREFECT_API_URL")
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(tmp_path / "profiles.toml"))
    monkeypatch.setattr(prefect_api, "_server", None)
    yield tmp_path / "profiles.toml"
    monkeypatch.undo()
    refresh_global_settings_context()  # Prefect's settings from the restored environment


def test_the_api_a_prefect_profile_names_is_reused_and_the_temporary_server_stopped(no_api_in_environment, monkeypatch):
    monkeypatch.setattr(prefect_api, "_TemporaryServer", FakeServer)
    no_api_in_environment.write_text(
        'active = "site"\n[profiles.site]\nPREFECT_API_URL = "http://prefect.site:4200/api"\n'
    )
    prefect_api.start_api()  # spawned before Prefect's settings are read: they are read with Prefect
    server = prefect_api._server
    prefect_api.wait_for_api()
    assert server.stopped and not server.waited
    assert prefect_api._server is None and "PREFECT_API_URL" not in os.environ


def test_without_a_configured_api_the_runs_use_the_temporary_server(no_api_in_environment, monkeypatch):
    from prefect.settings import get_current_settings

    monkeypatch.setattr(prefect_api, "_TemporaryServer", FakeServer)

    prefect_api.start_api()
    server = prefect_api._server
    prefect_api.wait_for_api()
    assert server.waited and not server.stopped
    assert os.environ["PREFECT_API_URL"] == server.url == get_current_settings().api.url
    prefect_api.wait_for_api()  # a second command of the process: the same server
    assert prefect_api._server is server
