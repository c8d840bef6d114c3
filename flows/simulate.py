"""A first cluster simulator: one month of Slurm and node-health logs in the real formats.

Writes `sacct.psv` (as `sacct --allusers --duplicates --allocations --parsable2` prints it),
`events.psv` (as `sacctmgr -P show event` prints it), `xid.log` (kernel lines as rsyslog writes
them) and `truth.json` (the injected infrastructure failures: the oracle for tests).

Jobs are placed on GPU slots (no two jobs share a GPU), so a node failure ends exactly the jobs
running on that node. Failures arrive per node as a Poisson process with rate `r_f` per node-day.
"""

from __future__ import annotations

import heapq
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from ClusterShell.NodeSet import NodeSet

from flows.months import Month

SACCT_HEADER = (
    "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|State|ExitCode|Submit|Eligible|Start|End|Elapsed|"
    "NNodes|NodeList|AllocTRES|ReqTRES|Reason|DerivedExitCode"
)
EVENTS_HEADER = (
    "Cluster|Cluster Nodes|Duration|TimeEnd|Event|EventRaw|NodeName|Reason|TimeStart|State|StateRaw|TRES|User"
)

# GPUs per job and their probabilities (shaped like the paper's RSC-1: many 1-GPU jobs, few huge ones).
SIZE_CHOICES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096])
# With the durations below: ~45% of jobs on 1 GPU, >90% below a node, ~3/4 of GPU-hours in 256+ GPU jobs.
SIZE_WEIGHTS = np.array([0.45, 0.20, 0.26, 0.06, 0.012, 0.008, 0.005, 0.003, 0.0015, 0.0008, 0.0004, 0.00015, 0.00005])
# Outcome mix of attempts not hit by a node failure (paper Fig. 3, CANCELLED takes the rest).
OUTCOMES = {
    "COMPLETED": 0.60,
    "FAILED": 0.24,
    "PREEMPTED": 0.10,
    "REQUEUED": 0.02,
    "TIMEOUT": 0.006,
    "OUT_OF_MEMORY": 0.001,
    "CANCELLED": 0.033,
}
# Infrastructure failure causes: (category, share, xid or None, drain reason).
CAUSES = [
    ("gpu_memory", 0.22, 48, "NHC: check_nv_ecc: uncorrectable ECC errors on GPU {gpu}"),
    ("gpu_unavailable", 0.15, 79, "xid 79 gpu fell off bus"),
    ("infiniband_link", 0.18, None, "NHC: check_hw_ib: mlx5_{gpu} port 1 link down"),
    ("filesystem_mount", 0.15, None, "NHC: check_fs_mount: /checkpoint not mounted"),
    ("gpu_nvlink", 0.10, 74, "NHC: check_nvlink: NVLink errors on GPU {gpu}"),
    ("gpu_driver_firmware", 0.08, 119, "NHC: GSP RPC timeout on GPU {gpu}"),
    ("pcie", 0.07, None, "NHC: check_pcie: PCIe link width degraded on GPU {gpu}"),
    ("node_unresponsive", 0.05, None, "Not responding"),
]
XID_TEXT = {
    13: "Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Illegal Instruction Parameter",
    31: "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_12000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    45: "Ch 00000010 caused by previous Xid {prev}",
    48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0.",
    63: "Row Remapper: New row (0x0000000000012345) was marked for remapping, reset gpu to activate.",
    74: "NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
    79: "GPU has fallen off the bus.",
    92: "High single-bit ECC error rate detected on GPU.",
    119: "Timeout after 45s of waiting for RPC response from GPU{gpu} GSP! Expected function 76 (GSP_RM_CONTROL) sequence 4128 (0x20803039 0xb0).",
}
PCI_IDS = [
    "0000:18:00",
    "0000:2a:00",
    "0000:3a:00",
    "0000:5d:00",
    "0000:9a:00",
    "0000:ab:00",
    "0000:ba:00",
    "0000:db:00",
]
USERS = [("alice", "vision"), ("bob", "llm"), ("carol", "llm"), ("dave", "speech"), ("erin", "rl"), ("frank", "vision")]
REPAIR_HOURS = (2.0, 48.0)


