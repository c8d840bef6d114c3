"""The month's lemon-node candidates (its own window's and the trailing window's, flows/figures/lemons.py
listed_candidates) as files a Slurm admin can use, beside metrics.json.

- `lemon_nodes.hostlist`: the candidates as one Slurm host list, folded (gpu[001-003,017]), for
  `sbatch --exclude=$(cat lemon_nodes.hostlist)`; empty when there is none.
- `drain_lemon_nodes.sh`: one `scontrol update nodename=... state=drain reason=...` per candidate,
  its reason the rules and evidence, quoted for the shell. The tool writes it and never runs it:
  it is not executable, and an admin reviews it and runs it with `sh`.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet

from flows.figures.summary import listed_candidates

HOSTLIST = "lemon_nodes.hostlist"
DRAIN_SCRIPT = "drain_lemon_nodes.sh"


def lemon_hostlist(lemon_nodes: dict) -> str:
    """The candidates as one folded Slurm host list ('' when there is none). Folded with no group
    resolver: ClusterShell's default one runs a shell for a name that starts with '@'."""
    return str(NodeSet.fromlist([c["node"] for c in listed_candidates(lemon_nodes)], resolver=RESOLVER_NOGROUP))


def drain_reason(candidate: dict, month: str) -> str:
    """Slurm's drain reason for a candidate: the month, its rules and their evidence."""
    rules = " and ".join(rule.replace("_", " ") for rule in candidate["rules"])
    window = f" over {candidate['window_days']} days" if "window_days" in candidate else ""
    return (
        f"lemon candidate {month}{window}: {rules} (p={candidate['p_value']:.2g}); "
        f"{len(candidate['failures'])} infra failure{'' if len(candidate['failures']) == 1 else 's'}, "
        f"{candidate['incident_hours']} incident hours"
    )


def drain_script(lemon_nodes: dict, month: str) -> str:
    """A POSIX sh script that drains every candidate; every argument is shell-quoted."""
    lines = [
        "#!/bin/sh",
        f"# Lemon-node candidates of {month}, window {lemon_nodes['window_start']} to {lemon_nodes['window_end']}"
        + (
            f" and the trailing window from {lemon_nodes['trailing']['window_start']},"
            if "trailing" in lemon_nodes
            else ","
        ),
        '# written by cluster-reliability-report (docs/methodology.md, "Lemon nodes"). Review, then run:',
        f"#   sh {DRAIN_SCRIPT}",
        "set -eu",
    ]
    listed = listed_candidates(lemon_nodes)
    for candidate in listed:
        node, reason = shlex.quote(candidate["node"]), shlex.quote(drain_reason(candidate, month))
        lines.append(f"scontrol update nodename={node} state=drain reason={reason}")
    if lemon_nodes.get("not_measured"):  # "no candidate" would claim the fleet was looked at
        lines.append(f"# lemon nodes not measured: {lemon_nodes['not_measured']}")
    elif not listed:
        lines.append("# no candidate this month")
    return "\n".join(lines) + "\n"


def write_lemon_exports(report_dir: Path, metrics: dict) -> dict[str, Path]:
    """Write the host list and the drain script into `report_dir` (mode 0644: never executable)."""
    lemon_nodes, month = metrics["lemon_nodes"], metrics["month"]
    paths = {"lemon_hostlist": report_dir / HOSTLIST, "lemon_drain_script": report_dir / DRAIN_SCRIPT}
    paths["lemon_hostlist"].write_text(lemon_hostlist(lemon_nodes) + "\n")
    paths["lemon_drain_script"].write_text(drain_script(lemon_nodes, month))
    for path in paths.values():
        path.chmod(0o644)
    return paths
