"""Node events as `sacctmgr -P show event` prints them: the cluster's registration row, then DOWN / DOWN* / DRAIN."""

from __future__ import annotations

from pathlib import Path

from simulator.hostlist import fold_hostlist
from simulator.params import Clock, SimParams

EVENTS_HEADER = (
    "Cluster|Cluster Nodes|Duration|TimeEnd|Event|EventRaw|NodeName|Reason|TimeStart|State|StateRaw|TRES|User"
)
STATE_RAW = {"DOWN": "1", "DOWN*": "2049", "DRAIN": "514"}


def elapsed_text(seconds: int) -> str:
    """Slurm's [D-]HH:MM:SS."""
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{days}-" if days else "") + f"{hours:02d}:{minutes:02d}:{secs:02d}"


def write_events(
    path: Path,
    events: list[tuple[int, int, int, str, str]],
    params: SimParams,
    node_names: list[str],
    clock: Clock,
    lo: int,
    as_of: int,
) -> None:
    """Events that started in [lo, as_of); one not over at `as_of` has TimeEnd Unknown."""
    p = params
    gpus = p.nodes * p.gpus_per_node
    width = len(node_names[0]) - len(p.node_prefix)
    cluster_row = (
        f"{p.cluster}|{fold_hostlist(p.node_prefix, list(range(1, p.nodes + 1)), width)}|"
        f"{elapsed_text(as_of)}|Unknown|Cluster|1||Cluster Registered TRES|{clock.text(0)}||0|"
        f"billing={gpus * 12},cpu={gpus * 12},gres/gpu:h100={gpus},gres/gpu={gpus},mem={p.nodes * 2000}G,"
        f"node={p.nodes}|"
    )
    gpn = p.gpus_per_node
    tres = f"billing={gpn * 12},cpu={gpn * 12},gres/gpu:h100={gpn},gres/gpu={gpn},mem=2000G"
    rows = [EVENTS_HEADER, cluster_row]
    for start, end, node, state, reason in sorted(e for e in events if lo <= e[0] < as_of):
        end_text = clock.text(end) if end < as_of else "Unknown"
        rows.append(
            f"{p.cluster}||{elapsed_text(min(end, as_of) - start)}|{end_text}|Node|2|{node_names[node]}|{reason}|"
            f"{clock.text(start)}|{state}|{STATE_RAW[state]}|{tres}|root(0)"
        )
    path.write_text("\n".join(rows) + "\n")
