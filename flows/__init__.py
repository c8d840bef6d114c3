"""Monthly reliability reports for GPU training clusters (MTTF, failure rates, ETTR) from Slurm and node-health logs."""

import os
from pathlib import Path

# The runtime folders (dbt project, expectations, templates): in an installed wheel under
# flows/_data/ (setup.py copies them there), in a checkout (or an editable install) at its top level.
_PACKAGE_DATA = Path(__file__).resolve().parent / "_data"
RUNTIME_ROOT = _PACKAGE_DATA if _PACKAGE_DATA.is_dir() else Path(__file__).resolve().parents[1]
DBT_PROJECT_DIR = RUNTIME_ROOT / "dbt_project"
EXPECTATIONS_DIR = RUNTIME_ROOT / "expectations"
TEMPLATES_DIR = RUNTIME_ROOT / "templates"

# Defaults that keep Prefect, dbt and matplotlib quiet and robust on small, loaded machines
# (a cold ephemeral Prefect server takes ~20 s to start on two cores; Prefect's default timeout is 20 s).
for _key, _value in {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
}.items():
    os.environ.setdefault(_key, _value)
