"""Check that the simulator writes the same bytes as before a change: simulate a set of histories and
record (or compare against a record) the sha256 of every file written.

    # record with the code before the change (its checkout first on the path), then compare:
    PYTHONPATH=/path/to/old/checkout .venv/bin/python bench/simulate_same_outputs.py --record before.json
    .venv/bin/python bench/simulate_same_outputs.py --compare before.json [--big]

The configurations cover small and medium clusters, single months and continuous histories of 2-4
months, several seeds, both Slurm versions, lemons, a replayed fault trace, the manual requeues'
marks and drains, one-node and four-node clusters, a real site's shapes (a mixed CPU/GPU cluster with
only job records, a dump ending mid-month, a handful of GPU jobs) and (--big) the bench's
1.5M-attempt month. Each configuration's CPU time is printed beside its name. A truth.json is
compared without the keys issue 42 added (ADDED_TRUTH_KEYS), so a record taken before them compares.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from flows.core.months import Month
from simulator import SimParams, simulate

# tests/test_simulate.py's trace, then faults across a month end, a zero-length one and one after the month
TRACE = (
    (Path(__file__).resolve().parents[1] / "tests" / "data" / "fault_trace.csv").read_text()
    + """gpu0003,2026-09-29T23:00:00Z,2026-10-01T11:00:00Z,gpu_unavailable
