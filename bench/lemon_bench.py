"""Lemon-node candidates against the simulator's truth: precision and recall per setting, pooled
over seeds, for single months (28-day window, p 0.001) and over the trailing window of every month
(92 days, or the months built if fewer) at each p of --trailing-p, next to the best recall any
per-node test could have at precision 0.9; then, with --repeat-offender N, N replayed histories of
a node that fails three times in each of four months among a bursty fleet
(tests/lemon_history.py repeat_offender_trace): the months in which each window lists it.

    PYTHONPATH=. .venv/bin/python bench/lemon_bench.py --seeds 20 --work /tmp/lemon-bench [--repeat-offender 4]
        [--settings K] [--nodes N]

Each seed is a continuous 3-month history (tests/lemon_history.py says how it is built and how
precision and recall are counted). Prints Markdown tables; bench/README.md keeps the last ones.
`--settings K` scores the first K settings only, `--nodes N` gives every history N nodes (default:
each setting's, 300). Toy size (tests/test_benches.py): --seeds 1 --settings 1 --nodes 10
--repeat-offender 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lemon_history import (  # noqa: E402
    REPEAT_NODE,
    Score,
    Setting,
    best_possible_recall,
    build_history,
    repeat_offender_trace,
)

from flows.core.months import Month  # noqa: E402

SETTINGS = (
    Setting(6.5, 0.005),
    Setting(6.5, 0.01),
    Setting(6.5, 0.02),
    Setting(2.34, 0.01),
    Setting(2.34, 0.01, lemon_factor=70.0),  # a lemon's own rate as at 6.5 x 25: 0.16 faults a day
)
TRAILING_P = (1e-4, 1e-3, 4e-3)  # lemon_trailing_p_value: a quarter's for precision, the month's, the default


def score_settings(settings: tuple[Setting, ...], seeds: range, work: Path, trailing_p: tuple[float, ...]) -> None:
    # the best recall of the trailing windows is a 92-day window's (a month's or two's is lower)
    print("| setting | window | precision | recall | best possible recall at precision 0.9 | healthy nodes listed |")
    print("| --- | --- | --- | --- | --- | --- |")
    for setting in settings:
        scores = {"28 days": Score(), **{f"trailing, p {p:g}": Score() for p in trailing_p}}
        started = time.monotonic()
        for seed in seeds:
            history = build_history(
                work / f"{setting.r_f}-{setting.lemon_fraction}-{setting.lemon_factor}-{seed}", setting, seed
            )
            for month in history.months:
                result = history.lemon_nodes(month)
                scores["28 days"].add({c["node"] for c in result["candidates"]}, history.lemons, result["fleet_nodes"])
                for p in trailing_p:  # the p acts after the build: the same marts, judged again
                    trailing = history.lemon_nodes(month, lemon_trailing_p_value=p)["trailing"]
                    found = {c["node"] for c in trailing["candidates"]}
                    scores[f"trailing, p {p:g}"].add(found, history.lemons, trailing["fleet_nodes"])
        for window, s in scores.items():
            best = best_possible_recall(setting, 28 if window == "28 days" else 92)
            print(
                f"| {setting} | {window} | {s.tp}/{s.tp + s.fp} = {s.precision:.2f} | {s.tp}/{s.lemons} = {s.recall:.2f} "
                f"| {best:.2f} | {s.fp}/{s.healthy} = {s.fp / max(s.healthy, 1):.4f} |",
                flush=True,
            )
        print(f"<!-- {setting}: {time.monotonic() - started:.0f} s -->", flush=True)


def repeat_offender(seeds: range, work: Path, trailing_p: tuple[float, ...], nodes: int) -> None:
    first = Month.parse("2026-06")
    print("\n| seed | month | 28 days | " + " | ".join(f"trailing, p {p:g}" for p in trailing_p) + " |")
    print("| --- | --- | --- |" + " --- |" * len(trailing_p))
    for seed in seeds:
        trace = repeat_offender_trace(work / f"trace-{seed}.csv", first, nodes=nodes, seed=seed)
        history = build_history(work / f"repeat-{seed}", Setting(4.0, 0.0, nodes=nodes), seed, 4, trace, first)
        for month in history.months:
            cells = [[c["node"] for c in history.lemon_nodes(month)["candidates"]]]
            for p in trailing_p:
                cells.append(
                    [c["node"] for c in history.lemon_nodes(month, lemon_trailing_p_value=p)["trailing"]["candidates"]]
                )
            shown = [", ".join(n if n != REPEAT_NODE else f"**{n}**" for n in cell) or "-" for cell in cells]
            print(f"| {seed} | {month} | " + " | ".join(shown) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--repeat-offender", type=int, default=0, help="replayed histories with a repeat offender")
    parser.add_argument("--trailing-p", type=float, nargs="+", default=TRAILING_P)
    parser.add_argument("--settings", type=int, default=len(SETTINGS), help="the first K settings")
    parser.add_argument("--nodes", type=int, default=None, help="every history's nodes (default: the setting's)")
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    trailing_p = tuple(args.trailing_p)
    settings = SETTINGS[: args.settings]
    if args.nodes:
        settings = tuple(dataclasses.replace(setting, nodes=args.nodes) for setting in settings)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.seeds:
        score_settings(settings, range(args.first_seed, args.first_seed + args.seeds), args.work, trailing_p)
    if args.repeat_offender:
        repeat_offender(range(5, 5 + args.repeat_offender), args.work, trailing_p, args.nodes or Setting.nodes)


if __name__ == "__main__":
    main()
