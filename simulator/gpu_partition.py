"""The `gpu` partition (whole-node jobs), Slurm-like: event-driven, gang-scheduled on whole nodes.

Pending jobs are ordered by QOS (`high` for 256+ GPUs, then `normal`) and age. EASY backfill: the
first job that does not fit gets a reservation at the earliest time enough nodes free up (from the
running jobs' time limits); later jobs start if they fit now and end before it or use nodes it does
not need. A `high` job that does not fit preempts `normal` jobs that have run their 2-hour guarantee
(PreemptMode=REQUEUE). New training runs are submitted closed-loop: when the runs in flight leave
room for them in the pool (`TRAINING_ALLOCATION`), not at their planned time, so the queue stays
stable. A node fault ends every job on the node and takes the node out until its repair.
"""

from __future__ import annotations

import heapq
from collections import Counter, deque
from dataclasses import dataclass

import numpy as np

from simulator.lifecycle import (
    Ending,
    SimContext,
    fault_ending,
    finish,
    never_started,
    planned_runtime,
    preempt,
    start_attempt,
)
from simulator.records import NEVER, Attempt, Job
from simulator.workload import MIN_RUN_BEFORE_PREEMPTION

BACKFILL_MAX_JOB_TEST = 500  # Slurm's bf_max_job_test: pending jobs looked at per backfill pass
# Teams launch a new training run only while the GPUs of the runs in flight (running or queued) leave
# room for it within this share of the `gpu` pool's GPUs (the pool is their allocation).
TRAINING_ALLOCATION = 1.0
# Event kinds, in the order they are handled at the same second: ends free nodes before starts.
END, REPAIR, FAIL, ARRIVE, CANCEL, PLAN = range(6)


@dataclass(slots=True)
class _Running:
    job: Job
    attempt: Attempt
    positions: np.ndarray  # pool positions of its nodes
    version: int = 0  # bumped when a fault changes its end
    dying: bool = False  # a fault has ended it; it leaves at its END event