gpu0007,2026-10-01T00:00:00Z,2026-10-01T00:00:00Z,filesystem_mount
gpu0012,2026-09-20T04:00:00Z,2026-09-20T09:00:00Z,gpu_driver_firmware
gpu0012,2026-11-01T02:00:00Z,2026-11-01T09:00:00Z,gpu_memory
"""
)


def _trace(nodes: int) -> Path:
    """The test's trace plus faults on more nodes of a larger cluster (every 7th node, monthly); at a
    fixed path, which truth.json names."""
    rows = TRACE.splitlines()
    width = max(4, len(str(nodes)))
    for n in range(5, nodes, 7):
        day = 1 + n % 27
        rows.append(f"gpu{n:0{width}d},2026-09-{day:02d}T0{n % 10}:00:00Z,2026-09-{day:02d}T2{n % 4}:00:00Z,pcie")
        rows.append(
            f"gpu{n:0{width}d},2026-10-{day:02d}T1{n % 10}:00:00Z,2026-10-{day + 1:02d}T0{n % 10}:00:00Z,gpu_memory"
        )
    path = Path(tempfile.gettempdir()) / "simulate-same-outputs" / f"trace-{nodes}.csv"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(rows) + "\n")
    return path


M = Month.parse


def configurations(big: bool) -> dict[str, SimParams]:
    c = {
        "n1-s1": SimParams("one", M("2026-10"), nodes=1, seed=1),
        "n4-s3": SimParams("c", M("2026-10"), nodes=4, seed=3),
        "n12-s5-2m": SimParams("d", M("2026-09"), nodes=12, seed=5, last_month=M("2026-10")),
        "n16-s1": SimParams("dep", M("2026-10"), nodes=16, seed=1),
        "n16-s7-r30": SimParams("hist", M("2026-08"), nodes=16, seed=7, r_f=30.0),
        "n40-s3-trace": SimParams("t", M("2026-10"), nodes=40, seed=3, fault_trace=_trace(40)),
        "n48-s11-requeues": SimParams(
            "p", M("2026-10"), nodes=48, seed=11, r_f=20.0, marked_requeue_share=0.5, requeue_drain_share=0.02
        ),
        "n48-s7-lemons": SimParams("r", M("2026-10"), nodes=48, seed=7, r_f=25.0, lemon_fraction=0.1),
        "n64-s2-2411": SimParams("n", M("2026-10"), nodes=64, seed=2, r_f=40.0, slurm_version="24.11"),
        "n64-s23-3m-lemons-2411": SimParams(
            "b",
            M("2026-03"),
            nodes=64,
            seed=23,
            r_f=25.0,
            last_month=M("2026-05"),
            lemon_fraction=0.05,
            slurm_version="24.11",
        ),
        "n32-s8-gpn4-arrays": SimParams(
            "g", M("2026-09"), nodes=32, seed=8, gpus_per_node=4, array_share=0.3, last_month=M("2026-10")
        ),
        "n96-s6-arrays-requeues-2411": SimParams(
            "a",
            M("2026-10"),
            nodes=96,
            seed=6,
            r_f=15.0,
            array_share=0.2,
            marked_requeue_share=0.5,
            requeue_drain_share=0.05,
            slurm_version="24.11",
        ),
        "n160-s21-outside": SimParams("s", M("2026-10"), nodes=160, seed=21, r_f=15.0, outside_window_share=0.3),
        "n256-s2025-3m": SimParams("q", M("2026-08"), nodes=256, seed=2025, last_month=M("2026-10")),
        "n300-s41-4m": SimParams("hist", M("2026-05"), nodes=300, seed=41, r_f=15.0, last_month=M("2026-08")),
        "n300-s9-2m-trace-2411": SimParams(
            "t",
            M("2026-09"),
            nodes=300,
            seed=9,
            last_month=M("2026-10"),
            fault_trace=_trace(300),
            slurm_version="24.11",
        ),
        "n1000-s4-lemons-ds05": SimParams(
            "m", M("2026-10"), nodes=1000, seed=4, lemon_fraction=0.02, duration_scale=0.5, utilization=0.9
        ),
        # a real site's shapes (issue 42)
        "n16-s3-3m-mixed-jobs-only": SimParams(
            "mixed", M("2026-08"), nodes=16, seed=3, last_month=M("2026-10"), cpu_nodes=6, sources="jobs_only"
        ),
        "n16-s7-2m-dump-ends-mixed": SimParams(
            "e", M("2026-09"), nodes=16, seed=7, last_month=M("2026-10"), dump_ends=15, cpu_nodes=2
        ),
        "n2-s1-handful": SimParams("h", M("2026-10"), nodes=2, seed=1, utilization=0.001, cpu_nodes=2),
    }
    if big:  # bench/month_bench.py's simulated(1_500_000, ...)
        c["n7500-s1-bench"] = SimParams(
            "bench", M("2026-10"), nodes=7500, seed=1, duration_scale=0.25, watch_xids_per_node=0.175 * 1_500_000 / 7500
        )
    return c


# Keys issue 42 added to truth.json (the parameters of a real site's shapes, the months' measurability):
# a truth.json is the same as before if it differs only by these, so a record taken before them compares.
ADDED_TRUTH_KEYS = frozenset(
    {"cpu_nodes", "cpu_node_prefix", "cpus_per_node", "cpu_utilization", "cpu_r_f", "sources", "dump_ends"}
    | {"not_measurable", "gpu_attempts", "cpu_only_attempts", "cpu_node_failures", "records_span"}
)


def _without_added(data: object) -> object:
    """`data` without ADDED_TRUTH_KEYS at any depth."""
    if isinstance(data, dict):
        return {k: _without_added(v) for k, v in data.items() if k not in ADDED_TRUTH_KEYS}
    if isinstance(data, list):
        return [_without_added(v) for v in data]
    return data


def _bytes(path: Path) -> bytes:
    """A file's bytes; a truth.json's as written without the keys added since (simulator/dumps.py's format)."""
    if path.name != "truth.json":
        return path.read_bytes()
    return (json.dumps(_without_added(json.loads(path.read_text())), indent=1, default=str) + "\n").encode()


def digest(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(_bytes(p)).hexdigest() for p in sorted(out.rglob("*")) if p.is_file()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", type=Path, help="write the hashes here")
    parser.add_argument("--compare", type=Path, help="compare with the hashes recorded here")
    parser.add_argument("--big", action="store_true", help="add the bench's 1.5M-attempt month (minutes)")
    parser.add_argument("--only", nargs="*", help="configuration names")
    parser.add_argument("--merge", action="store_true", help="with --record: add to the file's configurations")
    args = parser.parse_args()
    import simulator

    print(f"simulator from {Path(simulator.__file__).parent}", flush=True)
    root = Path(tempfile.mkdtemp(prefix="samecheck-"))
    expected = json.loads(args.compare.read_text()) if args.compare else {}
    recorded, bad = {}, []
    for name, params in configurations(args.big).items():
        if args.only and name not in args.only:
            continue
        out = root / name
        cpu, wall = time.process_time(), time.perf_counter()
        simulate(params, out)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        recorded[name] = digest(out)
        shutil.rmtree(out)
        verdict = ""
        if name in expected:
            old, new = expected[name], recorded[name]
            differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
            verdict = f"SAME ({len(new)} files)" if not differ else f"DIFFERENT: {len(differ)} files, e.g. {differ[:5]}"
            if differ:
                bad.append(name)
        print(f"{name:28s} cpu {cpu:7.2f} s  wall {wall:7.2f} s  {len(recorded[name]):6d} files  {verdict}", flush=True)
    shutil.rmtree(root)
    if args.record:
        if args.merge and args.record.exists():
            recorded = {**json.loads(args.record.read_text()), **recorded}
        args.record.write_text(json.dumps(recorded, indent=0, sort_keys=True) + "\n")
    if args.compare:
        missing = sorted(set(recorded) - set(expected))
        print(
            f"compared {len(recorded) - len(missing)} configurations, {len(bad)} different: {bad}; not recorded: {missing}"
        )
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
