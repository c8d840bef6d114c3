"""Job records as `sacct --allusers --duplicates --allocations --parsable2` prints them at a dump time.

Slurm 22.05's field set, or 24.11's with `Restarts` and `FailedNode`; both with `AdminComment`,
where the simulated site marks requeues made by a user or an admin (`requeue=user` / `requeue=admin`).
Records of requeued jobs (the same JobIDRaw with a later Submit) follow the first records at the end,
as `sacct -D` prints them.
"""

from __future__ import annotations

import math
from itertools import islice
from operator import attrgetter
from pathlib import Path

import numpy as np

from simulator.catalog import USERS
from simulator.cpu_partition import MEM_PER_CORE_G
from simulator.hostlist import fold_hostlist
from simulator.params import Clock, SimParams
from simulator.records import HIGH_QOS_MIN_GPUS, Attempt

SACCT_FIELDS_2205 = (
    "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|State|ExitCode|Submit|Eligible|Start|End|Elapsed|"
    "NNodes|NodeList|AllocTRES|ReqTRES|Reason|DerivedExitCode|AdminComment"
)
SACCT_FIELDS_2411 = SACCT_FIELDS_2205 + "|Restarts|FailedNode"


def sacct_order(attempts: list[Attempt]) -> list[Attempt]:
    """First records by job id, then the requeue records by submit time."""
    return [attempts[i] for i in _sacct_order(attempts).tolist()]


def _sacct_order(attempts: list[Attempt]) -> np.ndarray:
    """`sacct_order` as positions in `attempts` (stable sorts, as `sorted`)."""
    n = len(attempts)
    raw = np.fromiter(map(attrgetter("job_id_raw"), attempts), np.int64, n)
    submit = np.fromiter(map(attrgetter("submit"), attempts), np.int64, n)
    requeued = np.fromiter(map(attrgetter("restarts"), attempts), np.int64, n) != 0
    first, later = np.flatnonzero(~requeued), np.flatnonzero(requeued)
    first = first[np.lexsort((submit[first], raw[first]))]
    later = later[np.lexsort((raw[later], submit[later]))]
    return np.concatenate([first, later])


def write_sacct(
    path: Path, attempts: list[Attempt], params: SimParams, node_names: list[str], clock: Clock, as_of: int
) -> None:
    """The records of `attempts` as they were at `as_of`: one not started yet is PENDING (Start
    Unknown), one not ended yet is RUNNING (End Unknown, Elapsed up to `as_of`)."""
    ordered = sacct_order(attempts)
    n = len(ordered)

    def column(name: str) -> np.ndarray:
        return np.fromiter(map(attrgetter(name), ordered), np.int64, n)

    start, end = column("start"), column("end")
    pending = start >= as_of
    running = ~pending & (end >= as_of)

    def texts(values: np.ndarray, unknown: np.ndarray | None = None) -> list[str]:
        out = clock.texts(values if unknown is None else np.where(unknown, 0, values))
        if unknown is not None:
            for i in np.flatnonzero(unknown).tolist():
                out[i] = "Unknown"
        return out

    submit_at, eligible_at = column("submit"), column("eligible")
    submit = texts(submit_at)
    eligible = list(submit)  # the same time for all but requeues (eligible after a BeginTime)
    later = np.flatnonzero(eligible_at != submit_at)
    for i, text in zip(later.tolist(), texts(eligible_at[later]), strict=True):
        eligible[i] = text
    start_text = texts(start, pending)
    end_text = texts(end, pending | running)
    elapsed = elapsed_texts(np.where(pending, 0, np.where(running, as_of, end) - start))
    header = SACCT_FIELDS_2411 if params.slurm_version == "24.11" else SACCT_FIELDS_2205
    line = _Line(params, node_names)
    states = [a.state for a in ordered]
    for i in np.flatnonzero(pending).tolist():
        states[i] = "PENDING"
    for i in np.flatnonzero(running).tolist():
        states[i] = "RUNNING"
    rows = zip(ordered, states, submit, eligible, start_text, end_text, elapsed, strict=True)
    with open(path, "w") as out:
        out.write(header + "\n")
        chunk = 50_000
        for _ in range(0, n, chunk):
            out.write("".join([line(*row) for row in islice(rows, chunk)]))


