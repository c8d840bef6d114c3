"""The source formats, one `SourceFormat` line each, and the landed tables, one typed `Field` a column.

The landing, `check`, `parse` and the landing's quality suites (flows/quality/suites.py) read them here.

Adding a format touches its module, its test, its kind's line in flows/core/source_kinds.py
(what it reads: a file, a directory or a command; the input it provides, its own kind or
another's: `sacct_json` is another way to give the job records of `sacct_psv`; its `init`
example) and one registry line: the module has the reader (and, if `check --month` should look at
the header first, a `check_header(path, site_timezone)`); its line below says the table its rows
land in, how its reader is called and its statistics. The landing's readers and pullers, the
header checks and `reliability-report parse` all come from `FORMATS`; a format whose rows fit an
existing table needs nothing else (a new table: its typed columns in `TABLES`, one line a field).

Readers are named as "module:function" and imported when used, so loading a config stays light.
A reader is called with the positional `arguments` it names (`con`: a DuckDB connection the
job-record readers leave their `attempts` in; `path`: the file or directory; `clock`: a LocalClock
in the site's zone, which also bounds the times a record may carry; `year`: the report month's, for syslog lines that print none) and with
`quarantine=` and, when the format has statistics, `stats=`. It returns row objects (see
`flows.ingest.sources.records`), an Arrow table of the landed columns less `cluster`, or (job records)
DuckDB's `attempts`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Literal

from flows.core.source_kinds import FILE_KINDS, SOURCE_KINDS, given_input

FieldType = Literal["string", "int64", "timestamp"]  # timestamp: naive UTC, microseconds


@dataclass(frozen=True)
class Field:
    """A column of a landed table, defined once: the landing writes it with this type, the readers
    stage it, and the landing's quality suites check its presence, type and (if `required`) values."""

    name: str
    type: FieldType
    required: bool = False  # every landed row has a value


def column_names(fields: tuple[Field, ...]) -> tuple[str, ...]:
    return tuple(field.name for field in fields)


# The landed tables: each field once, with its type. `attempts` is written by DuckDB from the
# job-record readers' `attempts` (its nodes land normalised, as host_lists / host_list_members).
TABLES: dict[str, tuple[Field, ...]] = {
    "attempts": (
        Field("cluster", "string"),
        Field("job_id", "string"),
        Field("job_id_raw", "string", required=True),
        Field("job_name", "string"),
        Field("user_name", "string"),
        Field("account", "string"),
        Field("partition", "string"),
        Field("qos", "string"),
        Field("state", "string"),
        Field("cancelled_by_uid", "int64"),
        Field("exit_code", "int64"),
        Field("exit_signal", "int64"),
        Field("submit_at", "timestamp", required=True),
        Field("eligible_at", "timestamp"),
        Field("start_at", "timestamp"),
        Field("end_at", "timestamp"),
        Field("elapsed_seconds", "int64"),
        Field("n_nodes", "int64"),
        Field("node_list", "string"),
        Field("gpus", "int64"),
        Field("req_gpus", "int64"),
        Field("reason", "string"),
        Field("failed_node", "string"),  # sacct FailedNode (23.02+): the node whose failure ended the job
        Field("restarts", "int64"),  # sacct Restarts (24.11+): times the job was requeued
        Field("sluid", "string"),  # sacct SLUID (25.11+): unique per run
        Field("admin_comment", "string"),  # sacct AdminComment: where a site marks who requeued a job
        Field("source_file", "string"),
        Field("source_line", "int64"),
    ),
    "node_events": (
        Field("cluster", "string"),
        Field("node", "string", required=True),
        Field("started_at", "timestamp", required=True),
        Field("ended_at", "timestamp"),
        Field("state", "string"),
        Field("reason", "string"),
        Field("user_name", "string"),
        Field("source_file", "string"),
        Field("source_line", "int64"),
    ),
    "health_checks": (
        Field("cluster", "string"),
        Field("node", "string", required=True),
        Field("ts", "timestamp", required=True),
        Field("source", "string"),
        Field("check_name", "string"),
        Field("status", "string"),
        Field("message", "string"),
        Field("source_file", "string"),
        Field("source_line", "int64"),
    ),
    "xid_events": (
        Field("cluster", "string"),
        Field("node", "string", required=True),
        Field("ts", "timestamp", required=True),
        Field("xid", "int64"),
        Field("pci", "string"),
        Field("message", "string"),
        Field("source_file", "string"),
        Field("source_line", "int64"),
    ),
}
# What a job-record reader stages (flows.ingest.sources.job_records): the attempt less what the landing adds.
STAGED_FIELDS = tuple(field for field in TABLES["attempts"] if field.name not in ("cluster", "source_file"))


def import_readers() -> None:
    """Import every format's modules now (the landing does, before its threads read in parallel)."""
    for source in FORMATS.values():
        for dotted in (source.reader, source.stats, source.check, source.pull):
            if dotted:
                _resolve(dotted)


