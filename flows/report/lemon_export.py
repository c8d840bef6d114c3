"""The month's lemon-node candidates (its own window's and the trailing window's: `listed`, of its
typed document) as files a Slurm admin can use, beside metrics.json.

- `lemon_nodes.hostlist`: the candidates as one Slurm host list, folded (gpu[001-003,017]), for
  `sbatch --exclude=$(cat lemon_nodes.hostlist)`; empty when there is none.
- `drain_lemon_nodes.sh`: one `scontrol update nodename=... state=drain reason=...` per candidate,
  its reason the rules and evidence, quoted for the shell. The tool writes it and never runs it:
  it is not executable, and an admin reviews it and runs it with `sh`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet

from flows.figures.document import MonthDocument
from flows.figures.figure_types import LemonCandidate, LemonNodes

HOSTLIST = "lemon_nodes.hostlist"
DRAIN_SCRIPT = "drain_lemon_nodes.sh"


@dataclass(frozen=True)
class Listed:
    """A node the month lists: a candidate, with the trailing window's days when only that window found it."""

    candidate: LemonCandidate
    window_days: int | None = None


def listed(lemon_nodes: LemonNodes) -> list[Listed]:
    """The nodes the month lists, as the summary lists them (flows/figures/summary.py
    listed_candidates, on the figures before they are validated): the candidates of its own window,
    then those only the trailing window finds."""
    result = [Listed(c) for c in lemon_nodes.candidates]
    seen = {c.node for c in lemon_nodes.candidates}
    if trailing := lemon_nodes.trailing:
        result += [Listed(c, trailing.window_days) for c in trailing.candidates if c.node not in seen]
    return result


def lemon_hostlist(lemon_nodes: LemonNodes) -> str:
    """The candidates as one folded Slurm host list ('' when there is none). Folded with no group
    resolver: ClusterShell's default one runs a shell for a name that starts with '@'."""
    return str(NodeSet.fromlist([n.candidate.node for n in listed(lemon_nodes)], resolver=RESOLVER_NOGROUP))


def drain_reason(node: Listed, month: str) -> str:
    """Slurm's drain reason for a listed node: the month, its rules and their evidence."""
    candidate = node.candidate
    rules = " and ".join(rule.replace("_", " ") for rule in candidate.rules)
    window = f" over {node.window_days} days" if node.window_days is not None else ""
    failures = len(candidate.failures)
    return (
        f"lemon candidate {month}{window}: {rules} (p={candidate.p_value:.2g}); "
        f"{failures} infra failure{'' if failures == 1 else 's'}, "
        f"{candidate.incident_hours} incident hours"
    )


def drain_script(lemon_nodes: LemonNodes, month: str) -> str:
    """A POSIX sh script that drains every candidate; every argument is shell-quoted."""
    trailing = lemon_nodes.trailing
    lines = [
        "#!/bin/sh",
        f"# Lemon-node candidates of {month}, window {lemon_nodes.window_start} to {lemon_nodes.window_end}"
        + (f" and the trailing window from {trailing.window_start}," if trailing is not None else ","),
        '# written by cluster-reliability-report (docs/methodology.md, "Lemon nodes"). Review, then run:',
        f"#   sh {DRAIN_SCRIPT}",
        "set -eu",
    ]
    nodes = listed(lemon_nodes)
    for node in nodes:
        name, reason = shlex.quote(node.candidate.node), shlex.quote(drain_reason(node, month))
        lines.append(f"scontrol update nodename={name} state=drain reason={reason}")
    if lemon_nodes.not_measured:  # "no candidate" would claim the fleet was looked at
        lines.append(f"# lemon nodes not measured: {lemon_nodes.not_measured}")
    elif not nodes:
        lines.append("# no candidate this month")
    return "\n".join(lines) + "\n"


def write_lemon_exports(report_dir: Path, document: MonthDocument) -> dict[str, Path]:
    """Write the host list and the drain script into `report_dir` (mode 0644: never executable)."""
    paths = {"lemon_hostlist": report_dir / HOSTLIST, "lemon_drain_script": report_dir / DRAIN_SCRIPT}
    paths["lemon_hostlist"].write_text(lemon_hostlist(document.lemon_nodes) + "\n")
    paths["lemon_drain_script"].write_text(drain_script(document.lemon_nodes, document.month))
    for path in paths.values():
        path.chmod(0o644)
    return paths
