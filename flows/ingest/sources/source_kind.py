"""A source kind's declaration (`SourceKind`): how a `[[sources]]` kind is given, read and landed;
flows/ingest/sources/registry.py declares every kind with it (its docstring says what each field
means to the config, the landing and the taxonomy)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from flows.ingest.sources import slurm_live

# What the failure taxonomy's patterns match in a landed source's rows (the dbt model that classifies health events)
Signal = Literal["xid", "reason", "check", "check: status", "check: status: message"]
SIGNALS: dict[Signal, str] = {
    "xid": "the Xid code",
    "reason": "the node event's reason",
    "check": "the check's name (a ticket's category)",
    "check: status": "<check>: <status>",
    "check: status: message": "<check>: <status>: <message>",
}


@dataclass(frozen=True)
class SourceKind:
    """One kind of `[[sources]]`, declared once (see the module docstring)."""

    kind: str  # the config's `kind`
    reads: Literal["file", "directory", "command", "url"]  # how it is given
    table: str  # the landed table its rows go to (a key of flows.ingest.sources.tables.TABLES) ...
    example: str | tuple[str, ...]  # `init`: the path (or the command) ...
    explanation: str  # ... and one line on what it is
    # ... and the further ones its reader's rows go to, each row to its class's (tables.ROW_TABLES): a
    # row in a table without a `source` column is that table's one landed source's (dcgm_series' Xids: xid)
    more_tables: tuple[str, ...] = ()
    reader: Callable[..., Any] | None = None  # a pull (command, url) is read by the reader of the kind it provides
    arguments: tuple[str, ...] = ("path",)  # the reader's positional arguments (see the module docstring)
    stats: type | None = None  # the reader's statistics (None: none beyond the landed count)
    check: Callable[[Path, str], None] | None = None  # `check --month`'s look at the header (path, its zone)
    # commands: (command, month, out, retry), urls: (settings, month, out), writing the pull ...
    pull: Callable[..., Path] | None = None
    pulled_file: str = ""  # ... to this file, which lands like an input file of the kind it provides
    settings: type | None = None  # urls: the keys its [[sources]] table takes (a model of flows.ingest.sources.servers)
    # urls: (settings, month) -> one line of what the server has for the month (`check --month`), or a PullError
    probe: Callable[..., str] | None = None
    provides: str = ""  # the kind whose input it is another way to give ('': its own)
    source: str = ""  # the landed `source` of its rows ('': job records, no node signal)
    signal: Signal | None = None  # what the taxonomy's patterns match in its rows
    # what its own input tells of the nodes (kinds that provide another's input have the other's):
    # "events" (a node's DOWN/DRAIN), "health" (a node's health checks and logs), "" (nothing: the
    # job records, tickets). flows/figures/measured.py: without either, nothing counts a node's faults.
    nodes: Literal["events", "health", ""] = ""
    # its rows are a GPU's own report, which only a node with NVIDIA GPUs logs (fct_node_days.gpu_events)
    gpu_report: bool = False
    # the paper's lemon signal its rows count toward (fct_node_lemon_signals; docs/methodology.md "Lemon
    # nodes"): xid_cnt (its hardware events), out_count (its events but planned maintenance), tickets
    lemon_signal: Literal["xid_cnt", "out_count", "tickets"] | None = None

    @property
    def tables(self) -> tuple[str, ...]:
        """Every landed table its rows go to."""
        return (self.table, *self.more_tables)

    def new_stats(self) -> Any:
        return self.stats() if self.stats else None

    def read(self, quarantine: Any, stats: Any = None, **context: Any) -> Any:
        """Run the reader on `context`'s path (with its con, clock, year as the kind needs)."""
        assert self.reader is not None, f"{self.kind} is read as {self.provides}"
        extra = {"stats": stats} if self.stats else {}
        return self.reader(*(context[name] for name in self.arguments), quarantine=quarantine, **extra)

    def check_header(self, path: Path, site_timezone: str) -> None:
        if self.check:
            self.check(path, site_timezone)

    def pull_to(self, source: Any, month: Any, out_dir: Path) -> Path:
        """Pull `month` for the configured `source` (a SourceConfig) into `out_dir`: run its command
        (retried as configured) or query its server; the file it wrote."""
        assert self.pull is not None, f"{self.kind} is not pulled"
        if self.reads == "url":
            return self.pull(source.server, month, out_dir / self.pulled_file)
        retry = slurm_live.Retry(source.attempts, source.retry_wait_seconds)
        return self.pull(list(source.command), month, out_dir / self.pulled_file, retry)
