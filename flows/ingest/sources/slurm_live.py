"""Pull a month straight from Slurm: `sacct`, `sacctmgr` and `scontrol` run locally or through a prefix (ssh ...).

Both run with TZ=UTC and an explicit window [month start, next month start): sacctmgr's default
window is only since yesterday. sacct uses the 0x1f delimiter so a `|` in a job name cannot break
a row, and asks for `FailedNode` (23.02+), `Restarts` (24.11+) and `SLUID` (25.11+) when the version
has them. The output is
written to a file that the file readers then read, so the raw pull is kept like any other input.

A command that fails transiently (see `is_transient`) is retried with exponential back-off, as
often as its source's `attempts` says; any other failure stops the pull at once.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from flows.core.escape import escaped_logger, printable, printable_lines
from flows.core.months import Month
from flows.core.retry import with_backoff
from flows.ingest.sources.sacct import NEWER_FIELDS, OPTIONAL_FIELDS, REQUIRED_FIELDS

EVENT_FIELDS = "Cluster,ClusterNodes,Duration,End,Event,EventRaw,NodeName,Reason,Start,State,StateRaw,TRES,User"
COMMAND_TIMEOUT_S = 900
STDERR_LINES, STDERR_CHARS = 5, 1000  # the end of a failed command's stderr, in its error
SSH_ERROR = 255  # ssh's own exit status: no connection, lost connection (the remote command's is passed on)
# Slurm's client errors when slurmctld / slurmdbd cannot be reached for a moment (exit 1, like a usage error)
TRANSIENT_STDERR = re.compile(
    r"connection refused|connection reset|timed out|unable to contact|"
    r"temporarily unavailable|try again|slurm_persist_conn_open|network is unreachable",
    re.IGNORECASE,
)
log = escaped_logger(__name__)


@dataclass(frozen=True)
class Retry:
    """How often a command is tried in all, and the first wait between tries (it doubles)."""

    attempts: int = 1
    wait_seconds: float = 0.0


class SlurmCommandError(RuntimeError):
    pass


class CommandFailed(SlurmCommandError):
    """A command exited non-zero (`status`) or did not answer in time (`status` None); the message
    names the command, the status, stderr's last lines and, after retries, how many attempts failed."""

    def __init__(self, command: list[str], status: int | None, stderr: str, attempts: int = 1):
        gave_up = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
        if status is None:
            message = f"{shown(command)}: no answer in {COMMAND_TIMEOUT_S} s{gave_up}"
        else:
            message = f"{shown(command)} exited {status}{gave_up}: {printable_lines(stderr)}"
        super().__init__(message)
        self.command, self.status, self.stderr = command, status, stderr

    @property
    def transient(self) -> bool:
        return is_transient(self.status, self.stderr)


def is_transient(status: int | None, stderr: str) -> bool:
    """Whether a failure is worth retrying: no answer in time (status None), ssh's own error (exit
    255: refused, unreachable, dropped), or a Slurm client that could not reach its daemons. Anything
    else (an invalid option, an unknown user or cluster) fails the same way again."""
    return status is None or status == SSH_ERROR or bool(TRANSIENT_STDERR.search(stderr))


def shown(command: list[str]) -> str:
    """A command line for logs and errors, control characters (sacct's 0x1f delimiter) escaped."""
    return printable(shlex.join(command))


def _run_once(command: list[str]) -> bytes:
    env = {**os.environ, "TZ": "UTC"}  # Slurm prints and parses times in the local zone of the process
    try:
        done = subprocess.run(command, env=env, capture_output=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise SlurmCommandError(f"{command[0]}: command not found") from None
    except subprocess.TimeoutExpired:
        raise CommandFailed(command, None, "") from None
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        raise CommandFailed(command, done.returncode, "\n".join(lines[-STDERR_LINES:])[-STDERR_CHARS:])
    return done.stdout


def _run(command: list[str], retry: Retry) -> bytes:
    """The command's output. A transient failure is tried again after `retry.wait_seconds`, then
    twice that, ... (at most 10 min), `retry.attempts` times in all; each retry logs
    a warning."""

    def describe(error: BaseException) -> str:
        what = "no answer in time" if error.status is None else f"exit {error.status}: {error.stderr}"
        return what.replace("\n", " / ")

    retrying = with_backoff(
        shown(command),
        retry.attempts,
        retry.wait_seconds,
        lambda exc: isinstance(exc, CommandFailed) and exc.transient,
        describe,
        log,
    )
    try:
        return retrying(_run_once, command)
    except CommandFailed as exc:
        if exc.transient and retry.attempts > 1:  # every attempt failed: say so
            raise CommandFailed(command, exc.status, exc.stderr, retry.attempts) from None
        raise


def slurm_version(sacct: list[str], retry: Retry) -> tuple[int, int]:
    """(major, minor) from `sacct -V` ("slurm-wlm 22.05.8", "slurm 24.11.1")."""
    text = _run([*sacct, "-V"], retry).decode(errors="replace")
    match = re.search(r"(\d+)\.(\d+)", text)
    if not match:
        raise SlurmCommandError(f"{' '.join(sacct)} -V: no version in {text.strip()!r}")
    return int(match.group(1)), int(match.group(2))


def _window(month: Month) -> tuple[str, str]:
    return month.start.strftime("%Y-%m-%dT%H:%M:%S"), month.end.strftime("%Y-%m-%dT%H:%M:%S")


def pull_sacct(sacct: list[str], month: Month, out: Path, retry: Retry) -> Path:
    version = slurm_version(sacct, retry)
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
            ],
            retry,
        )
    )
    return out


def pull_node_events(sacctmgr: list[str], month: Month, out: Path, retry: Retry) -> Path:
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
            ],
            retry,
        )
    )
    return out


def pull_node_states(scontrol: list[str], month: Month, out: Path, retry: Retry) -> Path:
    """A snapshot of every node's state and reason now (`scontrol show node -o`); `month` is not
    needed: the reasons carry their own times."""
    out.write_bytes(_run([*scontrol, "show", "node", "-o"], retry))
    return out
