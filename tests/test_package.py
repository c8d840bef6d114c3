"""The package as a site installs it: the wheel built from this checkout, installed with its declared
dependencies (the lock as constraints) into an empty virtual environment, runs the demo from a
directory outside the checkout, with no path into the checkout anywhere in its environment.
"""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds months or starts servers: `make test`, not `make test-fast`

REPO_ROOT = Path(__file__).resolve().parents[1]
UV = Path(sys.executable).parent / "uv"  # installed into .venv by the Makefile


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.package
def test_the_installed_wheel_runs_the_demo(tmp_path: Path):
    # uv build makes the sdist, then the wheel from it: a wheel holds only what a release would
    # (a wheel straight from the checkout could pick up a stale build/ directory).
    run([str(UV), "build", "-q", "-o", str(tmp_path / "dist"), str(REPO_ROOT)])
    (wheel,) = (tmp_path / "dist").glob("*.whl")

    venv = tmp_path / "venv"
    run([str(UV), "venv", "-q", "-p", sys.executable, str(venv)])
    python = venv / "bin" / "python"
    # the normal index with the lock as constraints: the same versions as .venv, from uv's (warm) cache
    constraints = REPO_ROOT / "requirements.lock.txt"
    run([str(UV), "pip", "install", "-q", "-p", str(python), "-c", str(constraints), str(wheel)])

    site = tmp_path / "site"  # an empty directory outside the checkout, the commands' working directory
    site.mkdir()
    env = {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PREFECT_API_URL", "VIRTUAL_ENV")
    }
    env |= {
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    command = str(venv / "bin" / "reliability-report")

    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert run([command, "--version"], cwd=site, env=env).stdout.strip() == f"reliability-report {version}"

    located = run(
        [str(python), "-c", "import flows; print(flows.__file__); print(flows.DBT_PROJECT_DIR)"], cwd=site, env=env
    )
    module, dbt_project = (Path(line) for line in located.stdout.split())
    assert module.is_relative_to(venv) and dbt_project.is_relative_to(venv), located.stdout

    # a small cluster over three months: the test is about the package, the demo's figures are tested
    # elsewhere (its default year: tests/test_cli.py)
    demo = run(
        [command, "demo", "--workdir", "work", "--reports", "reports", "--nodes", "48", "--months", "3"],
        cwd=site, env=env, timeout=900,
    )  # fmt: skip
    # the console shows progress and the outcome: no library's leak warnings or tracebacks
    assert "leaked" not in demo.stderr and "Traceback" not in demo.stderr, demo.stderr
    months = sorted((site / "reports" / "demo").iterdir())
    assert months, demo.stdout
    for month in months:
        assert (month / "report.html").stat().st_size > 0 and (month / "metrics.json").stat().st_size > 0, month
    # dbt's target/ and logs/ went beside the warehouse, never into the installed package
    assert not (dbt_project / "target").exists() and not (dbt_project / "logs").exists()
    assert sorted(p.name for p in dbt_project.iterdir()) == sorted(
        p.name for p in (REPO_ROOT / "dbt_project").iterdir() if p.name not in ("target", "logs", ".user.yml")
    )
