"""Attribution recall of a month built from dcgm-exporter's series alone (no syslog), against the
simulator's truth, next to the same month built from the Xid syslog, on the demo cluster (256
nodes, seed 2025, the simulator's defaults), as a Markdown table.

    .venv/bin/python bench/prometheus_recall.py [--month 2026-10] [--nodes 256] [--seed 2025] [--steps 15 30 60]

Each month has the job records (sacct.psv) and one health source: the Xid syslog (xid_syslog), or
the month's series as `prometheus_dcgm` saves them (dcgm_series) at each scrape step. The series
are written straight from the simulator (a 256-node month at 15 s is 140M samples: no Prometheus
is needed to say what the step does; tests/test_prometheus_dcgm.py shows a real Prometheus's pull
of such series lands each Xid at the first scrape after its syslog line). Builds 1 + len(steps)
months with `reliability-report run` under --workdir; each row's (attributed, with the true cause,
expected) goes to <workdir>/recall.json. prometheus_recall_real.py builds a step's month through a
real Prometheus instead (promtool's blocks of the series, `prometheus_dcgm`). Toy size
(tests/test_benches.py): --nodes 4 --r-f 1000 --steps 900.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from truth_check import attribution

from flows.cli import main as cli
from flows.core.months import Month
from flows.ingest.sources.dcgm_series import header_line, series_line
from simulator import SimParams, simulate
from simulator.history import run_history
from simulator.writers.dcgm_exporter import exporter_series

LEAD = TAIL = 3600  # the pull's hour before and after the month (flows/ingest/sources/prometheus_dcgm.py)


def write_series(params: SimParams, month: Month, step: int, out: Path) -> None:
    """The month's series as prometheus_dcgm writes them: its evaluation times [start, end], runs clipped to them."""
    history = run_history(params)
    start = -(-(int(month.start.timestamp()) - LEAD) // step) * step
    end = (int(month.end.timestamp()) + TAIL) // step * step
    with open(out, "w") as saved:
        saved.write(header_line("simulated", "dcgm-exporter series", start, end, step, "Hostname"))
        for metric, (labels, runs) in exporter_series(history, history.windows[0], step):
            clipped = [(max(a, start), min(b, end), str(v)) for a, b, v in runs if a <= end and b >= start]
            if clipped:
                saved.write(series_line({"__name__": metric, **labels}, clipped))


def build(work: Path, name: str, sim: Path, source: str, month: Month) -> Path:
    """Build the month of a config of sim's job records and one health source; its warehouse."""
    root = work / name
    root.mkdir(parents=True, exist_ok=True)
    config = root / "demo.toml"
    config.write_text(
        'cluster = "demo"\nsite_timezone = "UTC"\n\n'
        f'[[sources]]\nkind = "sacct_psv"\npath = "{sim}/sacct.psv"\n\n{source}\n'
        f'[paths]\ndata = "{root}/data"\nreports = "{root}/reports"\nwarehouse = "{root}/demo.duckdb"\n'
    )
    assert cli(["run", "--month", str(month), "--config", str(config)]) == 0
    return root / "demo.duckdb"


def recalls(truth: dict, warehouses: dict[str, Path], month: Month) -> dict[str, tuple]:
    """Each warehouse's attribution of the month (truth_check.attribution): found, right, expected."""
    return {name: attribution(truth, warehouse, month) for name, warehouse in warehouses.items()}


def table(truth: dict, results: dict[str, tuple], month: Month, nodes: int, seed: int) -> str:
    """The Markdown recall table of the months' attributions, the first one's (the Xid syslog's) the reference."""
    reference = next(iter(results.values()))[0]
    lines = [
        f"{nodes} nodes, seed {seed}, {month}: {len(truth['infra_failures'])} infrastructure failures injected",
        "| health source | attributed | with the true cause (recall) | same attribution as the syslog's |",
        "| --- | --- | --- | --- |",
    ]
    for name, (found, right, expected) in results.items():
        same = sum(1 for key, cause in reference.items() if found.get(key) == cause)
        differ = len(set(found.items()) ^ set(reference.items()))
        recall = f"{right / len(expected):.1%}" if expected else "none to find"  # a small month may have none
        lines.append(
            f"| {name} | {len(found)} | {right} of {len(expected)} ({recall}) "
            f"| {same} of {len(reference)} ({differ} differ) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--month", type=Month.parse, default=Month.parse("2026-10"))
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--r-f", type=float, default=6.5, help="the simulated node failure rate (per 1000 node-days)")
    parser.add_argument("--steps", type=int, nargs="+", default=[15, 30, 60])
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="prometheus-recall-"))
    sim = work / "sim"
    params = SimParams("demo", args.month, nodes=args.nodes, seed=args.seed, r_f=args.r_f)
    truth = simulate(params, sim)
    warehouses = {
        "Xid syslog": build(
            work, "syslog", sim, f'[[sources]]\nkind = "xid_syslog"\npath = "{sim}/xid.log"\n', args.month
        )
    }
    for step in args.steps:
        write_series(params, args.month, step, sim / f"dcgm_series_{step}.jsonl")
        source = f'[[sources]]\nkind = "dcgm_series"\npath = "{sim}/dcgm_series_{step}.jsonl"\n'
        warehouses[f"dcgm-exporter series, step {step} s"] = build(work, f"step{step}", sim, source, args.month)
    results = recalls(truth, warehouses, args.month)
    print(table(truth, results, args.month, args.nodes, args.seed))
    (work / "recall.json").write_text(json.dumps({n: [len(f), r, len(e)] for n, (f, r, e) in results.items()}))


if __name__ == "__main__":
    main()
