"""What stops a config or a month's inputs from running, found before any work: each command
(and a deployment's run) asks here first, and the landing asks again of the inputs it reads.

A missing input, a header the reader rejects, a command not on PATH, a [paths] entry that cannot
be written, the Spark engine's packages: each named, with the file and the source's kind.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
from pathlib import Path

from flows.config.cluster import ClusterConfig
from flows.core.errors import ConfigError, MissingInputError
from flows.core.months import Month
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.files import open_text
from flows.ingest.sources.http_client import PullError
from flows.ingest.sources.registry import COMMAND_KINDS, DIRECTORY_KINDS, JOB_RECORD_KINDS, SOURCE_KINDS, URL_KINDS


def source_problems(config: ClusterConfig, month: Month) -> list[str]:
    """What stops `month` from landing before any work: missing files or directories, headers the readers
    reject, commands not on PATH, a missing CA file. Reads only the first line of each file."""
    problems = []
    for kind, path in config.source_paths(month).items():
        if problem := input_problem(path, kind in DIRECTORY_KINDS):
            problems.append(f"source {kind}: {problem}")
            continue
        try:
            if kind not in DIRECTORY_KINDS:
                _check_header(kind, path, config.timezone_of(kind))
        except InputFormatError as error:
            problems.append(f"source {kind}: {error}")
        except (OSError, EOFError) as error:  # unreadable, or a broken .gz
            problems.append(f"source {kind}: {path}: {error}")
    for live in config.live_sources(COMMAND_KINDS):
        if shutil.which(live.command[0]) is None:
            problems.append(f"source {live.kind}: command {live.command[0]!r} is not on PATH")
    if config.email is not None and config.email.smtp_ca_file and not Path(config.email.smtp_ca_file).is_file():
        problems.append(f"[email] smtp_ca_file {config.email.smtp_ca_file} does not exist")
    return problems


def server_probes(config: ClusterConfig, month: Month) -> tuple[list[str], list[str]]:
    """Ask each server source what it has for `month` (`check --month`, a few seconds each): what
    each said it has, and the problems (unreachable, credentials refused, a query rejected, nothing
    in the month), one line each."""
    found, problems = [], []
    for source in config.sources:
        if source.kind in URL_KINDS:
            try:
                found.append(SOURCE_KINDS[source.kind].probe(source.server, month))
            except PullError as error:
                problems.append(str(error))
    return found, problems


# The Spark engine's packages (requirements-spark.lock.txt), not installed by `make setup`
SPARK_MODULES = {"pyspark": "pyspark", "dbt.adapters.spark": "dbt-spark"}


def check_can_run(config: ClusterConfig) -> None:
    """A ConfigError naming each thing a run of `config` lacks, before any work: a [paths] entry it
    cannot write to (a file where a directory goes, or the reverse for the warehouse, or a file on
    the way to one), and the Spark engine's packages when [warehouse] engine is "spark". Touches nothing."""
    problems = []
    if config.warehouse.engine == "spark":
        missing = [package for module, package in SPARK_MODULES.items() if importlib.util.find_spec(module) is None]
        if missing:
            problems.append(
                f'[warehouse] engine = "spark" needs {" and ".join(missing)}, which this installation lacks: '
                "install the Spark extras (`make setup-spark` in a checkout, or "
                '`uv pip install -r requirements-spark.lock.txt`; Java 17 too), or set engine = "duckdb"'
            )
    for key, path, directory in (
        ("data", config.data_dir, True),
        ("reports", config.reports_dir, True),
        ("warehouse", config.warehouse_path, config.warehouse.engine == "spark"),  # Spark: its local directory
    ):
        existing = next(p for p in (path, *path.parents) if p.exists() or p.is_symlink())
        if existing == path and path.is_dir() != directory:
            kind = "directory" if path.is_dir() else "file"
            problems.append(f"[paths] {key}: {path} is a {kind}, not a {'directory' if directory else 'file'}")
        elif existing != path and not existing.is_dir():
            problems.append(f"[paths] {key}: {path} cannot be made: {existing} is not a directory")
    if problems:
        raise ConfigError("\n".join(f"{config.config_path}: {problem}" for problem in problems))


def input_problem(path: Path, directory: bool) -> str | None:
    """Why the input `path` cannot be read as a file (or a directory), or None: it does not exist,
    is a directory where a file is read (or the reverse), a symlink loop, unreadable, or (a
    directory) holds an entry that is no file or directory."""
    try:
        mode = path.stat().st_mode
        if directory and not stat.S_ISDIR(mode):
            return f"{path} is a file, not a directory"
        if not directory and stat.S_ISDIR(mode):
            return f"{path} is a directory, not a file"
        if not (directory or stat.S_ISREG(mode)):
            return f"{path} is not a regular file"  # a FIFO or device would block or never end
        os.close(os.open(path, os.O_RDONLY))  # a directory opens read-only too
        if directory:  # the readers and the raw copy would pass over an entry that is no file unseen
            unreadable = (entry for entry in path.rglob("*") if not (entry.is_dir() or entry.is_file()))
            if entry := next(unreadable, None):
                return input_problem(entry, directory=False)
    except FileNotFoundError:
        return (
            f"{path} is a broken symlink" if path.is_symlink() else f"{'directory ' * directory}{path} does not exist"
        )
    except PermissionError:
        return f"{path} cannot be read: permission denied"
    except OSError as error:  # a symlink loop (ELOOP), a path through a file (ENOTDIR), ...
        return f"{path}: {error.strerror}"
    return None


def _check_header(kind: str, path: Path, timezone: str) -> None:
    """The file opens and reads (a broken .gz fails here), then the format's own header check (its
    times in `timezone`, the source's)."""
    with open_text(path) as handle:
        handle.read(4096)
    SOURCE_KINDS[kind].check_header(path, timezone)


def missing_inputs(month: Month, sources: dict[str, Path]) -> None:
    """Stop before any work when an input is not there or cannot be read as configured
    (`input_problem`): the job records first (without them there is no month), then
    every other source with a problem, all in one error."""
    problems = [
        (kind, problem) for kind, path in sources.items() if (problem := input_problem(path, kind in DIRECTORY_KINDS))
    ]
    if not problems:
        return
    problems.sort(key=lambda item: item[0] not in JOB_RECORD_KINDS)
    lines = [f"source {kind}: {problem}" for kind, problem in problems]
    if problems[0][0] in JOB_RECORD_KINDS:
        lines[0] = f"no job records for {month}: {problems[0][1]}"
    raise MissingInputError("; ".join(lines))
