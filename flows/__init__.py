"""Monthly reliability reports for GPU training clusters (MTTF, failure rates, ETTR) from Slurm and node-health logs."""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DBT_PROJECT_DIR = REPO_ROOT / "dbt_project"
EXPECTATIONS_DIR = REPO_ROOT / "expectations"
TEMPLATES_DIR = REPO_ROOT / "templates"

# Defaults that keep Prefect, dbt and matplotlib quiet and robust on small, loaded machines
# (../shared/docs/stack.md: a cold ephemeral Prefect server takes ~20 s, the default timeout is 20 s).
for _key, _value in {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
}.items():
    os.environ.setdefault(_key, _value)
