import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# Prefect: a persistent home saves ~11 s of migrations per start; no server -> ephemeral mode.
os.environ.setdefault("PREFECT_HOME", str(REPO_ROOT / ".prefect-test"))
os.environ.pop("PREFECT_API_URL", None)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    path = Path(os.environ.get("SHARED_DIR", REPO_ROOT.parent / "shared"))
    if not (path / "fixtures").is_dir():
        pytest.fail(f"shared fixtures not found at {path} (set SHARED_DIR)")
    return path


@pytest.fixture(scope="session")
def slurm_fixtures(shared_dir: Path) -> Path:
    return shared_dir / "fixtures" / "slurm-22.05"
