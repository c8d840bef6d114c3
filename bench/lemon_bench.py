"""Lemon-node candidates against the simulator's truth: precision and recall per setting, pooled
over seeds, for single months (28-day window, p 0.001) and over 3 months (the last month's trailing
92-day window, at each p of TRAILING_P: the default 0.004 and a quarter's 1e-4), next to the best
recall any per-node test could have at precision 0.9.

    PYTHONPATH=. .venv/bin/python bench/lemon_bench.py --seeds 20 --work /tmp/lemon-bench

Each seed is a continuous 3-month history (tests/lemon_history.py says how it is built and how
precision and recall are counted). Prints a Markdown table; bench/README.md keeps the last one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lemon_history import Score, Setting, best_possible_recall, build_history  # noqa: E402

SETTINGS = (
    Setting(6.5, 0.005),
    Setting(6.5, 0.01),
    Setting(6.5, 0.02),
    Setting(2.34, 0.01),
    Setting(2.34, 0.01, lemon_factor=70.0),  # a lemon's own rate as at 6.5 x 25: 0.16 faults a day
)
TRAILING_P = (0.004, 1e-4)  # lemon_trailing_p_value: the default, and a quarter's for precision


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    print("| setting | window | precision | recall | best possible recall at precision 0.9 | healthy nodes flagged |")
    print("| --- | --- | --- | --- | --- | --- |")
    for setting in SETTINGS:
        scores = {"28 days": Score(), **{f"92 days, p {p:g}": Score() for p in TRAILING_P}}
        started = time.monotonic()
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            work = args.work / f"{setting.r_f}-{setting.lemon_fraction}-{setting.lemon_factor}-{seed}"
            history = build_history(work, setting, seed)
            for month in history.months:
                result = history.lemon_nodes(month)
                scores["28 days"].add({c["node"] for c in result["candidates"]}, history.lemons, result["fleet_nodes"])
            for p in TRAILING_P:
                trailing = history.lemon_nodes(history.months[-1], lemon_trailing_p_value=p)["trailing"]
                found = {c["node"] for c in trailing["candidates"]}
                scores[f"92 days, p {p:g}"].add(found, history.lemons, trailing["fleet_nodes"])
        for window, s in scores.items():
            print(
                f"| {setting} | {window} | {s.tp}/{s.tp + s.fp} = {s.precision:.2f} | "
                f"{s.tp}/{s.lemons} = {s.recall:.2f} | {best_possible_recall(setting, int(window[:2])):.2f} | {s.fp}/{s.healthy} = {s.fp / max(s.healthy, 1):.4f} |",
                flush=True,
            )
        print(f"<!-- {setting}: {time.monotonic() - started:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
