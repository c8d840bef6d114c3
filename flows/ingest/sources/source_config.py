"""The config's `[[sources]]` tables (flows/config/cluster.py holds the rest of the schema): a file,
a command or a server each (the servers' keys are flows/ingest/sources/servers.py's), and the
SourceConfig a loaded config keeps of each.

A file source's times without an offset are in its `timezone` (default: `site_timezone`); a pull's
are UTC (commands run with TZ=UTC, servers answer in UTC or epochs). A health source's `node_names`
maps the names it gives its nodes to the scheduler's, at landing (flows/ingest/sources/node_names.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from flows.core.config_types import (
    CommandPart,
    NonNegativeNumber,
    PositiveInt,
    SourcePath,
    TimeZoneName,
    fill_placeholders,
)
from flows.core.months import Month
from flows.ingest.sources.node_names import NodeNameSteps
from flows.ingest.sources.registry import COMMAND_KINDS, FILE_KINDS, SOURCE_KINDS
from flows.ingest.sources.servers import UrlSource

FileKind = Literal[FILE_KINDS]  # a file or a directory
CommandKind = Literal[tuple(COMMAND_KINDS)]  # live sources run a command (["sacct"], ["ssh", "head", "sacct"])
SECTION = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class SourceConfig:
    kind: str
    path: str = ""  # file kinds: template with {month} and {cluster}
    command: tuple[str, ...] = ()  # command kinds: the program and its prefix
    attempts: int = 1  # command kinds: tries of a command failing transiently (CommandSource has the defaults)
    retry_wait_seconds: float = 0.0  # ... the first wait between them, doubling
    server: UrlSource | None = None  # url kinds: the settings their declaration names (URL_SETTINGS)
    timezone: str = ""  # file kinds: the zone of its times without an offset ('': site_timezone)
    node_names: tuple[str, ...] = ()  # health kinds: the steps mapping its node names to the scheduler's

    def resolve(self, base: Path, cluster: str, month: Month) -> Path:
        path = base / fill_placeholders(self.path, month=str(month), cluster=cluster)
        try:
            return path.resolve()
        except RuntimeError:  # a symlink loop: flows/ingest/probe.py input_problem names it
            return path


class FileSource(BaseModel):
    model_config = SECTION
    kind: FileKind
    path: SourcePath = Field(description="the month's file (a directory for *_dir kinds)")
    timezone: TimeZoneName | None = Field(
        None, description="the zone of its times without an offset (default: site_timezone)"
    )
    node_names: NodeNameSteps = Field((), description='how its node names map to Slurm\'s, e.g. "strip_domain"')

    @model_validator(mode="after")
    def _node_names_of_a_health_source(self) -> FileSource:
        if self.node_names and SOURCE_KINDS[self.kind].table in ("attempts", "node_events"):
            raise ValueError(
                "node_names maps a health source's node names to the scheduler's: the job records and "
                "Slurm's node events name them as the scheduler does"
            )
        return self


class CommandSource(BaseModel):
    model_config = SECTION
    kind: CommandKind
    command: tuple[CommandPart, ...] = Field(
        min_length=1, description='the program and its prefix, e.g. ["ssh", "slurm-head", "sacct"]'
    )
    attempts: PositiveInt = Field(4, description="a transient failure (ssh exit 255, refused, timeout) is retried ...")
    retry_wait_seconds: NonNegativeNumber = Field(10.0, description="... after 10 s, 20 s, 40 s, ... (at most 10 min)")


def source_config(source: FileSource | CommandSource | UrlSource) -> SourceConfig:
    """What a loaded config keeps of a [[sources]] table."""
    if isinstance(source, CommandSource):
        retry = {"attempts": source.attempts, "retry_wait_seconds": source.retry_wait_seconds}
        return SourceConfig(source.kind, command=source.command, **retry)
    if isinstance(source, UrlSource):
        return SourceConfig(source.kind, server=source, node_names=getattr(source, "node_names", ()))
    return SourceConfig(source.kind, source.path, timezone=source.timezone or "", node_names=source.node_names)
