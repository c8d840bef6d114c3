"""A cluster simulator with ground truth: one month of Slurm and node-health logs in the real formats.

Writes, for one cluster and month:
- `sacct.psv`: as `sacct --allusers --duplicates --allocations --parsable2` prints it (Slurm 22.05
  field set, or 24.11 with `Restarts` and `FailedNode`); requeued attempts repeat the job id with a
  later Submit and come at the end, as real `sacct -D` output does;
- `events.psv`: as `sacctmgr -P show event` prints it (DOWN / DOWN* / DRAIN with Reason);
- `xid.log`: NVIDIA Xid kernel lines as rsyslog writes them;
- `nhc.log`: LBNL NHC lines (`ERROR:  nhc:  Health check failed:  ...`);
- `truth.json`: every parameter, the injected failures with their true cause and whether the
  attribution window can see them, realised exposure and failures per size bucket, the true r_f
  under both definitions, the lemon nodes and the productive time of every training run.

Model: jobs arrive uniformly over the window with sizes and runtimes shaped like the paper's
RSC-1 (most jobs on 1 GPU and short; 256+ GPU jobs hold most GPU-hours). They are placed on GPU
lanes (no two jobs share a GPU): whole-node jobs on the nodes free earliest, sub-node jobs on the
best of a few sampled nodes. Every node fails as a Poisson process whose rate is r_f times a
gamma-distributed node factor (mean 1), with a few lemon nodes failing far more often; a failure
ends every job on the node and takes the node out for repair. Large jobs are training runs that
checkpoint every `ckpt_interval_min` and resubmit themselves after a failure, losing the work
since the last checkpoint plus a restart overhead.
"""

from __future__ import annotations

import bisect
import heapq
import json
import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from flows.months import Month

SACCT_FIELDS_2205 = (
    "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|State|ExitCode|Submit|Eligible|Start|End|Elapsed|"
    "NNodes|NodeList|AllocTRES|ReqTRES|Reason|DerivedExitCode"
)
SACCT_FIELDS_2411 = SACCT_FIELDS_2205 + "|Restarts|FailedNode"
EVENTS_HEADER = (
    "Cluster|Cluster Nodes|Duration|TimeEnd|Event|EventRaw|NodeName|Reason|TimeStart|State|StateRaw|TRES|User"
)

# GPUs per job and their probabilities. With the runtimes below: ~45% of jobs on 1 GPU, >90% below a
# node, and about three quarters of the GPU-hours in jobs of 256+ GPUs (paper.md §10).
SIZE_CHOICES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096])
SIZE_WEIGHTS = np.array([0.45, 0.20, 0.26, 0.06, 0.012, 0.008, 0.005, 0.003, 0.0015, 0.0008, 0.0004, 0.00015, 0.00005])
TRAINING_MIN_GPUS = 64  # jobs this large are training runs that resubmit themselves after failures
# Outcome mix of attempts that no node failure ends (paper Fig. 3; CANCELLED takes the rest).
OUTCOMES = ("COMPLETED", "FAILED", "PREEMPTED", "REQUEUED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED")
OUTCOME_WEIGHTS = np.array([0.60, 0.24, 0.10, 0.02, 0.006, 0.001, 0.033])
USER_EXIT_CODES = ("1:0", "2:0", "0:9", "0:11", "127:0", "0:6")
# Infrastructure failure causes: category, share, Xid (or None), drain reason, NHC check line.
CAUSES = (
    (
        "gpu_memory",
        0.22,
        48,
        "NHC: check_nv_ecc: uncorrectable ECC errors on GPU {gpu}",
        "check_nv_ecc:  GPU {gpu} has 1 uncorrectable volatile ECC errors",
    ),
    ("gpu_unavailable", 0.15, 79, "xid 79 gpu fell off bus", "check_gpu_count:  Expected 8 GPUs, found 7"),
    (
        "infiniband_link",
        0.18,
        None,
        "NHC: check_hw_ib: mlx5_{gpu} port 1 link down",
        "check_hw_ib:  Port 1 of device mlx5_{gpu} is Down",
    ),
    (
        "filesystem_mount",
        0.15,
        None,
        "NHC: check_fs_mount: /checkpoint not mounted",
        "check_fs_mount:  /checkpoint not mounted",
    ),
    (
        "gpu_nvlink",
        0.10,
        74,
        "NHC: check_nvlink: NVLink errors on GPU {gpu}",
        "check_nvlink:  GPU {gpu} link 3 is inactive",
    ),
    ("gpu_driver_firmware", 0.08, 119, "NHC: GSP RPC timeout on GPU {gpu}", None),
    (
        "pcie",
        0.07,
        None,
        "NHC: check_pcie: PCIe link width degraded on GPU {gpu}",
        "check_pcie:  GPU {gpu} PCIe link width x8, expected x16",
    ),
    ("node_unresponsive", 0.05, None, "Not responding", None),
)
CAUSE_SHARES = np.array([c[1] for c in CAUSES]) / sum(c[1] for c in CAUSES)
XID_TEXT = {
    13: "Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Illegal Instruction Parameter",
    31: "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_12000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    43: "Ch 00000010, engmask 00000101, intr 10000000",
    45: "Ch 00000010 caused by previous Xid {prev}",
    48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0.",
    63: "Row Remapper: New row (0x0000000000012345) was marked for remapping, reset gpu to activate.",
    74: "NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
    79: "GPU has fallen off the bus.",
    92: "High single-bit ECC error rate detected on GPU.",
    119: "Timeout after 45s of waiting for RPC response from GPU{gpu} GSP! Expected function 76 (GSP_RM_CONTROL) sequence 4128 (0x20803039 0xb0).",
}
# What `dcgmi health -c` reports for a cause: (health system, message); messages as DCGM words them.
DCGM_INCIDENTS = {
    "gpu_memory": ("Memory system", "Detected 1 volatile double-bit ECC error(s) in GPU {gpu}."),
    "gpu_nvlink": (
        "NVLINK system",
        "Detected 12 NvLink replay errors on GPU {gpu}'s NVLink which exceeds threshold of 10",
    ),
    "pcie": (
        "PCIe system",
        "Detected more than 8 PCIe replays per minute for GPU {gpu} : 23 Reconnect PCIe card. "
        "Run system side PCIE diagnostic utilities to verify hops off the GPU board.",
    ),
    "gpu_unavailable": ("PCIe system", "GPU {gpu} is not responding: it fell off the bus"),
    "gpu_driver_firmware": ("Driver", "GPU {gpu}: driver error detected: GSP RPC timeout"),
}
MAX_SIZE_OF_HEALTH_INFO = 54  # dcgmi splits longer messages into overflow lines of this width
PCI_IDS = (
    "0000:18:00",
    "0000:2a:00",
    "0000:3a:00",
    "0000:5d:00",
    "0000:9a:00",
    "0000:ab:00",
    "0000:ba:00",
    "0000:db:00",
)
USERS = (
    ("alice", "vision", 1001),
    ("bob", "llm", 1002),
    ("carol", "llm", 1003),
    ("dave", "speech", 1004),
    ("erin", "rl", 1005),
    ("frank", "vision", 1006),
    ("grace", "llm", 1007),
    ("heidi", "robotics", 1008),
)
SIZE_BUCKETS = (
    ((0, 0, "0"), (1, 1, "1"), (2, 2, "2"), (3, 4, "4"), (5, 8, "8"))
    + tuple((2 ** (k - 1) + 1, 2**k, str(2**k)) for k in range(4, 14))
    + ((8193, 2**31 - 1, ">8192"),)
)
CANDIDATE_NODES = 24  # sub-node jobs go to the best of this many sampled nodes
PREEMPTOR_MIN_GPUS = 256  # jobs this large have the priority to preempt ...
VICTIM_MAX_GPUS = 64  # ... whole-node jobs this small
MIN_RUN_BEFORE_PREEMPTION = 2.0  # hours (paper.md §3)


