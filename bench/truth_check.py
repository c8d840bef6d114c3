"""Headline figures of a built month next to the simulator's ground truth, as a Markdown table.

    .venv/bin/python bench/truth_check.py --config CONFIG.toml --month 2026-10 --sim SIM_DIR

SIM_DIR holds the month's `truth.json` (from `reliability-report simulate`); the month must have
been built with `reliability-report run` first. Used for the science issue's note and to check a
change to the attribution, ETTR or lemon rules against the truth on any simulated cluster.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import duckdb

from flows.config.file import load_config
from flows.core.months import Month
from flows.figures.month_metrics import job_runs


def attribution(truth: dict, warehouse: Path, month: Month) -> tuple[dict, int, dict]:
    """The month's attributed infrastructure failures (attempt -> cause), how many of those the
    attribution window can see carry the true cause, and those (attempt -> true cause)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        found = dict(
            con.execute(
                "select job_id_raw || '@' || strftime(end_at, '%Y-%m-%dT%H:%M:%S'), cause_category "
                "from fct_attempts where month = ? and is_infra_failure",
                [str(month)],
            ).fetchall()
        )
    expected = {
        f"{f['job_id_raw']}@{f['end']}": f["expected_cause"]
        for f in truth["infra_failures"] + truth["window_false_positives"]
        if f.get("expected_attributed", True)
    }
    return found, sum(1 for key, cause in expected.items() if found.get(key) == cause), expected


def rows(sim_dir: Path, config_path: Path, month: Month) -> list[tuple[str, str, str]]:
    truth = json.loads((sim_dir / "truth.json").read_text())
    config = load_config(config_path)
    metrics = json.loads((config.report_dir(month) / "metrics.json").read_text())
    table = []
    for definition in ("paper", "all"):
        ours, true = metrics["node_failure_rate"][definition], truth["r_f_per_1000_node_days"][definition]
        if ours["value"] is None:  # no node-days under the definition (no job that large on a small cluster)
            table.append(
                (f"r_f {definition} (per 1000 node-days)", "not measured", f"{true['node_days']:,.0f} node-days")
            )
            continue
        table.append(
            (
                f"r_f {definition} (per 1000 node-days)",
                f"{ours['value']:.2f} [{ours['lower']:.2f}, {ours['upper']:.2f}] ({ours['failures']} / "
                f"{ours['node_days']:,.0f} node-days)",
                f"{true['value']:.2f} realised ({true['failures']} / {true['node_days']:,.0f}); "
                f"{truth['parameters']['r_f']} injected",
            )
        )
    with duckdb.connect(str(config.warehouse_path), read_only=True) as con:
        runs = {r["first_job_id_raw"]: r for r in job_runs(con, month)}
    found, right, expected = attribution(truth, config.warehouse_path, month)
    table.append(
        (
            "infrastructure failures attributed, with the true cause",
            f"{len(found)} attributed; {right} with the true cause",
            f"{len(expected)} the window can see ({len(truth['infra_failures'])} injected)",
        )
    )
    inside, checked, examples = 0, 0, []
    for bucket in metrics["mttf_by_size"]:
        true = truth["size_buckets"].get(bucket["size_bucket"])
        if not true or not true["infra_failures"] or not bucket["infra_failures"]:
            continue
        true_mttf = true["runtime_hours"] / true["infra_failures"]
        checked += 1
        inside += bucket["mttf_lower_hours"] <= true_mttf <= bucket["mttf_upper_hours"]
        examples.append(
            f"{bucket['size_bucket']} GPUs {bucket['mttf_hours']:.1f} h "
            f"[{bucket['mttf_lower_hours']:.1f}, {bucket['mttf_upper_hours']:.1f}] vs {true_mttf:.1f}"
        )
    table.append(("MTTF by size: truth inside the 95% interval", f"{inside} of {checked} buckets", "; ".join(examples)))
    errors, realised = [], []
    for run in truth["training_runs"]:
        mine = runs.get(run["first_job_id_raw"])
        if mine is None or run["ettr"] is None:
            continue  # shorter than ettr_min_run_hours in the month
        errors.append(abs(mine["ettr"] - run["ettr"]))
        realised.append(abs(mine["ettr"] - run["realised_ettr"]))
    table.append(
        (
            f"ETTR of job runs >= {config.analysis.ettr_min_run_hours:g} h",
            f"{len(errors)} runs compared; max |error| {max(errors, default=0):.4f} against the estimator's truth",
            f"max |error| {max(realised, default=0):.4f} against the simulator's realised productive time / wall time",
        )
    )
    lemons = metrics["lemon_nodes"]
    flagged = {c["node"] for c in lemons["candidates"]}
    injected = set(truth["lemon_nodes"])
    healthy = lemons["fleet_nodes"] - len(injected)
    table.append(
        (
            "lemon candidates",
            f"{len(flagged & injected)} of {len(injected)} lemons; {len(flagged - injected)} of {healthy} healthy "
            f"nodes ({len(flagged - injected) / healthy:.2%})",
            f"{len(injected)} injected at {truth['parameters']['lemon_factor']:g}x",
        )
    )
    goodput = metrics["lost_goodput"]
    restarts = sum(1 for p in truth["preemptions"] if p["by_restart_after_failure"])
    table.append(
        (
            "lost goodput (estimate)",
            f"{goodput['lost_gpu_hours']:,.0f} GPU-h ({goodput['share_of_gpu_hours']:.2%}); "
            f"{goodput['second_order_preemptions']} second-order preemptions",
            f"{restarts} preemptions made for restarts after failures",
        )
    )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--month", required=True, type=Month.parse)
    parser.add_argument("--sim", required=True, type=Path, help="the simulated month's directory (truth.json)")
    args = parser.parse_args()
    print("| figure | ours | truth |\n| --- | --- | --- |")
    for figure, ours, truth in rows(args.sim, args.config, args.month):
        print(f"| {figure} | {ours} | {truth} |")


if __name__ == "__main__":
    main()