@dataclass(order=True)
class _Submission:
    submit: float  # hours since window start
    seq: int
    gpus: int = field(compare=False)
    duration: float = field(compare=False)  # planned runtime, hours
    job_id: int = field(compare=False)
    user: tuple[str, str] = field(compare=False)
    name: str = field(compare=False)
    requeue_of: int | None = field(default=None, compare=False)


@dataclass
class SimParams:
    cluster: str
    month: Month
    nodes: int
    seed: int
    gpus_per_node: int = 8
    r_f: float = 6.5  # failures per 1000 node-days
    utilization: float = 0.8
    warmup_days: float = 3.0
    node_prefix: str = "gpu"


def simulate(params: SimParams, out_dir: Path) -> dict:
    """Simulate one month and write its logs to `out_dir`; returns the ground-truth summary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(params.seed)
    sim = _Simulation(params, rng)
    sim.run()
    (out_dir / "sacct.psv").write_text(sim.sacct_text())
    (out_dir / "events.psv").write_text(sim.events_text())
    (out_dir / "xid.log").write_text(sim.xid_text())
    truth = sim.truth()
    (out_dir / "truth.json").write_text(json.dumps(truth, indent=1))
    return truth


class _Simulation:
    def __init__(self, p: SimParams, rng: np.random.Generator):
        self.p, self.rng = p, rng
        self.t0 = p.month.start - timedelta(days=p.warmup_days)
        self.horizon = (p.month.end - self.t0).total_seconds() / 3600
        width = len(str(p.nodes)) if p.nodes >= 1000 else 4
        self.node_names = [f"{p.node_prefix}{i:0{width}d}" for i in range(1, p.nodes + 1)]
        self.gpu_free = np.zeros((p.nodes, p.gpus_per_node))  # hours when each GPU is next free
        self.node_failures = self._draw_node_failures()
        self.records: list[dict] = []
        self.requeue_records: list[dict] = []
        self.events: list[tuple[float, str]] = []  # (hour, events.psv line)
        self.xid_lines: list[tuple[float, str]] = []
        self.injected: list[dict] = []

    # --- the processes ---------------------------------------------------------------------
    def _draw_node_failures(self) -> list[list[tuple[float, str]]]:
        rate_per_hour = self.p.r_f / 1000 / 24
        shares = np.array([c[1] for c in CAUSES])
        failures = []
        for _ in range(self.p.nodes):
            times, t = [], 0.0
            while True:
                t += self.rng.exponential(1 / rate_per_hour)
                if t >= self.horizon:
                    break
                times.append((t, CAUSES[self.rng.choice(len(CAUSES), p=shares / shares.sum())][0]))
            failures.append(times)
        return failures

    def _submissions(self) -> list[_Submission]:
        max_gpus = self.p.nodes * self.p.gpus_per_node
        allowed = SIZE_CHOICES <= max_gpus // 2 if max_gpus >= 16 else SIZE_CHOICES <= max_gpus
        sizes, weights = SIZE_CHOICES[allowed], SIZE_WEIGHTS[allowed] / SIZE_WEIGHTS[allowed].sum()
        budget = self.p.utilization * max_gpus * self.horizon
        subs, used, seq = [], 0.0, 0
        while used < budget:
            gpus = int(self.rng.choice(sizes, p=weights))
            # Most jobs are short experiments; large training jobs run for hours to days (7-day limit).
            median = 0.1 if gpus < 8 else (0.75 if gpus <= 64 else 6.0)
            duration = float(np.clip(self.rng.lognormal(math.log(median), 1.6), 1 / 60, 7 * 24))
            user = USERS[self.rng.integers(len(USERS))]
            seq += 1
            subs.append(
                _Submission(
                    submit=float(self.rng.uniform(0, self.horizon)),
                    seq=seq,
                    gpus=gpus,
                    duration=duration,
                    job_id=0,
                    user=user,
                    name=f"{user[1]}_{'train' if gpus >= 8 else 'exp'}_{seq % 97}",
                )
            )
            used += gpus * duration
        subs.sort()
        for job_id, sub in enumerate(subs, start=1000):
            sub.job_id = job_id
        return subs

    def run(self) -> None:
        queue = self._submissions()
        heapq.heapify(queue)
        seq = len(queue)
        while queue:
            sub = heapq.heappop(queue)
            requeue = self._place(sub)
            if requeue is not None:
                seq += 1
                heapq.heappush(
                    queue,
                    _Submission(
                        submit=requeue,
                        seq=seq,
                        gpus=sub.gpus,
                        duration=sub.duration,
                        job_id=sub.job_id,
                        user=sub.user,
                        name=sub.name,
                        requeue_of=sub.job_id,
                    ),
                )
        self._noise()

    def _place(self, sub: _Submission) -> float | None:
        """Allocate GPUs, decide the attempt's fate, write its record; return a requeue time if any."""
        p, rng = self.p, self.rng
        eligible = sub.submit + (rng.uniform(0.01, 0.05) if sub.requeue_of else 0.0)
        if sub.gpus < p.gpus_per_node:
            ready = np.sort(self.gpu_free, axis=1)[:, sub.gpus - 1]
            node_idx = [int(np.argmin(ready))]
            start = max(eligible, float(ready[node_idx[0]]))
            gpu_idx = {node_idx[0]: np.argsort(self.gpu_free[node_idx[0]])[: sub.gpus]}
        else:
            k = sub.gpus // p.gpus_per_node
            ready = self.gpu_free.max(axis=1)
            node_idx = sorted(int(i) for i in np.argpartition(ready, k - 1)[:k])
            start = max(eligible, float(ready[node_idx].max()))
            gpu_idx = {i: np.arange(p.gpus_per_node) for i in node_idx}
        month_end = self.horizon
        if start >= month_end:  # still pending when the month was dumped
            self._record(sub, "PENDING", eligible, None, None, [], "0:0", reason="Resources")
            return None

        planned_end = start + sub.duration
        failure = min(
            ((t, cause, i) for i in node_idx for t, cause in self.node_failures[i] if start < t < planned_end),
            default=None,
        )
        requeue_at = None
        if failure is not None:
            t_fail, cause, failed_node = failure
            end, state, exit_code, requeue_at = self._infra_failure(sub, start, t_fail, cause, failed_node)
        else:
            end, state, exit_code = self._normal_outcome(sub, start)
            if state == "REQUEUED":
                requeue_at = end
        for i, gpus in gpu_idx.items():
            release = end
            if failure is not None and i == failure[2]:
                release = end + rng.uniform(*REPAIR_HOURS)  # the failed node is out for repair
            self.gpu_free[i, gpus] = release
        if state.startswith("CANCELLED") and rng.random() < 0.3:  # cancelled while pending: no nodes
            self._record(sub, "CANCELLED by 1001", eligible, start, start, [], "0:0", no_alloc=True)
            self.gpu_free[list(gpu_idx)] = np.minimum(self.gpu_free[list(gpu_idx)], start)
            return None
        open_attempt = end >= month_end
        self._record(
            sub,
            "RUNNING" if open_attempt else state,
            eligible,
            start,
            None if open_attempt else end,
            [self.node_names[i] for i in node_idx],
            "0:0" if open_attempt else exit_code,
        )
        return requeue_at if (requeue_at is not None and requeue_at < month_end) else None

    def _infra_failure(self, sub, start, t_fail, cause, node_i):
        rng, node = self.rng, self.node_names[node_i]
        xid = next(c[2] for c in CAUSES if c[0] == cause)
        reason = next(c[3] for c in CAUSES if c[0] == cause).format(gpu=int(rng.integers(8)))
        kind = rng.choice(["NODE_FAIL", "FAILED", "REQUEUED"], p=[0.4, 0.4, 0.2])
        if cause == "node_unresponsive":
            kind = "NODE_FAIL"
        end = t_fail + (rng.uniform(0.0, 5.0) / 60 if kind != "NODE_FAIL" else rng.uniform(0.5, 1.5) / 60)
        if xid is not None:
            gpu = int(rng.integers(8))
            self._xid(t_fail, node, xid, gpu)
            if rng.random() < 0.5:  # sympathetic Xid 45 on the other GPUs of the job
                self._xid(t_fail + 2 / 3600, node, 45, (gpu + 1) % 8, prev=xid)
        state_word = "DOWN*" if cause == "node_unresponsive" else ("DOWN" if kind == "NODE_FAIL" else "DRAIN")
        event_at = t_fail + (30 / 3600 if cause == "node_unresponsive" else rng.uniform(0, 2) / 60)
        self._event(node, event_at, event_at + rng.uniform(*REPAIR_HOURS), state_word, reason)
        exit_code = "0:0" if kind != "FAILED" else rng.choice(["1:0", "0:6", "134:0"])
        requeue_at = end if kind == "REQUEUED" or (kind == "NODE_FAIL" and rng.random() < 0.5) else None
        self.injected.append(
            {
                "job_id": sub.job_id,
                "submit": _fmt(self._ts(sub.submit)),
                "node": node,
                "state": kind,
                "cause": cause,
                "failure_at": _fmt(self._ts(t_fail)),
                "end": _fmt(self._ts(end)),
                "gpus": sub.gpus,
            }
        )
        return end, kind, exit_code, requeue_at

    def _normal_outcome(self, sub, start):
        rng = self.rng
        state = rng.choice(list(OUTCOMES), p=np.array(list(OUTCOMES.values())) / sum(OUTCOMES.values()))
        runtime = sub.duration
        exit_code = "0:0"
        if state == "FAILED":
            runtime *= rng.uniform(0.01, 1.0)
            exit_code = rng.choice(["1:0", "2:0", "0:9", "0:11", "127:0"])
        elif state == "PREEMPTED":
            runtime = max(2.0, runtime * rng.uniform(0.2, 1.0))  # preemptible only after 2 h
        elif state in ("REQUEUED", "CANCELLED", "OUT_OF_MEMORY"):
            runtime *= rng.uniform(0.05, 1.0)
            exit_code = "0:125" if state == "OUT_OF_MEMORY" else "0:0"
        elif state == "TIMEOUT":
            runtime = math.ceil(runtime)
        if state == "CANCELLED":
            state = f"CANCELLED by {1000 + int(rng.integers(len(USERS)))}"
        return start + runtime, str(state), exit_code

    def _noise(self) -> None:
        """Signals that cause nothing: user-app Xids, watch-only ECC Xids, admin drains; and idle-node failures."""
        rng, p = self.rng, self.p
        for _ in range(max(1, p.nodes // 4)):
            node = self.node_names[rng.integers(p.nodes)]
            self._xid(rng.uniform(0, self.horizon), node, int(rng.choice([13, 31, 63, 92])), int(rng.integers(8)))
        for _ in range(max(1, p.nodes // 50)):
            node = self.node_names[rng.integers(p.nodes)]
            t = rng.uniform(0, self.horizon)
            self._event(
                node,
                t,
                t + rng.uniform(0.5, 4),
                "DRAIN",
                rng.choice(["Reboot ASAP", "scheduled maintenance: BIOS update"]),
            )

    # --- output ------------------------------------------------------------------------------
    def _ts(self, hours: float) -> datetime:
        return (self.t0 + timedelta(hours=hours)).replace(microsecond=0)

    def _record(self, sub, state, eligible, start, end, nodes, exit_code, reason="None", no_alloc=False) -> None:
        p = self.p
        n_nodes = max(1, math.ceil(sub.gpus / p.gpus_per_node))
        cpus = sub.gpus * 12
        alloc = (
            ""
            if (not nodes or no_alloc)
            else (
                f"billing={cpus},cpu={cpus},gres/gpu:h100={sub.gpus},gres/gpu={sub.gpus},mem={sub.gpus * 120}G,node={n_nodes}"
            )
        )
        req = f"billing={cpus},cpu={cpus},gres/gpu={sub.gpus},mem={sub.gpus * 120}G,node={n_nodes}"
        month_end = self.horizon
        if start is None:
            elapsed = 0
        else:
            elapsed = round(((end if end is not None else month_end) - start) * 3600)
        reason = "BeginTime" if sub.requeue_of else reason
        fields = [
            str(sub.job_id),
            str(sub.job_id),
            sub.name,
            sub.user[0],
            sub.user[1],
            "gpu",
            "normal",
            state,
            exit_code,
            _fmt(self._ts(sub.submit)),
            _fmt(self._ts(eligible)),
            _fmt(self._ts(start)) if start is not None else "Unknown",
            _fmt(self._ts(end)) if end is not None else "Unknown",
            _elapsed(elapsed),
            str(n_nodes),
            str(NodeSet.fromlist(nodes)) if nodes else "None assigned",
            alloc,
            req,
            reason,
            "0:0",
        ]
        if end is not None and end < self.warmup_hours:
            return  # ended before the month: not in the month's sacct window
        (self.requeue_records if sub.requeue_of else self.records).append({"line": "|".join(fields), "job": sub.job_id})

    @property
    def warmup_hours(self) -> float:
        return self.p.warmup_days * 24

    def _xid(self, hours: float, node: str, xid: int, gpu: int, prev: int | None = None) -> None:
        ts = (self.t0 + timedelta(hours=hours)).isoformat(timespec="microseconds")
        text = XID_TEXT[xid].format(gpu=gpu, prev=prev)
        pid = int(self.rng.integers(1000, 99999))
        self.xid_lines.append(
            (hours, f"{ts} {node} kernel: NVRM: Xid (PCI:{PCI_IDS[gpu]}): {xid}, pid={pid}, name=python, {text}")
        )

    def _event(self, node: str, start: float, end: float, state: str, reason: str) -> None:
        month_end = self.horizon
        end_text = _fmt(self._ts(end)) if end < month_end else "Unknown"
        duration = round(((min(end, month_end)) - start) * 3600)
        raw = {"DOWN": "1", "DOWN*": "2049", "DRAIN": "514"}[state]
        tres = f"billing={self.p.gpus_per_node * 12},cpu={self.p.gpus_per_node * 12},gres/gpu:h100={self.p.gpus_per_node},gres/gpu={self.p.gpus_per_node},mem=2000G"
        line = f"{self.p.cluster}||{_elapsed(duration)}|{end_text}|Node|2|{node}|{reason}|{_fmt(self._ts(start))}|{state}|{raw}|{tres}|root(0)"
        self.events.append((start, line))

    def sacct_text(self) -> str:
        first = sorted(self.records, key=lambda r: r["job"])
        return "\n".join([SACCT_HEADER] + [r["line"] for r in first + self.requeue_records]) + "\n"

    def events_text(self) -> str:
        p = self.p
        gpus = p.nodes * p.gpus_per_node
        cluster_row = (
            f"{p.cluster}|{NodeSet.fromlist(self.node_names)}|{_elapsed(round(self.horizon * 3600))}|Unknown|Cluster|1||"
            f"Cluster Registered TRES|{_fmt(self.t0)}||0|billing={gpus * 12},cpu={gpus * 12},gres/gpu:h100={gpus},"
            f"gres/gpu={gpus},mem={p.nodes * 2000}G,node={p.nodes}|"
        )
        window = [(t, line) for t, line in self.events if t >= self.warmup_hours]
        return "\n".join([EVENTS_HEADER, cluster_row] + [line for _, line in sorted(window)]) + "\n"

    def xid_text(self) -> str:
        return "\n".join(line for t, line in sorted(self.xid_lines) if t >= self.warmup_hours) + "\n"

    def truth(self) -> dict:
        month_start, month_end = self.p.month.start, self.p.month.end
        in_month = [f for f in self.injected if month_start <= _parse(f["end"]) < month_end]
        return {
            "cluster": self.p.cluster,
            "month": str(self.p.month),
            "nodes": self.p.nodes,
            "seed": self.p.seed,
            "gpus_per_node": self.p.gpus_per_node,
            "r_f_per_1000_node_days": self.p.r_f,
            "infra_failures": in_month,
        }


def _fmt(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _elapsed(seconds: int) -> str:
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{days}-" if days else "") + f"{hours:02d}:{minutes:02d}:{secs:02d}"
