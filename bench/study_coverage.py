"""How often a year's r_f interval contains the simulated cluster's rate, and how often two clusters
with the paper's two rates (6.5 and 2.34 per 1000 node-days) are told apart, over many seeds.

The pipeline counts exactly the simulator's rule failures and node-days (tests/test_history.py,
tests/test_study_marts.py), so the year's r_f is computed here from the simulator's truth alone:
seconds per cluster-year instead of minutes through the pipeline. Two truths are checked: the
rate the fleet actually failed at that year (its faults over its node-days) and the rate the faults
were drawn at (r_f times the fleet's mean node factor).

    .venv/bin/python bench/study_coverage.py --seeds 20 --nodes 64
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from flows.core.months import Month
from flows.figures.rates import failure_rate, rate_ratio
from simulator import SimParams, simulate

FIRST, LAST = Month.parse("2025-11"), Month.parse("2026-10")


def year(cluster: str, r_f: float, nodes: int, seed: int, out: Path) -> dict:
    truth = simulate(SimParams(cluster, FIRST, last_month=LAST, nodes=nodes, seed=seed, r_f=r_f), out / cluster)
    months = truth["months"].values()
    fleet_days = sum(m["fleet"]["node_days"] for m in months)
    return {
        "rate": failure_rate(
            sum(m["r_f_per_1000_node_days"]["all"]["rule_failures"] for m in months),
            sum(m["r_f_per_1000_node_days"]["all"]["node_days"] for m in months),
        ),
        "fleet_rate": sum(m["fleet"]["node_failures"] for m in months) * 1000 / fleet_days,
        "drawn_rate": sum(m["fleet"]["expected_node_failures"] for m in months) * 1000 / fleet_days,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--first-seed", type=int, default=100)
    args = parser.parse_args()
    covered = {"fleet": 0, "drawn": 0}
    ratio_covered = differ = 0
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        with tempfile.TemporaryDirectory() as tmp:
            a = year("rsc1", 6.5, args.nodes, seed, Path(tmp))
            b = year("rsc2", 2.34, args.nodes, seed + 1000, Path(tmp))
        for y in (a, b):
            r = y["rate"]
            covered["fleet"] += r["lower"] <= y["fleet_rate"] <= r["upper"]
            covered["drawn"] += r["lower"] <= y["drawn_rate"] <= r["upper"]
        ratio = rate_ratio(a["rate"]["failures"], a["rate"]["node_days"], b["rate"]["failures"], b["rate"]["node_days"])
        ratio_covered += ratio["lower"] <= a["drawn_rate"] / b["drawn_rate"] <= ratio["upper"]
        differ += ratio["p_value"] < 0.05
        print(
            f"seed {seed}: rsc1 {a['rate']['value']:.2f} [{a['rate']['lower']:.2f}, {a['rate']['upper']:.2f}] "
            f"fleet {a['fleet_rate']:.2f} drawn {a['drawn_rate']:.2f} ({a['rate']['failures']} failures); "
            f"rsc2 {b['rate']['value']:.2f} [{b['rate']['lower']:.2f}, {b['rate']['upper']:.2f}] "
            f"fleet {b['fleet_rate']:.2f} drawn {b['drawn_rate']:.2f} ({b['rate']['failures']}); "
            f"ratio {ratio['ratio']:.2f} [{ratio['lower']:.2f}, {ratio['upper']:.2f}] p {ratio['p_value']:.1e}",
            flush=True,
        )
    n = 2 * args.seeds
    print(
        f"\n{args.seeds} seeds, {args.nodes} nodes a cluster, 12 months: the r_f interval contains the fleet's "
        f"rate {covered['fleet']}/{n}, the drawn rate {covered['drawn']}/{n}; the ratio's interval contains the "
        f"drawn ratio {ratio_covered}/{args.seeds}; the clusters differ (p < 0.05) {differ}/{args.seeds}"
    )


if __name__ == "__main__":
    main()