_TWO_DIGITS = [f"{i:02d}" for i in range(100)]


def elapsed_texts(seconds: np.ndarray) -> list[str]:
    """Vectorised `elapsed_text`: Slurm's [D-]HH:MM:SS."""
    days, rest = np.divmod(seconds.astype(np.int64), 86400)
    hours, rest = np.divmod(rest, 3600)
    minutes, secs = np.divmod(rest, 60)
    two = _TWO_DIGITS
    out = [
        f"{two[h]}:{two[m]}:{two[s]}" for h, m, s in zip(hours.tolist(), minutes.tolist(), secs.tolist(), strict=True)
    ]
    for i in np.flatnonzero(days).tolist():
        out[i] = f"{int(days[i])}-{out[i]}"
    return out


class _Line:
    """Formats one sacct record (with its line end)."""

    def __init__(self, params: SimParams, node_names: list[str]):
        self.params = params
        self.node_names = node_names
        self.width = len(node_names[0]) - len(params.node_prefix)
        self.new_fields = params.slurm_version == "24.11"
        self.tres: dict[int, tuple[str, str, str, str]] = {}
        self.users = [f"{user}|{account}" for user, account, _ in USERS]

    def _tres(self, gpus: int) -> tuple[str, str, str, str]:
        """(Partition|QOS, NNodes, AllocTRES, ReqTRES) of a job of `gpus` GPUs."""
        if gpus not in self.tres:
            gpn = self.params.gpus_per_node
            n_nodes = max(1, math.ceil(gpus / gpn))
            cpus = gpus * 12
            self.tres[gpus] = (
                # sub-node jobs run in their own partition
                f"{'shared' if gpus < gpn else 'gpu'}|{'high' if gpus >= HIGH_QOS_MIN_GPUS else 'normal'}",
                str(n_nodes),
                f"billing={cpus},cpu={cpus},gres/gpu:h100={gpus},gres/gpu={gpus},mem={gpus * 120}G,node={n_nodes}",
                f"billing={cpus},cpu={cpus},gres/gpu={gpus},mem={gpus * 120}G,node={n_nodes}",
            )
        return self.tres[gpus]

    def _cpu_tres(self, cpus: int) -> tuple[str, str, str, str]:
        """A CPU-only job's: partition `cpu`, one node, no gres/gpu in its TRES (as sacct writes them)."""
        if -cpus not in self.tres:
            tres = f"billing={cpus},cpu={cpus},mem={cpus * MEM_PER_CORE_G}G,node=1"
            self.tres[-cpus] = ("cpu|normal", "1", tres, tres)
        return self.tres[-cpus]

    def __call__(self, a: Attempt, state: str, submit: str, eligible: str, start: str, end: str, elapsed: str) -> str:
        tres = self.tres.get(a.gpus) or self._tres(a.gpus) if a.gpus else self._cpu_tres(a.cpus)
        partition_qos, n_nodes, alloc, req = tres
        if state != "PENDING" and not a.no_alloc:
            if len(a.nodes) == 1:
                node_list = self.node_names[a.nodes[0]]
            else:
                node_list = fold_hostlist(self.params.node_prefix, [n + 1 for n in a.nodes], self.width)
        else:
            alloc, node_list = "", "None assigned"
        ended = state != "PENDING" and state != "RUNNING"
        reason = a.reason if state != "PENDING" or a.restarts else "Resources"
        if self.new_fields:
            failed = self.node_names[a.failed_node] if ended and a.failed_node >= 0 else "None"
            more = f"|{a.restarts}|{failed}\n"
        else:
            more = "\n"
        return (
            f"{a.job_id}|{a.job_id_raw}|{a.name}|{self.users[a.user]}|{partition_qos}|{state}|"
            f"{a.exit_code if ended else '0:0'}|{submit}|{eligible}|{start}|{end}|{elapsed}|"
            f"{n_nodes}|{node_list}|{alloc}|{req}|{reason}|0:0|{a.admin_comment if ended else ''}{more}"
        )