def _resolve(dotted: str) -> Any:
    module, _, name = dotted.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class SourceFormat:
    kind: str  # the config's `kind` (flows/core/source_kinds.py: how it is given, the input it gives)
    table: str  # the landed table its rows go to (a key of TABLES)
    reader: str = ""  # "module:function"; a command's output is read by the reader of the kind it provides
    arguments: tuple[str, ...] = ("path",)  # the reader's positional arguments (see the module docstring)
    stats: str = ""  # "module:Class" of the reader's statistics ('' : none beyond the landed count)
    pull: str = ""  # commands: "module:function(command, month, out, retry)" writing the output ...
    pulled_file: str = ""  # ... to this file, which lands like an input file
    check: str = ""  # "module:function(path, site_timezone)": `check --month`'s look at the header

    @property
    def reads(self) -> str:
        return SOURCE_KINDS[self.kind].reads

    @property
    def provides(self) -> str:
        return SOURCE_KINDS[self.kind].provides

    @property
    def input(self) -> str:
        """The input it gives: its own kind, or the kind it is another way to give."""
        return given_input(self.kind)

    def new_stats(self) -> Any:
        return _resolve(self.stats)() if self.stats else None

    def read(self, quarantine: Any, stats: Any = None, **context: Any) -> Any:
        """Run the reader on `context`'s path (with its con, clock, year as the format needs)."""
        extra = {"stats": stats} if self.stats else {}
        return _resolve(self.reader)(*(context[name] for name in self.arguments), quarantine=quarantine, **extra)

    def check_header(self, path: Any, site_timezone: str) -> None:
        if self.check:
            _resolve(self.check)(path, site_timezone)

    def pull_to(self, command: list[str], month: Any, out_dir: Any, retry: Any) -> Any:
        return _resolve(self.pull)(command, month, out_dir / self.pulled_file, retry)


# In the order of SOURCE_KINDS (the landing's too: node events from sacctmgr come before the
# scontrol snapshot, which is deduplicated against them)
# fmt: off
FORMATS = {
    f.kind: f
    for f in (
        SourceFormat("sacct_psv", "attempts", reader="flows.ingest.sources.sacct:read_sacct", arguments=("con", "path", "clock"), stats="flows.ingest.sources.sacct:SacctReadStats", check="flows.ingest.sources.sacct:check_header"),
        SourceFormat("sacct_xdmod", "attempts", reader="flows.ingest.sources.sacct:read_sacct_xdmod", arguments=("con", "path", "clock"), stats="flows.ingest.sources.sacct:SacctReadStats", check="flows.ingest.sources.sacct:check_xdmod_header"),
        SourceFormat("sacct_json", "attempts", reader="flows.ingest.sources.sacct_json:read_sacct_json", arguments=("con", "path", "clock"), stats="flows.ingest.sources.sacct_json:SacctJsonReadStats", check="flows.ingest.sources.sacct_json:check_header"),
        SourceFormat("sacctmgr_events_psv", "node_events", reader="flows.ingest.sources.sacctmgr_events:read_sacctmgr_events", arguments=("path", "clock"), check="flows.ingest.sources.sacctmgr_events:check_header"),
        SourceFormat("scontrol_nodes", "node_events", reader="flows.ingest.sources.scontrol_nodes:read_scontrol_nodes", arguments=("path", "clock"), stats="flows.ingest.sources.scontrol_nodes:ScontrolReadStats"),
        SourceFormat("xid_syslog", "xid_events", reader="flows.ingest.sources.xid_syslog:read_xid_syslog", arguments=("path", "clock", "year"), stats="flows.ingest.sources.syslog:SyslogReadStats"),
        SourceFormat("xid_dmesg_dir", "xid_events", reader="flows.ingest.sources.xid_dmesg:read_xid_dmesg_dir", arguments=("path", "clock", "year"), stats="flows.ingest.sources.xid_dmesg:DmesgReadStats"),
        SourceFormat("nhc_syslog", "health_checks", reader="flows.ingest.sources.nhc_log:read_nhc_log", arguments=("path", "clock", "year"), stats="flows.ingest.sources.syslog:SyslogReadStats"),
        SourceFormat("dcgm_health_dir", "health_checks", reader="flows.ingest.sources.dcgm_health:read_dcgm_health_dir", stats="flows.ingest.sources.dcgm_health:DcgmReadStats"),
        SourceFormat("gcm_health_dir", "health_checks", reader="flows.ingest.sources.gcm_health:read_gcm_health_dir", stats="flows.ingest.sources.gcm_health:GcmReadStats"),
        SourceFormat("link_syslog", "health_checks", reader="flows.ingest.sources.link_syslog:read_link_syslog", arguments=("path", "clock", "year"), stats="flows.ingest.sources.link_syslog:LinkReadStats"),
        SourceFormat("ipmi_sel_dir", "health_checks", reader="flows.ingest.sources.ipmi_sel:read_ipmi_sel_dir", arguments=("path", "clock"), stats="flows.ingest.sources.ipmi_sel:SelReadStats"),
        SourceFormat("repair_tickets_csv", "health_checks", reader="flows.ingest.sources.repair_tickets:read_repair_tickets", arguments=("path", "clock"), stats="flows.ingest.sources.repair_tickets:TicketReadStats", check="flows.ingest.sources.repair_tickets:check_header"),
        SourceFormat("sacct_command", "attempts", pull="flows.ingest.sources.slurm_live:pull_sacct", pulled_file="sacct.usv"),
        SourceFormat("sacctmgr_events_command", "node_events", pull="flows.ingest.sources.slurm_live:pull_node_events", pulled_file="events.psv"),
        SourceFormat("scontrol_nodes_command", "node_events", pull="flows.ingest.sources.slurm_live:pull_node_states", pulled_file="scontrol_nodes.txt"),
    )
}
# fmt: on

JOB_RECORD_KINDS = tuple(kind for kind in FILE_KINDS if FORMATS[kind].table == "attempts")  # without these, no month
