"""Six continuous months of a simulated 16-node cluster, backfilled once per test session (by the
first xdist worker to ask; the others wait and read it): the history the publishing tests load into
Prometheus and show in the archive. They only read it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import session_directory

from flows.cli import main
from flows.core.months import Month
from flows.demo import write_demo_config
from simulator import SimParams, simulate

CLUSTER = "pub"
FIRST, LAST = Month.parse("2026-04"), Month.parse("2026-09")
MONTHS = [str(FIRST)]
while MONTHS[-1] != str(LAST):
    MONTHS.append(str(Month.parse(MONTHS[-1]).next()))


def built_history(tmp_path_factory) -> dict:
    """{"root", "config", "reports"}: the history's directory, its config and its reports directory."""
    with session_directory(tmp_path_factory, "publish-history") as root:
        done = root / "built.json"
        if not done.exists():
            simulate(
                SimParams(CLUSTER, FIRST, last_month=LAST, nodes=16, seed=5, r_f=25.0, lemon_fraction=0.1),
                root / "sim" / CLUSTER,
            )
            config = write_demo_config(root, CLUSTER, root / "reports")
            # 16 nodes run no job above the paper's 128 GPUs: lower the bar to have both rates
            config.write_text(config.read_text() + "\n[analysis]\npaper_min_gpus = 32\n")
            assert main(["backfill", "--config", str(config), "--from", str(FIRST), "--to", str(LAST)]) == 0
            done.write_text(json.dumps({"config": str(config)}))
        config = Path(json.loads(done.read_text())["config"])
    return {"root": root, "config": config, "reports": root / "reports"}


def month_metrics(reports: Path, month: str) -> dict:
    return json.loads((reports / CLUSTER / month / "metrics.json").read_text())
