"""The `cpu` partition of a mixed cluster: CPU-only nodes running CPU-only jobs (no GPU in their
TRES), usually many more jobs than the GPU partitions run, with node faults of their own.

Everything here draws from a random stream of its own, so the GPU nodes' history (faults, jobs,
schedule) is the one the same seed gives without CPU nodes, and the truth's GPU figures with them.
Jobs take cores on one node, first come first served on the cores free earliest among a few
sampled nodes; a node fault ends every job on the node NODE_FAIL and takes the node out until its
repair (sacctmgr shows it DOWN* "Not responding", the only signal a CPU node leaves).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simulator.catalog import CAUSE_NAMES, USERS
from simulator.failures import NodeFaults
from simulator.params import SimParams
from simulator.records import NEVER, Attempt

CPU_STREAM = 42  # the CPU partition's random stream: default_rng([seed, CPU_STREAM])
# CPU jobs' job ids start here (one sequence of their own after the GPU jobs' ids)
CPU_JOB_ID_BASE = 100_000_001
CORES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256])
CORE_WEIGHTS = np.array([0.30, 0.14, 0.16, 0.14, 0.10, 0.08, 0.06, 0.01, 0.01])
MEDIAN_MINUTES = 15.0
SIGMA = 1.5
MAX_RUN = 2 * 86400
OUTCOMES = ("COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED")
OUTCOME_WEIGHTS = np.array([0.70, 0.20, 0.03, 0.02, 0.05])
EXIT_CODES = {"FAILED": ("1:0", "2:0", "0:9", "127:0"), "OUT_OF_MEMORY": ("0:125",)}
CANDIDATE_NODES = 8
MEM_PER_CORE_G = 4
UNRESPONSIVE = CAUSE_NAMES.index("node_unresponsive")  # a CPU node's faults, as the logs show them


@dataclass
class CpuPartition:
    """What the CPU nodes did: their attempts, their faults (node indices local to the CPU nodes,
    whose global index is `offset` + local) and the node events those faults left."""

    offset: int
    attempts: list[Attempt] = field(default_factory=list)
    faults: NodeFaults | None = None
    events: list[tuple[int, int, int, str, str]] = field(default_factory=list)

    def node_failures(self, lo: int, hi: int) -> int:
        """Faults of CPU nodes in [lo, hi)."""
        assert self.faults is not None
        return sum(1 for times in self.faults.times for t in times if lo <= t < hi)


def run_cpu_partition(params: SimParams, horizon: int, offset: int) -> CpuPartition:
    """Simulate the CPU nodes from the warm-up to `horizon`; their global node indices start at `offset`."""
    p = params
    rng = np.random.default_rng([p.seed, CPU_STREAM])
    result = CpuPartition(offset)
    faults = _draw_faults(p, rng, horizon)
    result.faults = faults
    cores, work, outcome, frac, submit = _draw_jobs(p, rng, horizon)
    users = rng.integers(len(USERS), size=len(cores)).tolist()
    lanes = [[0] * p.cpus_per_node for _ in range(p.cpu_nodes)]  # each node's cores' next free times, sorted
    width = min(CANDIDATE_NODES, p.cpu_nodes)
    picks = rng.integers(p.cpu_nodes, size=(len(cores), width)).tolist()
    draws = rng.random((len(cores), 3)).tolist()
    job_id = CPU_JOB_ID_BASE
    for i, (c, w, o, f, at, u) in enumerate(
        zip(cores.tolist(), work.tolist(), outcome.tolist(), frac.tolist(), submit.tolist(), users, strict=True)
    ):
        state = OUTCOMES[o]
        node = min(picks[i], key=lambda n, c=c: lanes[n][c - 1])
        start = faults.down_until(node, max(at, lanes[node][c - 1]))
        kind = "batch" if c >= 16 else "prep"
        a = Attempt(str(job_id), job_id, f"{USERS[u][1]}_{kind}_{i % 89}", u, 0, at, at, cpus=c)
        job_id += 1
        result.attempts.append(a)
        if state == "CANCELLED" and f < 0.3 and at + int(f * 3600) < start:  # cancelled while pending
            a.start = a.end = at + int(f * 3600)
            a.state, a.no_alloc = _cancelled(u, draws[i][0]), True
            continue
        if start >= horizon:  # pending at the last dump
            a.reason = "Resources"
            continue
        runs = w if state in ("COMPLETED", "TIMEOUT") else max(1, int(w * f))
        a.start, a.nodes = start, (offset + node,)
        fault = faults.first_in((node,), start, start + runs)
        if fault is not None:
            t_fail, _, index = fault
            a.end, a.state, a.failed_node = t_fail + 30 + int(draws[i][1] * 60), "NODE_FAIL", offset + node
        else:
            a.end, a.state = start + runs, state
            if state == "CANCELLED":
                a.state = _cancelled(u, draws[i][0])
            elif state in EXIT_CODES:
                codes = EXIT_CODES[state]
                a.exit_code = codes[int(draws[i][2] * len(codes))]
        free = lanes[node][c:] + [a.end] * c
        free.sort()
        if fault is not None:  # the node is out for repair
            back = faults.repaired[node][fault[2]]
            free = [max(t, back) for t in free]
        lanes[node] = free
        if a.end >= horizon:
            a.end, a.state, a.exit_code, a.failed_node = NEVER, "RUNNING", "0:0", -1
    for node, (times, repaired) in enumerate(zip(faults.times, faults.repaired, strict=True)):
        for t, back in zip(times, repaired, strict=True):
            result.events.append((min(t + 30, back), back, offset + node, "DOWN*", "Not responding"))
    return result


def _cancelled(user: int, draw: float) -> str:
    return f"CANCELLED by {USERS[user][2] if draw < 0.9 else 0}"


def _draw_faults(p: SimParams, rng: np.random.Generator, horizon: int) -> NodeFaults:
    counts = rng.poisson(p.cpu_r_f / 1000 / 86400 * horizon, p.cpu_nodes)
    times, repaired = [], []
    for n in range(p.cpu_nodes):
        t = np.sort(rng.integers(0, horizon, counts[n])).tolist()
        repair = (rng.uniform(*p.repair_hours, counts[n]) * 3600).astype(np.int64).tolist()
        times.append(t)
        repaired.append([a + b for a, b in zip(t, repair, strict=True)])
    causes = [[UNRESPONSIVE] * len(t) for t in times]
    return NodeFaults(times, causes, repaired, np.ones(p.cpu_nodes), [])


def _draw_jobs(
    p: SimParams, rng: np.random.Generator, horizon: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(cores, work seconds, outcome, fraction run by a job that does not complete, submit), in
    submit order: submissions whose core-seconds fill `cpu_utilization` of the CPU nodes' capacity."""
    allowed = CORES <= p.cpus_per_node
    sizes, weights = CORES[allowed], CORE_WEIGHTS[allowed] / CORE_WEIGHTS[allowed].sum()
    budget = p.cpu_utilization * p.cpu_nodes * p.cpus_per_node * horizon
    mean_run = MEDIAN_MINUTES * 60 * p.duration_scale * np.exp(SIGMA**2 / 2)
    n = int(budget / (float((sizes * weights).sum()) * mean_run) * 1.3) + 16
    cores = rng.choice(sizes, n, p=weights)
    work = np.clip(rng.lognormal(np.log(MEDIAN_MINUTES * 60 * p.duration_scale), SIGMA, n), 30, MAX_RUN)
    work = work.astype(np.int64)
    outcome = rng.choice(len(OUTCOMES), n, p=OUTCOME_WEIGHTS / OUTCOME_WEIGHTS.sum())
    frac = rng.uniform(0.02, 1.0, n)
    full = np.isin(outcome, (0, 2))
    runs = np.where(full, work, np.maximum(1, (work * frac).astype(np.int64)))
    count = min(n, int(np.searchsorted(np.cumsum(runs * cores), budget)) + 1)
    cores, work, outcome, frac = cores[:count], work[:count], outcome[:count], frac[:count]
    submit = np.sort(rng.integers(0, horizon, count))
    return cores, work, outcome, frac, submit
