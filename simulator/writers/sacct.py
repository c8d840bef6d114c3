"""Job records as `sacct --allusers --duplicates --allocations --parsable2` prints them at a dump time.

Slurm 22.05's field set, or 24.11's with `Restarts` and `FailedNode`; both with `AdminComment`,
where the simulated site marks requeues made by a user or an admin (`requeue=user` / `requeue=admin`).
Records of requeued jobs (the same JobIDRaw with a later Submit) follow the first records at the end,
as `sacct -D` prints them.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from simulator.catalog import USERS
from simulator.hostlist import fold_hostlist
from simulator.params import Clock, SimParams
from simulator.records import HIGH_QOS_MIN_GPUS, Attempt
from simulator.writers.sacctmgr_events import elapsed_text

SACCT_FIELDS_2205 = (
    "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|State|ExitCode|Submit|Eligible|Start|End|Elapsed|"
    "NNodes|NodeList|AllocTRES|ReqTRES|Reason|DerivedExitCode|AdminComment"
)
SACCT_FIELDS_2411 = SACCT_FIELDS_2205 + "|Restarts|FailedNode"


def sacct_order(attempts: list[Attempt]) -> list[Attempt]:
    """First records by job id, then the requeue records by submit time."""
    first = sorted((a for a in attempts if not a.restarts), key=lambda a: (a.job_id_raw, a.submit))
    later = sorted((a for a in attempts if a.restarts), key=lambda a: (a.submit, a.job_id_raw))
    return first + later


def write_sacct(
    path: Path, attempts: list[Attempt], params: SimParams, node_names: list[str], clock: Clock, as_of: int
) -> None:
    """The records of `attempts` as they were at `as_of`: one not started yet is PENDING (Start
    Unknown), one not ended yet is RUNNING (End Unknown, Elapsed up to `as_of`)."""
    ordered = sacct_order(attempts)
    start = np.array([a.start for a in ordered], dtype=np.int64)
    end = np.array([a.end for a in ordered], dtype=np.int64)
    pending = start >= as_of
    running = ~pending & (end >= as_of)

    def texts(values: np.ndarray, unknown: np.ndarray) -> list[str]:
        out = clock.texts(np.where(unknown, 0, values))
        return [("Unknown" if u else t) for u, t in zip(unknown.tolist(), out, strict=True)]

    submit = texts(np.array([a.submit for a in ordered], dtype=np.int64), np.zeros(len(ordered), dtype=bool))
    eligible = texts(np.array([a.eligible for a in ordered], dtype=np.int64), np.zeros(len(ordered), dtype=bool))
    start_text = texts(start, pending)
    end_text = texts(end, pending | running)
    elapsed = np.where(pending, 0, np.where(running, as_of, end) - start).tolist()
    header = SACCT_FIELDS_2411 if params.slurm_version == "24.11" else SACCT_FIELDS_2205
    line = _Line(params, node_names)
    with open(path, "w") as out:
        out.write(header + "\n")
        for i, a in enumerate(ordered):
            state = "PENDING" if pending[i] else "RUNNING" if running[i] else a.state
            out.write(line(a, state, submit[i], eligible[i], start_text[i], end_text[i], elapsed[i]) + "\n")


class _Line:
    """Formats one sacct record."""

    def __init__(self, params: SimParams, node_names: list[str]):
        self.params = params
        self.node_names = node_names
        self.width = len(node_names[0]) - len(params.node_prefix)
        self.new_fields = params.slurm_version == "24.11"
        self.tres: dict[int, tuple[str, str, str, str, str]] = {}
        self.users = [(user, account) for user, account, _ in USERS]

    def _tres(self, gpus: int) -> tuple[str, str, str, str, str]:
        """(NNodes, AllocTRES, ReqTRES, Partition, QOS) of a job of `gpus` GPUs."""
        if gpus not in self.tres:
            gpn = self.params.gpus_per_node
            n_nodes = max(1, math.ceil(gpus / gpn))
            cpus = gpus * 12
            self.tres[gpus] = (
                str(n_nodes),
                f"billing={cpus},cpu={cpus},gres/gpu:h100={gpus},gres/gpu={gpus},mem={gpus * 120}G,node={n_nodes}",
                f"billing={cpus},cpu={cpus},gres/gpu={gpus},mem={gpus * 120}G,node={n_nodes}",
                "shared" if gpus < gpn else "gpu",  # sub-node jobs run in their own partition
                "high" if gpus >= HIGH_QOS_MIN_GPUS else "normal",
            )
        return self.tres[gpus]

    def __call__(self, a: Attempt, state: str, submit: str, eligible: str, start: str, end: str, elapsed: int) -> str:
        n_nodes, alloc, req, partition, qos = self._tres(a.gpus)
        if state != "PENDING" and not a.no_alloc:
            if len(a.nodes) == 1:
                node_list = self.node_names[a.nodes[0]]
            else:
                node_list = fold_hostlist(self.params.node_prefix, [n + 1 for n in a.nodes], self.width)
        else:
            alloc, node_list = "", "None assigned"
        ended = state != "PENDING" and state != "RUNNING"
        reason = a.reason if state != "PENDING" or a.restarts else "Resources"
        user, account = self.users[a.user]
        line = (
            f"{a.job_id}|{a.job_id_raw}|{a.name}|{user}|{account}|{partition}|{qos}|{state}|"
            f"{a.exit_code if ended else '0:0'}|{submit}|{eligible}|{start}|{end}|{elapsed_text(elapsed)}|"
            f"{n_nodes}|{node_list}|{alloc}|{req}|{reason}|0:0|{a.admin_comment if ended else ''}"
        )
        if self.new_fields:
            failed = self.node_names[a.failed_node] if ended and a.failed_node >= 0 else "None"
            line += f"|{a.restarts}|{failed}"
        return line