class GpuPartition:
    """The `gpu` partition: whole-node jobs, event-driven, with priorities, EASY backfill and preemption."""

    def __init__(self, ctx: SimContext, pool: np.ndarray):
        self.ctx = ctx
        self.pool = pool
        self.position = {int(n): i for i, n in enumerate(pool)}
        size = len(pool)
        self.idle = np.ones(size, dtype=bool)
        self.free = size
        self.expected_free = np.zeros(size, dtype=np.int64)  # when a busy node's job reaches its limit
        self.preemptible_from = np.full(size, NEVER, dtype=np.int64)
        self.node_job = np.full(size, -1, dtype=np.int64)
        self.down_until = np.zeros(size, dtype=np.int64)
        self.running: dict[int, _Running] = {}
        # high QOS, normal QOS; each by age (a dict keeps the order jobs came in, and drops one at once)
        self.pending: tuple[dict[int, Job], dict[int, Job]] = ({}, {})
        self.pending_seqs: set[int] = set()
        self.pending_nodes: Counter[int] = Counter()  # node counts of the pending jobs
        self.events: list[tuple[int, int, int, object]] = []
        self.order = 0
        self.idle_fit: list[tuple[int, int]] = [(0, 0)]  # (time, idle nodes while a pending job fits in them)
        self.gpn = ctx.params.gpus_per_node
        self.planned: deque[Job] = deque()  # new training runs ready to launch, in plan order
        self.in_flight: dict[int, int] = {}  # GPUs of each training run launched and not over
        self.in_flight_gpus = 0
        self.allocation = int(TRAINING_ALLOCATION * size * self.gpn)

    # --- events --------------------------------------------------------------------------------
    def _push(self, t: int, kind: int, payload: object) -> None:
        self.order += 1
        heapq.heappush(self.events, (t, kind, self.order, payload))

    def run(self, jobs: list[Job]) -> None:
        """Run the whole-node jobs. A new training run's submit time is only its plan: it is submitted
        when its team's allocation has room for it (`_launch`); other jobs arrive as drawn."""
        ctx = self.ctx
        for job in jobs:
            self._push(job.eligible, PLAN if job.run_id else ARRIVE, job)
        for node in self.pool:
            for index, t in enumerate(ctx.faults.times[node]):
                if t < ctx.horizon:
                    self._push(t, FAIL, (int(node), index))
        handlers = {
            END: self._end,
            REPAIR: self._repair,
            FAIL: self._fail,
            ARRIVE: self._arrive,
            CANCEL: self._cancel,
            PLAN: self._plan,
        }
        while self.events and self.events[0][0] < ctx.horizon:
            t = self.events[0][0]
            while self.events and self.events[0][0] == t:
                _, kind, _, payload = heapq.heappop(self.events)
                handlers[kind](t, payload)
            if self.planned:
                self._launch(t)
            self._schedule(t)
            self._record_idle_fit(t)
        for _, kind, _, payload in sorted(self.events):
            if kind == ARRIVE and payload.submit < ctx.horizon:
                never_started(ctx, payload)
        for queue in self.pending:
            for job in queue.values():
                never_started(ctx, job)

    def _arrive(self, t: int, job: Job) -> None:
        self.pending[0 if job.high_qos else 1][job.seq] = job
        self.pending_seqs.add(job.seq)
        self.pending_nodes[self._nodes_of(job)] += 1
        if job.cancel_at < NEVER:
            self._push(max(job.cancel_at, t), CANCEL, job)

    def _plan(self, t: int, job: Job) -> None:
        self.planned.append(job)

    def _launch(self, t: int) -> None:
        """Submit the planned training runs, in plan order, while the runs in flight leave room for
        them in the allocation (closed loop: a team launches its next run when GPUs of its previous
        runs come back, as teams plan against a fixed allocation rather than a calendar)."""
        while self.planned:
            job = self.planned[0]
            if self.in_flight and self.in_flight_gpus + job.gpus > self.allocation:
                return
            self.planned.popleft()
            job.submit = job.eligible = t
            self.in_flight[job.run_id] = job.gpus
            self.in_flight_gpus += job.gpus
            self._arrive(t, job)

    def _cancel(self, t: int, job: Job) -> None:
        if job.seq in self.pending_seqs:
            self._unqueue([job])
            never_started(self.ctx, job, t)

    def _end(self, t: int, payload: tuple[int, int, Ending]) -> None:
        seq, version, ending = payload
        running = self.running.get(seq)
        if running is None or running.version != version:
            return
        follow_up = finish(self.ctx, running.job, running.attempt, ending)
        self._release(running, t)
        if follow_up is not None and follow_up.submit < self.ctx.horizon:
            self._push(follow_up.eligible, ARRIVE, follow_up)
        elif running.job.run_id in self.in_flight:  # the run is over: its GPUs go back to the allocation
            self.in_flight_gpus -= self.in_flight.pop(running.job.run_id)

    def _fail(self, t: int, payload: tuple[int, int]) -> None:
        node, index = payload
        i = self.position[node]
        seq = int(self.node_job[i])
        if seq >= 0 and not self.running[seq].dying:
            running = self.running[seq]
            running.dying, running.version = True, running.version + 1
            self.preemptible_from[running.positions] = NEVER
            ending = fault_ending(self.ctx, running.attempt, t, node, index)
            self._push(ending.at, END, (seq, running.version, ending))
        if self.idle[i]:
            self.idle[i] = False
            self.free -= 1
        self.expected_free[i] = NEVER
        self.down_until[i] = max(self.down_until[i], self.ctx.faults.repaired[node][index])
        self._push(int(self.down_until[i]), REPAIR, i)

    def _repair(self, t: int, i: int) -> None:
        if self.down_until[i] <= t and self.node_job[i] < 0 and not self.idle[i]:
            self.idle[i] = True
            self.free += 1
            self.expected_free[i] = 0

    # --- scheduling ----------------------------------------------------------------------------
    def _nodes_of(self, job: Job) -> int:
        return -(-job.gpus // self.gpn)

    def _schedule(self, t: int) -> None:
        high, normal = self.pending
        if not high and not normal:
            return
        if self.free == 0 and not high:
            return
        started: list[Job] = []
        shadow, spare, tested = None, 0, 0
        for queue in self.pending:
            for job in queue.values():
                need = self._nodes_of(job)
                if shadow is None:  # the highest-priority job not started yet
                    if need <= self.free:
                        self._start(job, t)
                        started.append(job)
                        continue
                    victims = self._preempt_for(job, t) if job.high_qos else None
                    if victims is not None:  # on the victims' nodes first
                        attempt = self._start(job, t, np.concatenate([v.positions for v in victims]))
                        started.append(job)
                        for victim in victims:
                            self._record_preemption(victim, job, attempt, t)
                        continue
                    shadow, spare = self._reservation(t, need)
                else:
                    tested += 1
                    if need <= self.free:
                        if t + job.limit <= shadow:
                            self._start(job, t)
                            started.append(job)
                        elif need <= spare:
                            spare -= need
                            self._start(job, t)
                            started.append(job)
                if (shadow is not None and self.free == 0) or tested >= BACKFILL_MAX_JOB_TEST:
                    break
            else:
                continue
            break
        if started:
            self._unqueue(started)

    def _reservation(self, t: int, need: int) -> tuple[int, int]:
        """When `need` nodes are free at the latest (by the running jobs' time limits), and how many
        nodes free by then that the reservation does not need."""
        expected = np.maximum(self.expected_free, t)
        if need > len(expected):
            return NEVER, 0
        shadow = int(np.partition(expected, need - 1)[need - 1])
        if shadow >= NEVER:
            return NEVER, 0
        return shadow, int((expected <= shadow).sum()) - need

    def _preempt_for(self, job: Job, t: int) -> list[_Running] | None:
        """Preempt the youngest `normal` jobs past their guarantee so that `job` fits now; the victims,
        or None (and nothing preempted) if that cannot free enough nodes."""
        need = self._nodes_of(job) - self.free
        candidates = np.flatnonzero(self.preemptible_from <= t)
        if len(candidates) < need:
            return None
        victims = sorted(
            {int(self.node_job[i]) for i in candidates}, key=lambda seq: (-self.running[seq].attempt.start, seq)
        )
        chosen, freed = [], 0
        for seq in victims:
            chosen.append(self.running[seq])
            freed += len(self.running[seq].positions)
            if freed >= need:
                break
        if freed < need:
            return None
        for victim in chosen:
            follow_up = preempt(self.ctx, victim.job, victim.attempt, t)
            self._release(victim, t)
            self._push(follow_up.eligible, ARRIVE, follow_up)
        return chosen

    def _start(self, job: Job, t: int, preferred: np.ndarray | None = None) -> Attempt:
        need = self._nodes_of(job)
        if preferred is None and need == 1 and self.idle[first := int(self.idle.argmax())]:
            return self._start_on_one(job, t, first)  # the first idle node (argmax stops there)
        positions = np.flatnonzero(self.idle)
        if preferred is not None:
            preferred = preferred[self.idle[preferred]]
            positions = np.concatenate([preferred, positions[~np.isin(positions, preferred)]])
        positions = np.sort(positions[:need])
        attempt = start_attempt(self.ctx, job, t, tuple(self.pool[positions].tolist()))
        self.idle[positions] = False
        self.free -= need
        self.node_job[positions] = job.seq
        self.expected_free[positions] = t + job.limit
        if not job.high_qos:
            self.preemptible_from[positions] = t + MIN_RUN_BEFORE_PREEMPTION
        self.running[job.seq] = _Running(job, attempt, positions)
        end = t + planned_runtime(job)
        self._push(end, END, (job.seq, 0, Ending(end)))
        return attempt

    def _start_on_one(self, job: Job, t: int, i: int) -> Attempt:
        """`_start` of a one-node job on pool position `i`, with scalar updates."""
        attempt = start_attempt(self.ctx, job, t, (int(self.pool[i]),))
        self.idle[i] = False
        self.free -= 1
        self.node_job[i] = job.seq
        self.expected_free[i] = t + job.limit
        if not job.high_qos:
            self.preemptible_from[i] = t + MIN_RUN_BEFORE_PREEMPTION
        self.running[job.seq] = _Running(job, attempt, np.array([i]))
        end = t + planned_runtime(job)
        self._push(end, END, (job.seq, 0, Ending(end)))
        return attempt

    def _record_preemption(self, victim: _Running, by: Job, by_attempt: Attempt, t: int) -> None:
        self.ctx.preemptions.append(
            {
                "victim": victim.attempt,
                "preempted_at": t,
                "by": by_attempt,
                # a second-order preemption: the preemptor restarts a job that an infrastructure failure ended
                "by_restart_after_failure": by.after_failure,
            }
        )

    def _release(self, running: _Running, t: int) -> None:
        positions = running.positions
        if len(positions) == 1:  # the same, with scalar updates
            i = int(positions[0])
            if self.node_job[i] == running.job.seq:
                self.node_job[i] = -1
                self.preemptible_from[i] = NEVER
                if self.down_until[i] <= t:
                    self.idle[i] = True
                    self.free += 1
                    self.expected_free[i] = 0
                else:
                    self.expected_free[i] = NEVER
            del self.running[running.job.seq]
            return
        mine = positions[self.node_job[positions] == running.job.seq]
        self.node_job[mine] = -1
        self.preemptible_from[mine] = NEVER
        healthy = mine[self.down_until[mine] <= t]
        self.idle[healthy] = True
        self.free += len(healthy)
        self.expected_free[healthy] = 0
        self.expected_free[mine[self.down_until[mine] > t]] = NEVER
        del self.running[running.job.seq]

    def _unqueue(self, jobs: list[Job]) -> None:
        for job in jobs:
            self.pending_seqs.discard(job.seq)
            self.pending_nodes[self._nodes_of(job)] -= 1
            if not self.pending_nodes[self._nodes_of(job)]:
                del self.pending_nodes[self._nodes_of(job)]
            self.pending[0 if job.high_qos else 1].pop(job.seq, None)

    def _record_idle_fit(self, t: int) -> None:
        fits = self.pending_nodes and min(self.pending_nodes) <= self.free
        value = self.free if fits else 0
        if value != self.idle_fit[-1][1]:
            self.idle_fit.append((t, value))
