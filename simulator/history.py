"""One continuous simulated history: the cluster's pools, the workload, the schedulers and the record they leave."""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np

from simulator.cpu_partition import CpuPartition, run_cpu_partition
from simulator.failures import draw_faults, emit_noise, read_fault_trace
from simulator.gpu_partition import GpuPartition
from simulator.lifecycle import SimContext
from simulator.params import Clock, MonthWindow, SimParams
from simulator.records import Job
from simulator.shared_partition import run_shared_pool
from simulator.workload import draw_workload

SHARED_POOL_HEADROOM = 1.5  # the shared pool's nodes over its share of the offered GPU-hours


@dataclass
class History:
    """The simulation's record and what the truth needs to read it."""

    ctx: SimContext
    clock: Clock
    windows: list[MonthWindow]
    node_names: list[str]
    gpu_pool_nodes: int
    idle_fit: list[tuple[int, int]]  # (time, idle gpu-pool nodes while a pending job would fit in them)
    # computed for the first month's truth and kept for the others (the whole history is simulated)
    attributed: bool = False  # attribute_failures has run
    run_life: dict[int, tuple[int, int, int]] | None = None  # training_truth's _run_life
    cpu: CpuPartition | None = None  # the CPU-only nodes' jobs and faults (params.cpu_nodes)

    @property
    def critical(self) -> dict[int, list[tuple[int, str]]]:
        """The critical signals the logs written show: none when the dumps hold only job records."""
        return self.ctx.signals.critical if self.ctx.params.sources == "all" else {}


def node_names(params: SimParams) -> list[str]:
    """The GPU nodes' names, then the CPU nodes' (`cpu_node_prefix`, numbered from 1)."""
    width = max(4, len(str(params.nodes)))
    names = [f"{params.node_prefix}{i:0{width}d}" for i in range(1, params.nodes + 1)]
    cpu_width = max(4, len(str(params.cpu_nodes)))
    return names + [f"{params.cpu_node_prefix}{i:0{cpu_width}d}" for i in range(1, params.cpu_nodes + 1)]


def month_windows(params: SimParams, clock: Clock) -> list[MonthWindow]:
    """Each month's window; with `dump_ends`, the last one ends, and its dump is taken, then; with
    `dump_starts`, the first one begins then."""
    windows = [MonthWindow.of(m, clock, params.dump_delay_hours) for m in params.months]
    if (starts := params.dump_start_time) is not None:
        first = windows[0]
        windows[0] = MonthWindow(first.month, clock.seconds(starts), first.end, first.as_of)
    ends = params.dump_end_time
    if ends is not None:
        last = windows[-1]
        windows[-1] = MonthWindow(last.month, last.start, clock.seconds(ends), clock.seconds(ends))
    return windows


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
    windows = month_windows(params, clock)
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
    ctx = SimContext(params, rng, faults, horizon, workload.next_raw_id, workload.runs)
    for job in workload.jobs:
        job.seq = ctx.next_seq()
    run_shared_pool(ctx, [j for j in workload.jobs if j.gpus < gpn], shared)
    partition = GpuPartition(ctx, gpu)
    partition.run([j for j in workload.jobs if j.gpus >= gpn])
    emit_noise(ctx.signals, rng, params, faults, ctx.consumed, horizon)
    cpu = run_cpu_partition(params, horizon, params.nodes) if params.cpu_nodes else None
    if cpu is not None:
        ctx.signals.events.extend(cpu.events)
    return History(ctx, clock, windows, names, len(gpu), partition.idle_fit, cpu=cpu)