@dataclass
class SimParams:
    cluster: str
    month: Month
    nodes: int
    seed: int
    gpus_per_node: int = 8
    r_f: float = 6.5  # failures per 1000 node-days, fleet mean of the healthy nodes
    node_rate_shape: float = 2.0  # gamma shape of the per-node rate factor (mean 1); larger = more uniform
    lemon_fraction: float = 0.005
    lemon_factor: float = 25.0
    utilization: float = 0.75  # offered GPU-hours over capacity; requeues and resubmissions add ~5-10%
    warmup_days: float = 3.0
    repair_hours: tuple[float, float] = (2.0, 48.0)
    ckpt_interval_min: float = 60.0
    restart_overhead_min: float = 5.0
    resubmit_delay_min: tuple[float, float] = (2.0, 30.0)
    outside_window_share: float = 0.05  # FAILED-by-infra attempts whose evidence lands outside the window
    attr_before_min: float = 10.0
    attr_after_min: float = 5.0
    paper_min_gpus: int = 128
    slurm_version: str = "22.05"  # or "24.11": adds Restarts and FailedNode
    node_prefix: str = "gpu"
    duration_scale: float = 1.0  # scales every runtime; more, shorter jobs at the same utilization
    array_share: float = 0.02  # share of 1-GPU submissions that start an array of 2-10 tasks
    watch_xids_per_node: float = 0.25  # watch-only Xid 63/92 lines (warnings) per node over the window


