"""Node faults, drawn or replayed from a trace, and the health signals each leaves in the logs."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from simulator.catalog import CAUSE_NAMES, CAUSE_SHARES, CAUSES, DCGM_INCIDENTS
from simulator.params import Clock, SimParams
from simulator.repairs import MAINTENANCE_REASONS
from simulator.writers.dcgm_health import dcgm_health_json

TRACE_HEADER = ("node", "failed_at", "repaired_at", "category")
# The category a `dcgmi health` failure of each health system names (Xid 79's GPU off the bus is a
# PCIe-system failure to DCGM)
DCGM_SYSTEM_CATEGORY = {
    "Memory system": "gpu_memory",
    "NVLINK system": "gpu_nvlink",
    "PCIe system": "pcie",
    "Driver": "gpu_driver_firmware",
}
MINUTE = 60


@dataclass
class NodeFaults:
    """Every fault of every node: per node, fault times (sorted), cause indices and repair ends."""

    times: list[list[int]]
    causes: list[list[int]]
    repaired: list[list[int]]
    factor: np.ndarray  # each node's failure-rate factor (mean 1 over healthy nodes)
    lemons: list[int]
    replayed: bool = False

    def down_until(self, node: int, t: int) -> int:
        """If `node` is under repair at `t`, when it is back; else `t`."""
        moved = True
        while moved:
            moved = False
            for fail, back in zip(self.times[node], self.repaired[node], strict=True):
                if fail <= t < back:
                    t, moved = back, True
        return t

    def first_in(self, nodes: tuple[int, ...], start: int, end: int) -> tuple[int, int, int] | None:
        """The earliest fault (time, node, index) on `nodes` in (start, end)."""
        best = None
        for n in nodes:
            for i, t in enumerate(self.times[n]):
                if start < t < end and (best is None or t < best[0]):
                    best = (t, n, i)
                    break
                if t >= end:
                    break
        return best


def draw_faults(params: SimParams, rng: np.random.Generator, horizon: int) -> NodeFaults:
    """Per-node Poisson faults at r_f x a gamma node factor (lemon nodes at lemon_factor)."""
    p = params
    factor = rng.gamma(p.node_rate_shape, 1 / p.node_rate_shape, p.nodes)
    n_lemons = int(round(p.nodes * p.lemon_fraction))
    lemons = sorted(rng.choice(p.nodes, n_lemons, replace=False).tolist()) if n_lemons else []
    factor[lemons] = p.lemon_factor
    counts = rng.poisson(p.r_f / 1000 / 86400 * factor * horizon)
    times, causes, repaired = [], [], []
    for n in range(p.nodes):
        t = np.sort(rng.integers(0, horizon, counts[n])).tolist()
        times.append(t)
        causes.append(rng.choice(len(CAUSES), counts[n], p=CAUSE_SHARES).tolist())
        repair = (rng.uniform(*p.repair_hours, counts[n]) * 3600).astype(np.int64).tolist()
        repaired.append([a + b for a, b in zip(t, repair, strict=True)])
    return NodeFaults(times, causes, repaired, factor, lemons)


def read_fault_trace(path: Path, node_names: list[str], clock: Clock) -> NodeFaults:
    """A fault trace (CSV: node,failed_at,repaired_at,category; ISO-8601 UTC) as NodeFaults.

    Times are cut to whole seconds. A fault repaired when it failed (zero-length, or within the same
    second) is replayed as such; its node event is then TimeEnd = TimeStart. Raises ValueError naming
    the file, line and field of anything the simulated cluster cannot replay (a repaired_at before
    its failed_at among them, however little before).
    """
    index = {name: i for i, name in enumerate(node_names)}
    per_node: list[list[tuple[int, int, int]]] = [[] for _ in node_names]
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != TRACE_HEADER:
            raise ValueError(f"{path}: line 1: header must be {','.join(TRACE_HEADER)}, got {header}")
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != 4:
                raise ValueError(f"{path}: line {line}: expected 4 fields, got {len(row)}")
            node, failed_at, repaired_at, category = (v.strip() for v in row)
            if node not in index:
                raise ValueError(f"{path}: line {line}: node: {node!r} is not a node of the simulated cluster")
            failed_time = _trace_time(path, line, "failed_at", failed_at)
            repaired_time = _trace_time(path, line, "repaired_at", repaired_at)
            if repaired_time < failed_time:  # compared before the whole seconds, which could make them equal
                raise ValueError(f"{path}: line {line}: repaired_at: {repaired_at} is before failed_at {failed_at}")
            # a zero-length fault (or one within a second) is legitimate: it stays zero-length
            failed, back = clock.seconds(failed_time), clock.seconds(repaired_time)
            if category not in CAUSE_NAMES:
                raise ValueError(f"{path}: line {line}: category: {category!r} is not one of {', '.join(CAUSE_NAMES)}")
            per_node[index[node]].append((failed, back, CAUSE_NAMES.index(category)))
    for faults in per_node:
        faults.sort()
    return NodeFaults(
        times=[[f[0] for f in faults] for faults in per_node],
        causes=[[f[2] for f in faults] for faults in per_node],
        repaired=[[f[1] for f in faults] for faults in per_node],
        factor=np.ones(len(node_names)),
        lemons=[],
        replayed=True,
    )


def _trace_time(path: Path, line: int, name: str, text: str) -> datetime:
    try:
        ts = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{path}: line {line}: {name}: {text!r} is not an ISO-8601 time") from None
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


@dataclass
class SignalLog:
    """The health signals of the whole history, in simulated seconds; the writers format them."""

    xids: list[tuple[int, int, int, int, int, int]] = field(default_factory=list)  # t, node, xid, gpu, prev, pid
    nhc: list[tuple[int, int, str, int]] = field(default_factory=list)  # t, node, check, pid
    events: list[tuple[int, int, int, str, str]] = field(default_factory=list)  # start, end, node, state, reason
    dcgm: list[tuple[int, int, dict]] = field(default_factory=list)  # t, node, `dcgmi health -c -j` output
    critical: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # node -> (t, cause)


def emit_fault_signals(
    log: SignalLog, rng: np.random.Generator, faults: NodeFaults, node: int, index: int, kind: str
) -> None:
    """What fault `index` of `node` leaves in the logs; `kind` is how its job ended (DRAIN if none ran)."""
    t_fail = faults.times[node][index]
    repair_end = faults.repaired[node][index]
    cause, _, xid, reason, nhc = CAUSES[faults.causes[node][index]]
    gpu = int(rng.integers(8))
    critical_at = []  # every signal of this fault that the taxonomy calls critical
    dcgm_at = -1  # ... of which DCGM's names its health system's category, not the fault's
    if xid is not None:
        log.xids.append((t_fail, node, xid, gpu, 0, int(rng.integers(1000, 99999))))
        critical_at.append(t_fail)
        if rng.random() < 0.5:  # sympathetic Xid 45 (or 43) on another GPU of the job
            sympathetic = 45 if rng.random() < 0.8 else 43
            log.xids.append((t_fail + 2, node, sympathetic, (gpu + 1) % 8, xid, int(rng.integers(1000, 99999))))
    if nhc is not None:
        critical_at.append(t_fail + int(rng.integers(0, 60)))
        log.nhc.append((critical_at[-1], node, nhc.format(gpu=gpu), int(rng.integers(1000, 99999))))
    if cause in DCGM_INCIDENTS:
        system, message = DCGM_INCIDENTS[cause]
        critical_at.append(t_fail + int(rng.integers(0, 60)))
        dcgm_at = len(critical_at) - 1
        log.dcgm.append(
            (critical_at[-1], node, dcgm_health_json({gpu: [(system, "Failure", message.format(gpu=gpu))]}))
        )
    # The node event starts when Slurm notices (30 s for an unresponsive node, up to 2 min for a drain)
    # but never after the repair: a fault shorter than that (a trace's zero-length or sub-second one)
    # leaves the shortest event sacctmgr prints, TimeEnd = TimeStart at the repair.
    if cause == "node_unresponsive":
        critical_at.append(min(t_fail + 30, repair_end))
        log.events.append((critical_at[-1], repair_end, node, "DOWN*", "Not responding"))
    else:
        critical_at.append(min(t_fail + int(rng.integers(0, 2 * MINUTE)), repair_end))
        state = "DOWN" if kind == "NODE_FAIL" else "DRAIN"
        log.events.append((critical_at[-1], repair_end, node, state, reason.format(gpu=gpu)))
    labels = [
        DCGM_SYSTEM_CATEGORY[DCGM_INCIDENTS[cause][0]] if i == dcgm_at else cause for i in range(len(critical_at))
    ]
    log.critical.setdefault(node, []).extend(zip(critical_at, labels, strict=True))


def emit_noise(
    log: SignalLog, rng: np.random.Generator, params: SimParams, faults: NodeFaults, consumed: set, horizon: int
) -> None:
    """Signals that end no job: faults of idle nodes, watch-only Xids, admin drains, duplicated lines."""
    p = params
    for node in range(p.nodes):
        for index in range(len(faults.times[node])):
            if (node, index) not in consumed:
                emit_fault_signals(log, rng, faults, node, index, "DRAIN")
    months = horizon / (30 * 86400)
    count = max(1, int(p.nodes * p.watch_xids_per_node * months))
    watch = zip(
        rng.integers(horizon, size=count).tolist(),
        rng.integers(p.nodes, size=count).tolist(),
        rng.choice([63, 92], size=count).tolist(),
        rng.integers(8, size=count).tolist(),
        rng.integers(1000, 99999, size=count).tolist(),
        strict=True,
    )
    log.xids.extend((t, node, xid, gpu, 0, pid) for t, node, xid, gpu, pid in watch)
    for _ in range(max(1, int(p.nodes // 50 * months))):
        t = int(rng.integers(horizon))
        reason = str(rng.choice(MAINTENANCE_REASONS))
        log.events.append((t, t + int(rng.uniform(0.5, 4) * 3600), int(rng.integers(p.nodes)), "DRAIN", reason))
    for _ in range(max(1, int(p.nodes // 10 * months))):  # routine health checks that find nothing, and warnings
        node, t = int(rng.integers(p.nodes)), int(rng.integers(horizon))
        warning = ("Thermal system", "Warning", "GPU 2 has a temperature of 86 C, above the slowdown threshold")
        incidents = {} if rng.random() < 0.8 else {int(rng.integers(8)): [warning]}
        log.dcgm.append((t, node, dcgm_health_json(incidents)))
    for _ in range(min(len(log.xids), max(1, int(p.nodes // 100 * months)))):  # syslog relays duplicate lines
        log.xids.append(log.xids[int(rng.integers(len(log.xids)))])
