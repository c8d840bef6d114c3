"""Pull a month straight from Slurm: `sacct`, `sacctmgr` and `scontrol` run locally or through a prefix (ssh ...).

Both run with TZ=UTC and an explicit window [month start, next month start): sacctmgr's default
window is only since yesterday. sacct uses the 0x1f delimiter so a `|` in a job name cannot break
a row, and asks for `FailedNode` (23.02+), `Restarts` (24.11+) and `SLUID` (25.11+) when the version
has them. The output is
written to a file that the file readers then read, so the raw pull is kept like any other input.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from flows.months import Month
from flows.sources.sacct import NEWER_FIELDS, OPTIONAL_FIELDS, REQUIRED_FIELDS

EVENT_FIELDS = "Cluster,ClusterNodes,Duration,End,Event,EventRaw,NodeName,Reason,Start,State,StateRaw,TRES,User"
COMMAND_TIMEOUT_S = 900


class SlurmCommandError(RuntimeError):
    pass


def _run(command: list[str]) -> bytes:
    env = {**os.environ, "TZ": "UTC"}  # Slurm prints and parses times in the local zone of the process
    try:
        done = subprocess.run(command, env=env, capture_output=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise SlurmCommandError(f"{command[0]}: command not found") from None
    except subprocess.TimeoutExpired:
        raise SlurmCommandError(f"{' '.join(command)}: no answer in {COMMAND_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise SlurmCommandError(
            f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode(errors='replace').strip()[-500:]}"
        )
    return done.stdout


def slurm_version(sacct: list[str]) -> tuple[int, int]:
    """(major, minor) from `sacct -V` ("slurm-wlm 22.05.8", "slurm 24.11.1")."""
    text = _run([*sacct, "-V"]).decode(errors="replace")
    match = re.search(r"(\d+)\.(\d+)", text)
    if not match:
        raise SlurmCommandError(f"{' '.join(sacct)} -V: no version in {text.strip()!r}")
    return int(match.group(1)), int(match.group(2))


def _window(month: Month) -> tuple[str, str]:
    return month.start.strftime("%Y-%m-%dT%H:%M:%S"), month.end.strftime("%Y-%m-%dT%H:%M:%S")


def pull_sacct(sacct: list[str], month: Month, out: Path) -> Path:
    version = slurm_version(sacct)
    fields = [*REQUIRED_FIELDS, *OPTIONAL_FIELDS, *(f for f, since in NEWER_FIELDS.items() if version >= since)]
    start, end = _window(month)
    out.write_bytes(
        _run(
            [
                *sacct,
                "--allusers",
                "--duplicates",
                "--allocations",
                "--parsable2",
                "--delimiter=\x1f",
                "-S",
                start,
                "-E",
                end,
                "--format=" + ",".join(fields),
            ]
        )
    )
    return out


def pull_node_events(sacctmgr: list[str], month: Month, out: Path) -> Path:
    start, end = _window(month)
    out.write_bytes(
        _run(
            [
                *sacctmgr,
                "--parsable2",
                "show",
                "event",
                f"start={start}",
                f"end={end}",
                f"format={EVENT_FIELDS}",
            ]
        )
    )
    return out


def pull_node_states(scontrol: list[str], month: Month, out: Path) -> Path:
    """A snapshot of every node's state and reason now (`scontrol show node -o`); `month` is not
    needed: the reasons carry their own times."""
    out.write_bytes(_run([*scontrol, "show", "node", "-o"]))
    return out
