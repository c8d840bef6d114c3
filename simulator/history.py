"""One continuous simulated history: the cluster's pools, the workload, the schedulers, and each month's files."""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import numpy as np

from flows.core.config import AnalysisConfig
from simulator.failures import draw_faults, emit_noise, read_fault_trace
from simulator.lifecycle import SimContext
from simulator.params import Clock, MonthWindow, SimParams
from simulator.records import Job
from simulator.scheduler import GpuPartition, run_shared_pool
from simulator.truth import AttemptColumns, History, history_truth, month_truth
from simulator.workload import draw_workload
from simulator.writers.dcgm_health import write_dcgm_checks
from simulator.writers.nhc_log import write_nhc_log
from simulator.writers.sacct import write_sacct
from simulator.writers.sacctmgr_events import write_events
from simulator.writers.xid_syslog import write_xid_log

SHARED_POOL_HEADROOM = 1.5  # the shared pool's nodes over its share of the offered GPU-hours
HEALTH_LOG_LEAD = 3600  # a month's health logs start this long before it, for attempts ending at its start


def node_names(params: SimParams) -> list[str]:
    width = max(4, len(str(params.nodes)))
    return [f"{params.node_prefix}{i:0{width}d}" for i in range(1, params.nodes + 1)]


def split_pools(
    params: SimParams, rng: np.random.Generator, jobs: list[Job], horizon: int
) -> tuple[np.ndarray, np.ndarray]:
    """The `shared` pool's nodes (sub-node jobs), sized from the GPU-hours those jobs submit with
    headroom, and the `gpu` pool's (whole-node jobs); a one-node cluster has only the shared pool."""
    p = params
    if p.nodes < 2:
        return np.arange(p.nodes), np.arange(0)
    gpn = p.gpus_per_node
    small = sum(job.work * job.gpus for job in jobs if job.gpus < gpn) / horizon  # GPUs busy on average
    n_small = min(p.nodes - 1, max(1, math.ceil(small * SHARED_POOL_HEADROOM / gpn)))
    order = rng.permutation(p.nodes)
    return np.sort(order[:n_small]), np.sort(order[n_small:])


@contextmanager
def without_gc() -> Iterator[None]:
    """The cyclic garbage collector off while the simulator builds its millions of records (none of
    them in a reference cycle, so reference counting frees them): at 1.5M attempts the collector's
    passes over the growing heap cost about a quarter of the time. It is on again afterwards if it
    was on before, and collects the few cycles left meanwhile (json's encoders make some)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_history(params: SimParams) -> History:
    """Simulate the cluster from the warm-up to the last month's dump time."""
    with without_gc():
        return _run_history(params)


def _run_history(params: SimParams) -> History:
    params.validate()
    months = params.months
    clock = Clock(months[0].start - timedelta(days=params.warmup_days))
    windows = [MonthWindow.of(m, clock, params.dump_delay_hours) for m in months]
    horizon = windows[-1].as_of
    rng = np.random.default_rng(params.seed)
    names = node_names(params)
    if params.fault_trace is not None:
        faults = read_fault_trace(Path(params.fault_trace), names, clock)
    else:
        faults = draw_faults(params, rng, horizon)
    gpn = params.gpus_per_node
    workload = draw_workload(params, rng, horizon, params.nodes * gpn, params.nodes * gpn)
    shared, gpu = split_pools(params, rng, workload.jobs, horizon)
    ctx = SimContext(params, AnalysisConfig(), rng, faults, horizon, workload.next_raw_id, workload.runs)
    for job in workload.jobs:
        job.seq = ctx.next_seq()
    run_shared_pool(ctx, [j for j in workload.jobs if j.gpus < gpn], shared)
    partition = GpuPartition(ctx, gpu)
    partition.run([j for j in workload.jobs if j.gpus >= gpn])
    emit_noise(ctx.signals, rng, params, faults, ctx.consumed, horizon)
    return History(ctx, clock, windows, names, len(gpu), partition.idle_fit)


def write_month(history: History, w: MonthWindow, columns: AttemptColumns, out_dir: Path) -> dict:
    """Write the month's logs as the site has them at its dump time, and its truth.json; return the truth."""
    ctx, clock, names = history.ctx, history.clock, history.node_names
    out_dir.mkdir(parents=True, exist_ok=True)
    shown = [ctx.attempts[i] for i in np.flatnonzero(columns.in_dump(w)).tolist()]
    write_sacct(out_dir / "sacct.psv", shown, ctx.params, names, clock, w.as_of)
    lo = w.start - HEALTH_LOG_LEAD
    write_events(out_dir / "events.psv", ctx.signals.events, ctx.params, names, clock, lo, w.as_of)
    write_xid_log(out_dir / "xid.log", ctx.signals.xids, names, clock, lo, w.as_of)
    write_nhc_log(out_dir / "nhc.log", ctx.signals.nhc, names, clock, lo, w.as_of)
    write_dcgm_checks(out_dir, ctx.signals.dcgm, names, clock, lo, w.as_of)
    truth = month_truth(history, w, columns)
    _write_json(out_dir / "truth.json", truth)
    return truth


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, default=str) + "\n")


def simulate(params: SimParams, out_dir: Path) -> dict:
    """Simulate `params.month` .. `params.last_month` as one history and write each month's logs.

    One month: its files and truth.json directly in `out_dir`; returns its truth. Several: one
    directory `out_dir/YYYY-MM` per month, plus `out_dir/truth.json` for the whole history (which
    it returns, with every month's truth under "months").
    """
    with without_gc():  # the history is gone when the collector is back on: it has only the truth to look at
        return _simulate(params, Path(out_dir))


def _simulate(params: SimParams, out_dir: Path) -> dict:
    history = run_history(params)
    columns = AttemptColumns(history.ctx.attempts)
    if len(history.windows) == 1:
        return write_month(history, history.windows[0], columns, out_dir)
    per_month = {str(w.month): write_month(history, w, columns, out_dir / str(w.month)) for w in history.windows}
    whole = history_truth(history, per_month, columns)
    _write_json(out_dir / "truth.json", whole)
    return whole
