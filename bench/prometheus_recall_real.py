"""prometheus_recall.py's month through a real Prometheus: the demo cluster's month (256 nodes, seed
2025, 2026-10) built from its job records and a `prometheus_dcgm` source pulling a Debian Prometheus
on 127.0.0.1, next to the same month from the Xid syslog and from the series written straight from
the simulator (`dcgm_series`, at the same step), as prometheus_recall.py's table.

    .venv/bin/python bench/prometheus_recall_real.py [--step 300] [--nodes 256] [--workdir DIR]

The simulator's writer (simulator/writers/dcgm_exporter.py) writes the month's dcgm-exporter
series as OpenMetrics, a sample every `step` seconds (the scrape interval, and the pull's
step_seconds); `promtool tsdb create-blocks-from openmetrics` makes blocks of them (the file is then
deleted); Prometheus serves the blocks on a free port of 127.0.0.1 until the end, even on failure.
Prints the series and sample counts and the time each stage took, then the table; each row's
(attributed, with the true cause, expected) goes to <workdir>/recall.json. Toy size
(tests/test_benches.py): --nodes 4 --r-f 1000 --step 900.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from prometheus_recall import build, recalls, table, write_series

from flows.core.months import Month
from flows.ingest.sources.prometheus_dcgm import pull_series
from flows.ingest.sources.servers import PrometheusDcgmSource
from simulator import SimParams, simulate
from simulator.history import run_history
from simulator.writers.dcgm_exporter import exporter_series, write_openmetrics


@contextlib.contextmanager
def timed(what: str) -> Iterator[None]:
    began = time.monotonic()
    yield
    print(f"{what}: {time.monotonic() - began:.1f} s", flush=True)


def make_blocks(params: SimParams, step: int, work: Path) -> Path:
    """The month's series as OpenMetrics, then as promtool's blocks in work/data (the file deleted)."""
    history = run_history(params)
    series = exporter_series(history, history.windows[0], step)
    samples = sum((last - first) // step + 1 for _, (_, runs) in series for first, last, _ in runs)
    print(f"{len(series)} series, {samples} samples at a {step} s step", flush=True)
    om, data = work / "dcgm.om", work / "data"
    with timed("OpenMetrics written"):
        write_openmetrics(om, series, step)
    print(f"OpenMetrics: {om.stat().st_size / 1e9:.2f} GB", flush=True)
    promtool = ["promtool", "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=768h"]
    with timed("promtool create-blocks-from openmetrics"):
        subprocess.run(["nice", "-n", "10", *promtool, str(om), str(data)], check=True, capture_output=True)
    om.unlink()
    return data


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the servers the tests start
    from local_servers import prometheus_serving

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--month", type=Month.parse, default=Month.parse("2026-10"))
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--r-f", type=float, default=6.5, help="the simulated node failure rate (per 1000 node-days)")
    parser.add_argument("--step", type=int, default=300, help="the scrape interval and the pull's step_seconds")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="prometheus-recall-real-"))
    sim, step = work / "sim", args.step
    params = SimParams("demo", args.month, nodes=args.nodes, seed=args.seed, r_f=args.r_f)
    truth = simulate(params, sim)
    syslog = f'[[sources]]\nkind = "xid_syslog"\npath = "{sim}/xid.log"\n'
    warehouses = {"Xid syslog": build(work, "syslog", sim, syslog, args.month)}
    write_series(params, args.month, step, sim / f"dcgm_series_{step}.jsonl")
    direct = f'[[sources]]\nkind = "dcgm_series"\npath = "{sim}/dcgm_series_{step}.jsonl"\n'
    warehouses[f"dcgm-exporter series, step {step} s (written by the simulator)"] = build(
        work, f"step{step}", sim, direct, args.month
    )
    with prometheus_serving(make_blocks(params, step, work), work, ("nice", "-n", "10")) as url:
        server = PrometheusDcgmSource(kind="prometheus_dcgm", url=url, step_seconds=step, attempts=1)
        with timed("pull_series (the month's query_range chunks)"):
            pulled = pull_series(server, args.month, work / "pulled_dcgm_series.jsonl")
        print(f"pulled: {sum(1 for _ in open(pulled)) - 1} series", flush=True)
        source = f'[[sources]]\nkind = "prometheus_dcgm"\nurl = "{url}"\nstep_seconds = {step}\nattempts = 1\n'
        with timed("reliability-report run (pull, land, build, report)"):
            warehouses[f"prometheus_dcgm from a real Prometheus, step {step} s"] = build(
                work, f"prometheus{step}", sim, source, args.month
            )
    results = recalls(truth, warehouses, args.month)
    print(table(truth, results, args.month, args.nodes, args.seed))
    (work / "recall.json").write_text(json.dumps({n: [len(f), r, len(e)] for n, (f, r, e) in results.items()}))


if __name__ == "__main__":
    main()
