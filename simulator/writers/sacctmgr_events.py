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
    hosts, cpus, mem = fold_hostlist(p.node_prefix, list(range(1, p.nodes + 1)), width), gpus * 12, p.nodes * 2000
    if p.cpu_nodes:  # a mixed cluster's CPU-only nodes
        cpu_width = len(node_names[-1]) - len(p.cpu_node_prefix)
        hosts += "," + fold_hostlist(p.cpu_node_prefix, list(range(1, p.cpu_nodes + 1)), cpu_width)
        cpus, mem = cpus + p.cpu_nodes * p.cpus_per_node, mem + p.cpu_nodes * p.cpus_per_node * 4
    cluster_row = (
        f"{p.cluster}|{hosts}|"
        f"{elapsed_text(as_of)}|Unknown|Cluster|1||Cluster Registered TRES|{clock.text(0)}||0|"
        f"billing={cpus},cpu={cpus},gres/gpu:h100={gpus},gres/gpu={gpus},mem={mem}G,"
        f"node={p.nodes + p.cpu_nodes}|"
    )
    gpn = p.gpus_per_node
    tres = f"billing={gpn * 12},cpu={gpn * 12},gres/gpu:h100={gpn},gres/gpu={gpn},mem=2000G"
    cpu_tres = f"billing={p.cpus_per_node},cpu={p.cpus_per_node},mem={p.cpus_per_node * 4}G"
    rows = [EVENTS_HEADER, cluster_row]
    for start, end, node, state, reason in sorted(e for e in events if lo <= e[0] < as_of):
        end_text = clock.text(end) if end < as_of else "Unknown"
        node_tres = tres if node < p.nodes else cpu_tres
        rows.append(
            f"{p.cluster}||{elapsed_text(min(end, as_of) - start)}|{end_text}|Node|2|{node_names[node]}|{reason}|"
            f"{clock.text(start)}|{state}|{STATE_RAW[state]}|{node_tres}|root(0)"
        )
    path.write_text("\n".join(rows) + "\n")
