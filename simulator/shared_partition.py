"""The `shared` partition (sub-node jobs) on its own nodes: jobs in submit order take the GPUs free
earliest on the best of a few sampled nodes (first come, first served; fast for millions of short
jobs). A node fault ends every job on the node and takes the node out until its repair.
"""

from __future__ import annotations

import heapq
from operator import attrgetter

import numpy as np

from simulator.lifecycle import Ending, SimContext, fault_ending, finish, never_started, planned_runtime, start_attempt
from simulator.records import NEVER, Job

CANDIDATE_NODES = 12  # sub-node jobs go to the best of this many sampled nodes


def run_shared_pool(ctx: SimContext, jobs: list[Job], pool: np.ndarray) -> None:
    """Run the sub-node jobs on the `shared` pool's nodes, first come first served (by eligible time,
    then submission order): each job takes the GPUs free earliest on the best of a few sampled nodes.

    Each node keeps its GPUs' next free times sorted (which GPU is which never shows), and
    `free_by_rank[r][position]` is the r-th earliest of them, so that a job of `r + 1` GPUs picks its
    node with one `min` over the sampled candidates. The jobs arrive in order; only their requeues
    and resubmissions go through a heap. One loop, its names local: millions of jobs pass here.
    """
    gpn = ctx.params.gpus_per_node
    nodes = pool.tolist()
    lanes = [[0] * gpn for _ in nodes]  # each node's GPUs' next free times, sorted
    # only the ranks of the jobs' sizes are kept (requeues keep their job's size)
    free_by_rank: list[list[int] | None] = [None] * gpn
    for rank in {job.gpus - 1 for job in jobs}:
        free_by_rank[rank] = [0] * len(nodes)
    ranks = [(rank, free) for rank, free in enumerate(free_by_rank) if free is not None]
    eligible = [job.eligible for job in jobs]
    seqs = [job.seq for job in jobs]
    e, q = np.array(eligible, dtype=np.int64), np.array(seqs, dtype=np.int64)
    if not np.all((e[:-1] < e[1:]) | ((e[:-1] == e[1:]) & (q[:-1] < q[1:]))):  # the workload's order is this one
        jobs = sorted(jobs, key=attrgetter("eligible", "seq"))
        eligible, seqs = [job.eligible for job in jobs], [job.seq for job in jobs]
    eligible.append(NEVER)
    seqs.append(0)
    follow_ups: list[tuple[int, int, Job]] = []
    width = min(CANDIDATE_NODES, len(nodes))
    candidates: list[list[int]] = []
    horizon, rng = ctx.horizon, ctx.rng
    faults = ctx.faults
    fault_times, repaired = faults.times, faults.repaired
    i, n = 0, len(jobs)
    while i < n or follow_ups:
        if follow_ups and (
            i == n or follow_ups[0][0] < eligible[i] or (follow_ups[0][0] == eligible[i] and follow_ups[0][1] < seqs[i])
        ):
            job = heapq.heappop(follow_ups)[2]
        else:
            job = jobs[i]
            i += 1
        if not candidates:
            candidates = rng.integers(len(nodes), size=(65536, width)).tolist()
        gpus = job.gpus
        free_at = free_by_rank[gpus - 1]
        best = min(candidates.pop(), key=free_at.__getitem__)  # the first node whose `gpus` GPUs are free earliest
        node = nodes[best]
        has_faults = bool(fault_times[node])
        start = max(job.eligible, free_at[best])
        if has_faults:
            start = faults.down_until(node, start)
        if job.cancel_at < start:
            never_started(ctx, job, job.cancel_at)
            continue
        if start >= horizon:
            never_started(ctx, job)
            continue
        attempt = start_attempt(ctx, job, start, (node,))
        planned_end = start + (planned_runtime(job) if job.run_id else job.work)
        fault = faults.first_in((node,), start, planned_end) if has_faults else None
        ending = fault_ending(ctx, attempt, *fault) if fault else Ending(planned_end)
        # the `gpus` GPUs free earliest run the job until its end
        free = lanes[best][gpus:] + [ending.at] * gpus
        free.sort()
        if fault:  # the node is out for repair
            back = repaired[node][fault[2]]
            free = [max(t, back) for t in free]
        lanes[best] = free
        for rank, column in ranks:
            column[best] = free[rank]
        if ending.at >= horizon:  # running at the last dump; what follows has not happened yet
            continue
        follow_up = finish(ctx, job, attempt, ending)
        if follow_up is not None and follow_up.submit < horizon:
            heapq.heappush(follow_ups, (follow_up.eligible, follow_up.seq, follow_up))
