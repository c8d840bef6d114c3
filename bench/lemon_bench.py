"""Lemon-node candidates against the simulator's truth: precision and recall per setting, pooled
over seeds, for single months (28-day window, p 0.001) and over 3 months (92-day window, p 1e-4,
the last month), next to the best recall any per-node test could have at precision 0.9.

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

from lemon_history import Score, Setting, best_possible_recall, history_candidates  # noqa: E402

SETTINGS = (
    Setting(6.5, 0.005),
    Setting(6.5, 0.01),
    Setting(6.5, 0.02),
    Setting(2.34, 0.01),
    Setting(2.34, 0.01, lemon_factor=70.0),  # a lemon's own rate as at 6.5 x 25: 0.16 faults a day
)
WINDOWS = ((28, 0.001), (92, 1e-4))  # (lemon_window_days, lemon_p_value): a month's default, a quarter's


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    print("| setting | window | precision | recall | best possible recall at precision 0.9 | healthy nodes flagged |")
    print("| --- | --- | --- | --- | --- | --- |")
    for setting in SETTINGS:
        scores = {window: Score() for window, _ in WINDOWS}
        started = time.monotonic()
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            work = args.work / f"{setting.r_f}-{setting.lemon_fraction}-{setting.lemon_factor}-{seed}"
            lemons, results = history_candidates(work, setting, seed, WINDOWS)
            for result in results[:-1]:
                scores[28].add({c["node"] for c in result["candidates"]}, lemons, result["fleet_nodes"])
            scores[92].add({c["node"] for c in results[-1]["candidates"]}, lemons, results[-1]["fleet_nodes"])
        for window, score in scores.items():
            s = score
            print(
                f"| {setting} | {window} days | {s.tp}/{s.tp + s.fp} = {s.precision:.2f} | "
                f"{s.tp}/{s.lemons} = {s.recall:.2f} | {best_possible_recall(setting, window):.2f} | {s.fp}/{s.healthy} = {s.fp / max(s.healthy, 1):.4f} |",
                flush=True,
            )
        print(f"<!-- {setting}: {time.monotonic() - started:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