def simulate(params: SimParams, out_dir: Path) -> dict:
    """Simulate one month and write its logs and `truth.json` to `out_dir`; return the truth."""
    if params.nodes < 1:
        raise ValueError("a cluster needs at least one node")
    if params.slurm_version not in ("22.05", "24.11"):
        raise ValueError(f"slurm_version must be 22.05 or 24.11, got {params.slurm_version!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    sim = _Simulation(params)
    sim.run()
    sim.write(out_dir)
    truth = sim.truth()
    (out_dir / "truth.json").write_text(json.dumps(truth, indent=1, default=str) + "\n")
    return truth


def fold_hostlist(prefix: str, indices: list[int], width: int) -> str:
    """Slurm's compressed host list of `prefix` + zero-padded numbers, e.g. gpu[0001-0004,0007].

    Written here instead of ClusterShell's NodeSet.fromlist because the simulator already holds
    sorted integers and NodeSet costs ~60 us per job (a minute per million jobs); the reader's
    ClusterShell expansion checks the result in the tests.
    """
    if len(indices) == 1:
        return f"{prefix}{indices[0]:0{width}d}"
    ranges, start, prev = [], indices[0], indices[0]
    for i in indices[1:]:
        if i != prev + 1:
            ranges.append((start, prev))
            start = i
        prev = i
    ranges.append((start, prev))
    parts = [f"{a:0{width}d}" if a == b else f"{a:0{width}d}-{b:0{width}d}" for a, b in ranges]
    return f"{prefix}[{','.join(parts)}]"


@dataclass
class _Attempt:
    job_id: str
    job_id_raw: int
    name: str
    user: int  # index into USERS
    gpus: int
    submit: float  # hours since the window start
    eligible: float
    start: float | None = None
    end: float | None = None  # None: still running at the month's end
    state: str = "PENDING"
    exit_code: str = "0:0"
    nodes: list[int] = field(default_factory=list)
    reason: str = "None"
    restarts: int = 0
    failed_node: str = ""
    no_alloc: bool = False
    requeued: bool = False  # a later record of the same job id


@dataclass
class _Job:
    """A job waiting to be placed (a first submission, a requeue, or a training run's resubmission)."""

    submit: float
    seq: int
    gpus: int
    work: float  # hours of work left (planned runtime of the attempt)
    job_id: str = ""
    job_id_raw: int = 0
    name: str = ""
    user: int = 0
    run_id: int | None = None  # training run this job belongs to
    restarts: int = 0
    is_restart: bool = False  # pays the restart overhead first
    outcome: int = 0  # index into OUTCOMES for attempts no failure ends
    fraction: float = 1.0  # share of the planned runtime a non-completing outcome runs


class _Simulation:
    def __init__(self, p: SimParams):
        self.p = p
        self.rng = np.random.default_rng(p.seed)
        self.t0 = p.month.start - timedelta(days=p.warmup_days)
        self.horizon = (p.month.end - self.t0).total_seconds() / 3600  # hours; the dump is at the month's end
        self.month_start_h = p.warmup_days * 24
        self.width = max(4, len(str(p.nodes)))
        self.node_names = [f"{p.node_prefix}{i:0{self.width}d}" for i in range(1, p.nodes + 1)]
        self.lane_free = np.zeros((p.nodes, p.gpus_per_node))
        self.node_free = np.zeros(p.nodes)  # when the whole node is next free (max over lanes)
        self._draw_node_failures()
        self.attempts: list[_Attempt] = []
        self.events: list[tuple[float, str]] = []
        self.xid_lines: list[tuple[float, str]] = []
        self.nhc_lines: list[tuple[float, str]] = []
        self.dcgm_checks: list[tuple[float, str, dict]] = []  # (hour, node, dcgmi health -c -j output)
        self.critical_evidence: dict[int, list[tuple[float, str]]] = {}  # node -> (hour, cause) of critical signals
        self.failures: list[dict] = []  # truth: every attempt an injected node failure ended
        self.runs: dict[int, dict] = {}
        self._seq = 0
        self._next_raw_id = 0
        self._consumed: set[tuple[int, int]] = set()  # (node, failure index) already written as events
        self.last_on_node: list[_Attempt | None] = [None] * p.nodes  # latest whole-node attempt per node
        self.victim_start = np.full(p.nodes, np.inf)  # start of that attempt if it may be preempted
        self._victim_jobs: dict[int, _Job] = {}
        self._extra: list[_Job] = []  # requeues of preempted jobs, submitted by run()
        self.preemptions: list[dict] = []

    # --- node failures -------------------------------------------------------------------------
    def _draw_node_failures(self) -> None:
        p, rng = self.p, self.rng
        factor = rng.gamma(p.node_rate_shape, 1 / p.node_rate_shape, p.nodes)
        n_lemons = int(round(p.nodes * p.lemon_fraction))
        self.lemons = sorted(rng.choice(p.nodes, n_lemons, replace=False).tolist()) if n_lemons else []
        factor[self.lemons] = p.lemon_factor
        self.node_factor = factor
        rate_per_hour = p.r_f / 1000 / 24 * factor
        counts = rng.poisson(rate_per_hour * self.horizon)
        self.fail_times: list[list[float]] = []
        self.fail_causes: list[list[int]] = []
        self.fail_repair: list[list[float]] = []
        for n in range(p.nodes):
            times = np.sort(rng.uniform(0, self.horizon, counts[n])).tolist()
            self.fail_times.append(times)
            self.fail_causes.append(rng.choice(len(CAUSES), counts[n], p=CAUSE_SHARES).tolist())
            self.fail_repair.append(rng.uniform(*p.repair_hours, counts[n]).tolist())

    def _down_until(self, node: int, t: float) -> float:
        """If `node` is under repair at `t`, when it is back; else `t`."""
        times = self.fail_times[node]
        i = bisect.bisect_right(times, t) - 1
        while i >= 0 and t < times[i] + self.fail_repair[node][i]:
            t = times[i] + self.fail_repair[node][i]
            i = bisect.bisect_right(times, t) - 1
        return t

    def _first_failure(self, nodes: list[int], start: float, end: float) -> tuple[float, int, int] | None:
        best = None
        for n in nodes:
            times = self.fail_times[n]
            i = bisect.bisect_right(times, start)
            if i < len(times) and times[i] < end and (best is None or times[i] < best[0]):
                best = (times[i], n, i)
        return best

    # --- workload ------------------------------------------------------------------------------
    def _workload(self) -> list[_Job]:
        p, rng = self.p, self.rng
        max_gpus = p.nodes * p.gpus_per_node
        allowed = SIZE_CHOICES <= max(max_gpus // 2, 1)
        sizes, weights = SIZE_CHOICES[allowed], SIZE_WEIGHTS[allowed] / SIZE_WEIGHTS[allowed].sum()
        median = np.where(sizes < 8, 0.1, np.where(sizes <= 64, 0.75, 6.0)) * p.duration_scale
        sigma = 1.6
        mean_hours = np.minimum(median * math.exp(sigma**2 / 2), 7 * 24)
        budget = p.utilization * max_gpus * self.horizon
        gpu_hours = weights * sizes * mean_hours
        n_jobs = max(1, int(budget / float(gpu_hours.sum())))
        # Sub-node jobs get their own nodes (as sites do with a shared partition), sized from their
        # share of the offered GPU-hours with headroom; otherwise they fragment every node and
        # whole-node jobs wait for nodes that are never entirely free.
        small_share = float(gpu_hours[sizes < p.gpus_per_node].sum() / gpu_hours.sum())
        n_small = min(p.nodes, max(1, math.ceil(p.nodes * small_share * 1.5)))
        order = self.rng.permutation(p.nodes)
        self.small_pool = np.sort(order[:n_small])
        self.large_pool = np.sort(order[n_small:]) if n_small < p.nodes and p.nodes >= 8 else np.arange(p.nodes)
        gpus = rng.choice(sizes, n_jobs, p=weights)
        med = np.where(gpus < 8, 0.1, np.where(gpus <= 64, 0.75, 6.0)) * p.duration_scale
        work = np.clip(rng.lognormal(np.log(med), sigma), 1 / 60, 7 * 24)
        # Training runs need more work than one attempt may take: they chain through the 7-day limit.
        training = gpus >= TRAINING_MIN_GPUS
        work[training] = np.clip(rng.lognormal(np.log(24.0 * p.duration_scale), 1.0, training.sum()), 2.0, 21 * 24)
        submit = np.sort(rng.uniform(0, self.horizon, n_jobs))
        users = rng.integers(len(USERS), size=n_jobs)
        outcome = rng.choice(len(OUTCOMES), n_jobs, p=OUTCOME_WEIGHTS / OUTCOME_WEIGHTS.sum())
        outcome[training] = 0  # training runs end by completing, by failures, or at the time limit
        fraction = rng.uniform(0.02, 1.0, n_jobs)
        in_array = (gpus == 1) & (rng.random(n_jobs) < p.array_share)
        jobs: list[_Job] = []
        run_id = 0
        array_of: tuple[int, int, int] | None = None  # (master id, task index, tasks left)
        for i in range(n_jobs):
            g = int(gpus[i])
            job = _Job(
                submit=float(submit[i]),
                seq=i,
                gpus=g,
                work=float(work[i]),
                user=int(users[i]),
                outcome=int(outcome[i]),
                fraction=float(fraction[i]),
            )
            if training[i]:
                run_id += 1
                job.run_id = run_id
                job.name = f"{USERS[job.user][1]}_pretrain_{run_id}"
                self.runs[run_id] = {
                    "run_id": run_id,
                    "name": job.name,
                    "user": USERS[job.user][0],
                    "gpus": g,
                    "work_hours": job.work,
                    "job_ids": [],
                    "attempts": 0,
                    "runtime_seconds": 0,
                    "queue_seconds": 0,
                    "productive_seconds": 0,
                    "completed": False,
                }
            elif in_array[i] and array_of is None:
                size = int(rng.integers(2, 11))
                array_of = (self._new_raw_id(), 0, size)
                job.name = f"{USERS[job.user][1]}_sweep_{array_of[0]}"
            else:
                job.name = f"{USERS[job.user][1]}_{'train' if g >= 8 else 'exp'}_{i % 97}"
            if array_of is not None and not training[i]:
                master, task, left = array_of
                if task > 0:  # later tasks share the first task's size, submit time, user and name
                    prev = jobs[-1]
                    job.gpus, job.submit, job.user, job.name = prev.gpus, prev.submit, prev.user, prev.name
                last = left == 1
                job.job_id = f"{master}_{task}"
                job.job_id_raw = master if last else self._new_raw_id()
                array_of = None if last else (master, task + 1, left - 1)
            else:
                job.job_id_raw = self._new_raw_id()
                job.job_id = str(job.job_id_raw)
            jobs.append(job)
        self._seq = n_jobs
        return jobs

    def _new_raw_id(self) -> int:
        self._next_raw_id += 1
        return 1000 + self._next_raw_id

    # --- scheduling ----------------------------------------------------------------------------
    def run(self) -> None:
        queue = [(job.submit, job.seq, job) for job in self._workload()]
        heapq.heapify(queue)
        self._cand = self.small_pool[self.rng.integers(len(self.small_pool), size=(65536, CANDIDATE_NODES))]
        self._cand_i = 0
        while queue:
            job = heapq.heappop(queue)[2]
            follow_ups = [self._place(job), *self._extra]
            self._extra.clear()
            for follow_up in follow_ups:
                if follow_up is not None and follow_up.submit < self.horizon:
                    self._seq += 1
                    follow_up.seq = self._seq
                    heapq.heappush(queue, (follow_up.submit, follow_up.seq, follow_up))
        self._noise()

    def _candidates(self) -> np.ndarray:
        if self._cand_i >= len(self._cand):
            self._cand = self.small_pool[self.rng.integers(len(self.small_pool), size=self._cand.shape)]
            self._cand_i = 0
        self._cand_i += 1
        return self._cand[self._cand_i - 1]

    def _choose_nodes(self, job: _Job, eligible: float) -> tuple[list[int], dict, float, list[_Attempt]]:
        gpn = self.p.gpus_per_node
        if job.gpus < gpn:
            cand = self._candidates()
            lanes_free = self.lane_free[cand]
            if job.gpus == 1:
                ready = lanes_free.min(axis=1)
            else:
                ready = np.partition(lanes_free, job.gpus - 1, axis=1)[:, job.gpus - 1]
            best = int(ready.argmin())
            node = int(cand[best])
            lanes = lanes_free[best].argsort()[: job.gpus]
            return [node], {node: lanes}, max(eligible, float(ready[best])), []
        k = job.gpus // gpn
        pool = self.large_pool if k <= len(self.large_pool) else np.arange(self.p.nodes)
        free = self.node_free[pool]
        may_preempt = job.gpus >= PREEMPTOR_MIN_GPUS
        if may_preempt:  # a running low-priority job frees its node once it has run 2 h
            victim_start = self.victim_start[pool]
            preemptible = np.isfinite(victim_start) & (free > eligible)
            if preemptible.any():
                free = free.copy()
                free[preemptible] = np.maximum(victim_start[preemptible] + MIN_RUN_BEFORE_PREEMPTION, eligible)
        chosen = np.argpartition(free, k - 1)[:k]
        nodes = np.sort(pool[chosen]).tolist()
        start = max(eligible, float(free[chosen].max()))
        victims: dict[int, _Attempt] = {}
        if may_preempt:
            for n in nodes:
                victim = self.last_on_node[n]
                if victim is not None and self.node_free[n] > start and np.isfinite(self.victim_start[n]):
                    victims[id(victim)] = victim
        return nodes, {n: slice(None) for n in nodes}, start, list(victims.values())

    def _place(self, job: _Job) -> _Job | None:
        """Place one attempt, decide how it ends, record it; return the job to submit next, if any."""
        p, rng = self.p, self.rng
        eligible = job.submit + (float(rng.uniform(0.01, 0.05)) if job.restarts else 0.0)
        nodes, lanes, start, victims = self._choose_nodes(job, eligible)
        for _ in range(4):  # a node under repair delays the start
            later = (
                self._down_until(nodes[0], start) if len(nodes) == 1 else max(self._down_until(n, start) for n in nodes)
            )
            if later == start:
                break
            start = later
        attempt = _Attempt(
            job_id=job.job_id,
            job_id_raw=job.job_id_raw,
            name=job.name,
            user=job.user,
            gpus=job.gpus,
            submit=job.submit,
            eligible=eligible,
            restarts=job.restarts,
            requeued=job.restarts > 0,  # a later record of the same job id
        )
        if not job.run_id and OUTCOMES[job.outcome] == "CANCELLED" and job.fraction < 0.3:
            # cancelled while pending: no allocation; Start = End = the cancel time, as sacct shows it
            attempt.start = attempt.end = min(job.submit + job.fraction, self.horizon - 1 / 3600)
            attempt.state, attempt.no_alloc = self._cancelled_state(attempt), True
            self._keep(attempt)
            return None
        if job.restarts:
            attempt.reason = "BeginTime"
        if start >= self.horizon:  # still pending when the month was dumped
            attempt.reason = "Resources" if attempt.reason == "None" else attempt.reason
            self._keep(attempt)
            return None
        attempt.start, attempt.nodes = start, nodes
        for victim in victims:
            if victim.end is not None and victim.end > start:
                self._preempt(victim, start, attempt, job)
        overhead = p.restart_overhead_min / 60 if job.is_restart or job.restarts else 0.0
        planned = min(job.work + overhead, 7 * 24) if job.run_id else job.work
        if not job.run_id and OUTCOMES[job.outcome] not in ("COMPLETED", "TIMEOUT"):
            planned = job.work * job.fraction
            if OUTCOMES[job.outcome] == "PREEMPTED":
                planned = max(planned, 2.0)  # preemptible only after 2 h of running
        failure = self._first_failure(nodes, start, start + planned)
        follow_up = None
        if failure is not None:
            end, follow_up = self._infra_failure(job, attempt, failure, overhead)
        else:
            end = start + planned
            follow_up = self._normal_end(job, attempt, end, overhead)
        attempt.end = end
        if len(nodes) == 1:
            self.lane_free[nodes[0], lanes[nodes[0]]] = end
            self.node_free[nodes[0]] = self.lane_free[nodes[0]].max()
        else:
            self.lane_free[nodes, :] = end
            self.node_free[nodes] = end
        if job.gpus >= p.gpus_per_node:
            may_be_preempted = (
                not job.run_id
                and failure is None
                and follow_up is None
                and end < self.horizon
                and attempt.state in ("COMPLETED", "TIMEOUT")
                and job.gpus <= VICTIM_MAX_GPUS
            )
            for n in nodes:
                self.last_on_node[n] = attempt
            self.victim_start[nodes] = attempt.start if may_be_preempted else np.inf
            if may_be_preempted:
                self._victim_jobs[id(attempt)] = job
        if failure is not None:  # the failed node is out for repair
            n = failure[1]
            self.lane_free[n, :] = np.maximum(self.lane_free[n, :], failure[0] + self.fail_repair[n][failure[2]])
            self.node_free[n] = self.lane_free[n].max()
        if end >= self.horizon:  # running at the dump: End=Unknown; the follow-up has not happened yet
            attempt.end, attempt.state, attempt.exit_code, attempt.failed_node = None, "RUNNING", "0:0", ""
            follow_up = None
            if failure is not None:
                self.failures.pop()
        if job.run_id:
            self._account_run(job, attempt, overhead)
        self._keep(attempt)
        return follow_up

    def _normal_end(self, job: _Job, attempt: _Attempt, end: float, overhead: float) -> _Job | None:
        rng = self.rng
        if job.run_id:
            if job.work + overhead > 7 * 24:  # hit the time limit: resubmit the rest after the last checkpoint
                attempt.state = "TIMEOUT"
                saved = self._saved_work(7 * 24 - overhead)
                return self._resubmit(job, end, job.work - saved)
            attempt.state = "COMPLETED"
            return None
        state = OUTCOMES[job.outcome]
        attempt.state = state
        if state == "FAILED":
            attempt.exit_code = USER_EXIT_CODES[int(rng.integers(len(USER_EXIT_CODES)))]
            if rng.random() < 0.15:  # the application's own GPU error: an Xid that is not the node's fault
                self._xid(
                    end - float(rng.uniform(0, 60)) / 3600,
                    attempt.nodes[0],
                    int(rng.choice([13, 31])),
                    int(rng.integers(8)),
                )
        elif state == "OUT_OF_MEMORY":
            attempt.exit_code = "0:125"
        elif state == "CANCELLED":
            attempt.state = self._cancelled_state(attempt)
        elif state == "REQUEUED":
            return self._requeue(job, end, job.work)
        elif state == "TIMEOUT":
            attempt.exit_code = "0:0"
        return None

    def _preempt(self, victim: _Attempt, start: float, by: _Attempt, by_job: _Job) -> None:
        """End `victim` just before `by` starts on its nodes; Slurm requeues it (PreemptMode=REQUEUE)."""
        at = max(start - float(self.rng.uniform(0, 5)) / 60, victim.start + MIN_RUN_BEFORE_PREEMPTION)
        victim.end, victim.state, victim.exit_code = at, "PREEMPTED", "0:0"
        for n in victim.nodes:
            if self.last_on_node[n] is victim:
                self.lane_free[n, :] = at
                self.node_free[n] = at
                self.victim_start[n] = np.inf
        job = self._victim_jobs.pop(id(victim))
        self._extra.append(self._requeue(job, at, job.work))
        self.preemptions.append(
            {
                "job_id_raw": str(victim.job_id_raw),
                "submit": _fmt(self._ts(victim.submit)),
                "preempted_at": _fmt(self._ts(at)),
                "gpus": victim.gpus,
                "by_job_id_raw": str(by.job_id_raw),
                "by_submit": _fmt(self._ts(by.submit)),
                "by_start": _fmt(self._ts(start)),
                "by_gpus": by.gpus,
                # a second-order preemption: the preemptor restarts a job that an infrastructure failure ended
                "by_restart_after_failure": by_job.restarts > 0 or by_job.is_restart,
            }
        )

    def _cancelled_state(self, attempt: _Attempt) -> str:
        uid = USERS[attempt.user][2] if self.rng.random() < 0.9 else 0  # the user, or root
        return f"CANCELLED by {uid}"

    def _infra_failure(self, job: _Job, attempt: _Attempt, failure, overhead: float) -> tuple[float, _Job | None]:
        p, rng = self.p, self.rng
        t_fail, node, index = failure
        cause = CAUSES[self.fail_causes[node][index]][0]
        kind = (
            "NODE_FAIL"
            if cause == "node_unresponsive"
            else str(rng.choice(["NODE_FAIL", "FAILED", "REQUEUED"], p=[0.4, 0.45, 0.15]))
        )
        # The job notices within seconds (NODE_FAIL) or a few minutes (the application crashes).
        end = t_fail + (float(rng.uniform(0.5, 1.5)) if kind == "NODE_FAIL" else float(rng.uniform(0.2, 5.0))) / 60
        outside = kind == "FAILED" and rng.random() < p.outside_window_share
        if outside:  # the application hung before dying: the evidence is older than the window
            end = t_fail + float(rng.uniform(p.attr_before_min + 3, p.attr_before_min + 20)) / 60
        self._emit_failure_signals(node, index, kind)
        attempt.state = kind
        attempt.exit_code = "0:0" if kind != "FAILED" else str(rng.choice(["1:0", "0:6", "134:0"]))
        attempt.failed_node = self.node_names[node] if kind == "NODE_FAIL" else ""
        window_sees_it = cause != "node_unresponsive" and not outside
        self.failures.append(
            {
                "job_id": attempt.job_id,
                "job_id_raw": str(attempt.job_id_raw),
                "submit": _fmt(self._ts(attempt.submit)),
                "end": _fmt(self._ts(end)),
                "state": kind,
                "cause": cause,
                "node": self.node_names[node],
                "failure_at": _fmt(self._ts(t_fail)),
                "gpus": attempt.gpus,
                "nodes": len(attempt.nodes),
                "in_attribution_window": window_sees_it,
                # what the attribution rule of domain.md must find: NODE_FAIL always, FAILED/REQUEUED with evidence
                "expected_attributed": kind == "NODE_FAIL" or window_sees_it,
                "expected_cause": cause
                if (window_sees_it or (cause == "node_unresponsive" and kind == "NODE_FAIL"))
                else ("unattributed_node_failure" if kind == "NODE_FAIL" else None),
            }
        )
        runtime = end - attempt.start
        if job.run_id:
            remaining = job.work - self._saved_work(max(runtime - overhead, 0.0))
            if kind == "FAILED" or (kind == "NODE_FAIL" and rng.random() < 0.5):
                return end, self._resubmit(job, end, remaining)
            return end, self._requeue(job, end, remaining)
        if kind == "REQUEUED" or (kind == "NODE_FAIL" and rng.random() < 0.5):
            return end, self._requeue(job, end, job.work)
        return end, None

    def _saved_work(self, progress: float) -> float:
        """Work kept by checkpoints after `progress` hours of training."""
        interval = self.p.ckpt_interval_min / 60
        return math.floor(progress / interval) * interval

    def _requeue(self, job: _Job, at: float, remaining: float) -> _Job:
        """Slurm requeues the same job id: a new record with a later Submit."""
        return _Job(
            submit=at,
            seq=0,
            gpus=job.gpus,
            work=remaining,
            job_id=job.job_id,
            job_id_raw=job.job_id_raw,
            name=job.name,
            user=job.user,
            run_id=job.run_id,
            restarts=job.restarts + 1,
            is_restart=job.run_id is not None,
            outcome=0 if job.run_id or OUTCOMES[job.outcome] == "REQUEUED" else job.outcome,
            fraction=job.fraction,
        )

    def _resubmit(self, job: _Job, at: float, remaining: float) -> _Job:
        """The training run's launcher submits a new job (new id, same name) to continue."""
        raw = self._new_raw_id()
        delay = float(self.rng.uniform(*self.p.resubmit_delay_min)) / 60
        return _Job(
            submit=at + delay,
            seq=0,
            gpus=job.gpus,
            work=remaining,
            job_id=str(raw),
            job_id_raw=raw,
            name=job.name,
            user=job.user,
            run_id=job.run_id,
            is_restart=True,
        )

    def _account_run(self, job: _Job, attempt: _Attempt, overhead: float) -> None:
        run = self.runs[job.run_id]
        if attempt.job_id not in run["job_ids"]:
            run["job_ids"].append(attempt.job_id)
        run["attempts"] += 1
        end = attempt.end if attempt.end is not None else self.horizon
        runtime = max(end - attempt.start, 0.0)
        run["runtime_seconds"] += round(runtime * 3600)
        run["queue_seconds"] += round((attempt.start - attempt.eligible) * 3600)
        progress = max(runtime - overhead, 0.0)
        kept = progress if attempt.state in ("COMPLETED", "RUNNING") else self._saved_work(progress)
        run["productive_seconds"] += round(kept * 3600)
        run["completed"] = attempt.state == "COMPLETED"

    # --- health signals ------------------------------------------------------------------------
    def _emit_failure_signals(self, node: int, index: int, kind: str) -> None:
        """Write what failure `index` of `node` leaves in the logs; `kind` is how its job ended (or DRAIN if idle)."""
        rng = self.rng
        t_fail = self.fail_times[node][index]
        cause, _, xid, reason, nhc = CAUSES[self.fail_causes[node][index]]
        self._consumed.add((node, index))
        name = self.node_names[node]
        gpu = int(rng.integers(8))
        critical_at = []  # every signal of this failure that the taxonomy calls critical
        if xid is not None:
            self._xid(t_fail, node, xid, gpu)
            critical_at.append(t_fail)
            if rng.random() < 0.5:  # sympathetic Xid 45 (or 43) on another GPU of the job
                self._xid(t_fail + 2 / 3600, node, 45 if rng.random() < 0.8 else 43, (gpu + 1) % 8, prev=xid)
        if nhc is not None:
            critical_at.append(t_fail + float(rng.uniform(0, 60)) / 3600)
            self._nhc(critical_at[-1], name, nhc.format(gpu=gpu))
        if cause in DCGM_INCIDENTS:
            system, message = DCGM_INCIDENTS[cause]
            critical_at.append(t_fail + float(rng.uniform(0, 60)) / 3600)
            report = dcgm_health_json({gpu: [(system, "Failure", message.format(gpu=gpu))]})
            self.dcgm_checks.append((critical_at[-1], name, report))
        repair_end = t_fail + self.fail_repair[node][index]
        if cause == "node_unresponsive":
            critical_at.append(t_fail + 30 / 3600)
            self._event(name, critical_at[-1], repair_end, "DOWN*", "Not responding")
        else:
            state = "DOWN" if kind == "NODE_FAIL" else "DRAIN"
            critical_at.append(t_fail + float(rng.uniform(0, 2)) / 60)
            self._event(name, critical_at[-1], repair_end, state, reason.format(gpu=gpu))
        self.critical_evidence.setdefault(node, []).extend((t, cause) for t in critical_at)

    def _noise(self) -> None:
        """Signals that end no job: failures of idle nodes, watch-only Xids, admin drains, duplicated lines."""
        p, rng = self.p, self.rng
        for node in range(p.nodes):
            for index in range(len(self.fail_times[node])):
                if (node, index) not in self._consumed:
                    self._emit_failure_signals(node, index, "DRAIN")
        for _ in range(max(1, int(p.nodes * p.watch_xids_per_node))):
            node = int(rng.integers(p.nodes))
            self._xid(float(rng.uniform(0, self.horizon)), node, int(rng.choice([63, 92])), int(rng.integers(8)))
        for _ in range(max(1, p.nodes // 50)):
            node = int(rng.integers(p.nodes))
            t = float(rng.uniform(0, self.horizon))
            self._event(
                self.node_names[node],
                t,
                t + float(rng.uniform(0.5, 4)),
                "DRAIN",
                str(rng.choice(["Reboot ASAP", "scheduled maintenance: BIOS update"])),
            )
        for _ in range(max(1, p.nodes // 10)):  # routine health checks that find nothing, and warnings
            node = self.node_names[int(rng.integers(p.nodes))]
            t = float(rng.uniform(0, self.horizon))
            incidents = (
                {}
                if rng.random() < 0.8
                else {
                    int(rng.integers(8)): [
                        ("Thermal system", "Warning", "GPU 2 has a temperature of 86 C, above the slowdown threshold")
                    ]
                }
            )
            self.dcgm_checks.append((t, node, dcgm_health_json(incidents)))
        for _ in range(min(len(self.xid_lines), max(1, p.nodes // 100))):  # syslog relays duplicate lines
            self.xid_lines.append(self.xid_lines[int(rng.integers(len(self.xid_lines)))])

    def _xid(self, hours: float, node: int, xid: int, gpu: int, prev: int | None = None) -> None:
        ts = (self.t0 + timedelta(hours=hours)).isoformat(timespec="microseconds")
        text = XID_TEXT[xid].format(gpu=gpu, prev=prev)
        pid = int(self.rng.integers(1000, 99999))
        line = f"{ts} {self.node_names[node]} kernel: NVRM: Xid (PCI:{PCI_IDS[gpu]}): {xid}, pid={pid}, name=python, {text}"
        self.xid_lines.append((hours, line))

    def _nhc(self, hours: float, node: str, check: str) -> None:
        ts = (self.t0 + timedelta(hours=hours)).isoformat(timespec="seconds")
        self.nhc_lines.append(
            (
                hours,
                f"{ts} {node} nhc[{int(self.rng.integers(1000, 99999))}]: ERROR:  nhc:  Health check failed:  {check}",
            )
        )

    def _event(self, node: str, start: float, end: float, state: str, reason: str) -> None:
        end_text = _fmt(self._ts(end)) if end < self.horizon else "Unknown"
        duration = round((min(end, self.horizon) - start) * 3600)
        raw = {"DOWN": "1", "DOWN*": "2049", "DRAIN": "514"}[state]
        gpn = self.p.gpus_per_node
        tres = f"billing={gpn * 12},cpu={gpn * 12},gres/gpu:h100={gpn},gres/gpu={gpn},mem=2000G"
        self.events.append(
            (
                start,
                f"{self.p.cluster}||{_elapsed(duration)}|{end_text}|Node|2|{node}|{reason}|"
                f"{_fmt(self._ts(start))}|{state}|{raw}|{tres}|root(0)",
            )
        )

    # --- output --------------------------------------------------------------------------------
    def _ts(self, hours: float) -> datetime:
        return self.t0 + timedelta(seconds=int(hours * 3600))

    def _format_many(self, hours: list[float | None]) -> list[str]:
        """Vectorised `_fmt(self._ts(h))`, with "Unknown" for None."""
        values = np.array([-1.0 if h is None else h for h in hours])
        seconds = (values * 3600).astype(np.int64)
        base = np.datetime64(self.t0.replace(tzinfo=None), "s")
        text = np.datetime_as_string(base + seconds.astype("timedelta64[s]"), unit="s").tolist()
        return [("Unknown" if v < 0 else t) for v, t in zip(values.tolist(), text, strict=True)]

    def _keep(self, attempt: _Attempt) -> None:
        self.attempts.append(attempt)

    def _in_dump(self) -> list[_Attempt]:
        """Attempts the month's sacct window shows: those that had not ended before the month."""
        return [a for a in self.attempts if a.end is None or a.end >= self.month_start_h]

    def _sacct_line(self, a: _Attempt, submit: str, eligible: str, start: str, end: str) -> str:
        gpn = self.p.gpus_per_node
        n_nodes = max(1, math.ceil(a.gpus / gpn))
        cpus = a.gpus * 12
        req = f"billing={cpus},cpu={cpus},gres/gpu={a.gpus},mem={a.gpus * 120}G,node={n_nodes}"
        if a.nodes and not a.no_alloc:
            alloc = (
                f"billing={cpus},cpu={cpus},gres/gpu:h100={a.gpus},gres/gpu={a.gpus},mem={a.gpus * 120}G,node={n_nodes}"
            )
            node_list = fold_hostlist(self.p.node_prefix, [n + 1 for n in a.nodes], self.width)
        else:
            alloc, node_list = "", "None assigned"
        if a.start is None:
            elapsed = 0
        else:
            elapsed = int((a.end if a.end is not None else self.horizon) * 3600) - int(a.start * 3600)
        user, account, _ = USERS[a.user]
        fields = [
            a.job_id,
            str(a.job_id_raw),
            a.name,
            user,
            account,
            "shared" if a.gpus < gpn else "gpu",  # sub-node jobs run in their own partition
            "high" if a.gpus >= PREEMPTOR_MIN_GPUS else "normal",
            a.state,
            a.exit_code,
            submit,
            eligible,
            start,
            end,
            _elapsed(elapsed),
            str(n_nodes),
            node_list,
            alloc,
            req,
            a.reason,
            "0:0",
        ]
        if self.p.slurm_version == "24.11":
            fields += [str(a.restarts), a.failed_node or "None"]
        return "|".join(fields)

    def write(self, out_dir: Path) -> None:
        header = SACCT_FIELDS_2411 if self.p.slurm_version == "24.11" else SACCT_FIELDS_2205
        # sacct lists jobs by id; records of requeued jobs follow at the end of the output.
        shown = self._in_dump()
        first = sorted((a for a in shown if not a.requeued), key=lambda a: (a.job_id_raw, a.submit))
        later = sorted((a for a in shown if a.requeued), key=lambda a: (a.submit, a.job_id_raw))
        ordered = first + later
        times = [
            self._format_many([getattr(a, key) for a in ordered]) for key in ("submit", "eligible", "start", "end")
        ]
        with open(out_dir / "sacct.psv", "w") as out:
            out.write(header + "\n")
            out.writelines(self._sacct_line(a, *row) + "\n" for a, *row in zip(ordered, *times, strict=True))
        p = self.p
        gpus = p.nodes * p.gpus_per_node
        cluster_row = (
            f"{p.cluster}|{fold_hostlist(p.node_prefix, list(range(1, p.nodes + 1)), self.width)}|"
            f"{_elapsed(round(self.horizon * 3600))}|Unknown|Cluster|1||Cluster Registered TRES|{_fmt(self.t0)}||0|"
            f"billing={gpus * 12},cpu={gpus * 12},gres/gpu:h100={gpus},gres/gpu={gpus},mem={p.nodes * 2000}G,"
            f"node={p.nodes}|"
        )
        in_window = [line for t, line in sorted(self.events) if self.month_start_h <= t < self.horizon]
        (out_dir / "events.psv").write_text("\n".join([EVENTS_HEADER, cluster_row, *in_window]) + "\n")
        for name, lines in (("xid.log", self.xid_lines), ("nhc.log", self.nhc_lines)):
            kept = [line for t, line in sorted(lines) if self.month_start_h <= t < self.horizon]
            (out_dir / name).write_text("".join(line + "\n" for line in kept))
        # One file per check, as a job epilog saves `dcgmi health -c -j` on each node.
        (out_dir / "dcgm").mkdir(exist_ok=True)
        for t, node, report in self.dcgm_checks:
            if self.month_start_h <= t < self.horizon:
                path = out_dir / "dcgm" / node / f"{self._ts(t).strftime('%Y%m%dT%H%M%SZ')}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(report, indent=3, sort_keys=True, separators=(",", " : ")) + "\n")

    def truth(self) -> dict:
        p = self.p
        month_start, month_end = self.month_start_h, self.horizon
        label_of = {int(g): label for g in SIZE_CHOICES for lo, hi, label in SIZE_BUCKETS if lo <= g <= hi}
        per_bucket: dict[str, dict] = {}
        node_days = {"paper": 0.0, "all": 0.0}
        for a in self._in_dump():
            if a.start is None or a.no_alloc:
                continue
            lo, hi = max(a.start, month_start), min(a.end if a.end is not None else month_end, month_end)
            hours = max(hi - lo, 0.0)
            bucket = per_bucket.setdefault(
                label_of[a.gpus],
                {"runtime_hours": 0.0, "node_days": 0.0, "infra_failures": 0, "expected_attributed": 0},
            )
            bucket["runtime_hours"] += hours
            bucket["node_days"] += hours * len(a.nodes) / 24
            node_days["all"] += hours * len(a.nodes) / 24
            if a.gpus > p.paper_min_gpus:
                node_days["paper"] += hours * len(a.nodes) / 24
        in_month = [f for f in self.failures if month_start <= self._hours(f["end"]) < month_end]
        # The window rule also attributes attempts no failure ended: a user failure that ends just before
        # (or after) a node failure on a node it shares. Predict them so tests can demand exact agreement.
        failed_keys = {(f["job_id_raw"], f["submit"]) for f in self.failures}
        before, after = p.attr_before_min / 60, p.attr_after_min / 60
        evidence = {n: sorted(signals) for n, signals in self.critical_evidence.items()}
        window_false_positives = []
        for a in self._in_dump():
            if a.state not in ("FAILED", "REQUEUED") or a.end is None or not month_start <= a.end < month_end:
                continue
            key = (str(a.job_id_raw), _fmt(self._ts(a.submit)))
            if key in failed_keys:
                continue
            end = int(a.end * 3600) / 3600  # sacct's End is in whole seconds
            for n in a.nodes:
                signals = evidence.get(n, [])
                i = bisect.bisect_left(signals, (end - before, ""))
                if i < len(signals) and signals[i][0] <= end + after:
                    window_false_positives.append(
                        {
                            "job_id_raw": key[0],
                            "submit": key[1],
                            "state": a.state,
                            "node": self.node_names[n],
                            "gpus": a.gpus,
                            "cause": signals[i][1],
                        }
                    )
                    break
        for f in in_month:
            per_bucket[label_of[f["gpus"]]]["infra_failures"] += 1
            per_bucket[label_of[f["gpus"]]]["expected_attributed"] += int(f["expected_attributed"])
        counted = {
            "all": sum(f["expected_attributed"] for f in in_month),
            "paper": sum(f["expected_attributed"] for f in in_month if f["gpus"] > p.paper_min_gpus),
        }
        fleet_node_days = p.nodes * (month_end - month_start) / 24
        node_failures_in_month = sum(
            1 for n in range(p.nodes) for t in self.fail_times[n] if month_start <= t < month_end
        )
        params = asdict(p)
        params["month"] = str(p.month)
        return {
            "cluster": p.cluster,
            "month": str(p.month),
            "parameters": params,
            "fleet": {
                "node_days": fleet_node_days,
                "expected_node_failures": float(self.node_factor.sum()) * p.r_f / 1000 * (month_end - month_start) / 24,
                "node_failures": node_failures_in_month,
            },
            "lemon_nodes": [self.node_names[n] for n in self.lemons],
            "node_rate_factor": {self.node_names[n]: round(float(f), 4) for n, f in enumerate(self.node_factor)},
            "r_f_per_1000_node_days": {
                k: {
                    "failures": counted[k],
                    "node_days": node_days[k],
                    "value": counted[k] * 1000 / node_days[k] if node_days[k] else None,
                }
                for k in ("paper", "all")
            },
            "size_buckets": per_bucket,
            "infra_failures": in_month,
            "window_false_positives": window_false_positives,
            "training_runs": list(self.runs.values()),
            "preemptions": [p for p in self.preemptions if month_start <= self._hours(p["preempted_at"]) < month_end],
        }

    def _hours(self, text: str) -> float:
        return (datetime.fromisoformat(text).replace(tzinfo=UTC) - self.t0).total_seconds() / 3600


def dcgm_health_json(incidents: dict[int, list[tuple[str, str, str]]]) -> dict:
    """`dcgmi health -c -j` output for {gpu: [(system, health, message)]} (layout of dcgmi's Health.cpp)."""
    rank = {"Healthy": 0, "Warning": 1, "Failure": 2}
    overall = "Healthy"
    gpus = {}
    for gpu, found in sorted(incidents.items()):
        errors = {}
        entity = "Healthy"
        for system, health, message in found:
            errors[system] = {"value": health, "overflow": _dcgm_overflow(message)}
            entity = max(entity, health, key=rank.get)
        gpus[str(gpu)] = {"value": entity, "children": {"Errors": {"children": errors}}}
        overall = max(overall, entity, key=rank.get)
    body: dict = {"Overall Health": {"value": overall}}
    if gpus:
        body["GPU"] = {"children": gpus}
    return {"header": ["Health Monitor Report"], "body": body}


def _dcgm_overflow(message: str) -> list[str]:
    """dcgmi breaks a message into lines of at most 54 characters at word boundaries."""
    lines, current = [], ""
    for word in message.split():
        if current and len(current) + 1 + len(word) > MAX_SIZE_OF_HEALTH_INFO:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    return [*lines, current] if current else lines


def _fmt(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _elapsed(seconds: int) -> str:
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{days}-" if days else "") + f"{hours:02d}:{minutes:02d}:{secs:02d}"
