"""The source kinds a config's `[[sources]]` may name: one `SourceKind` declaration each, read by the
config (its kinds, `init`'s examples), the landing, `check --month`, `parse`, the landing's quality
suites (the landed source names) and the failure taxonomy's tests (the seed
dbt_project/seeds/landed_sources.csv is written from here: `python -m flows.ingest.sources.registry`).

A declaration says how the kind is given (a file, a directory, a command or a server's URL), the input
it gives (its own, or another kind's: `sacct_json` is another way to give the job records of
`sacct_psv`; a command's or a server's pull is read by the file kind it `provides`), the
landed table its rows go to, its reader (a real import) with the arguments it takes, its statistics,
its header check, the landed `source` name its rows carry and the text of its rows the failure
taxonomy's patterns match (`signal`). Adding a format is its module, its declaration here, its
taxonomy rows (dbt_project/seeds/failure_taxonomy.csv) and its test (docs/sources.md, "Adding a
format").

A reader is called with the positional `arguments` it names (`con`: a DuckDB connection the
job-record readers leave their `attempts` in; `path`: the file or directory; `clock`: a LocalClock
in the site's zone, which also bounds the times a record may carry; `year`: the report month's, for
syslog lines that print none; `limits`: the bounds on one line, field or document,
flows/ingest/sources/limits.py) and with `quarantine=` and, when the kind has statistics, `stats=`. It
returns row objects (see `flows.ingest.sources.records`), an Arrow table of the landed columns less
`cluster`, or (job records) DuckDB's `attempts`.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from flows import DBT_PROJECT_DIR
from flows.ingest.sources import (
    dcgm_health,
    dcgm_series,
    gcm_health,
    ipmi_sel,
    link_syslog,
    nhc_log,
    prometheus_dcgm,
    repair_tickets,
    sacct,
    sacct_json,
    sacctmgr_events,
    scontrol_nodes,
    servers,
    slurm_live,
    slurmrestd,
    syslog,
    xid_dmesg,
    xid_syslog,
)
from flows.ingest.sources.source_kind import Signal, SourceKind

LOGS = "logs/{month}"
TIME = ("path", "clock")  # a reader's arguments: the file and the site's clock ...
SYSLOG = ("path", "clock", "year", "limits")  # ... the year, for syslog lines that print none, and the bounds
HEALTH = ("path", "clock", "limits")  # a health log's file or directory, the site's clock and the bounds
JOBS = ("con", "path", "clock", "limits")  # the job-record readers leave `attempts` in the connection
# The order is the config's (error messages list the kinds in it) and the landing's: node events
# from sacctmgr come before the scontrol snapshot, which is deduplicated against them.
SOURCE_KINDS: dict[str, SourceKind] = {
    k.kind: k
    for k in (
        SourceKind(
            "sacct_psv",
            "file",
            "attempts",
            f"{LOGS}/sacct.psv",
            "required, one of the five job-record kinds: sacct --allusers --duplicates --allocations --parsable2 (README lists the --format fields)",
            reader=sacct.read_sacct,
            arguments=JOBS,
            stats=sacct.SacctReadStats,
            check=sacct.check_header,
        ),
        SourceKind(
            "sacct_xdmod",
            "file",
            "attempts",
            f"{LOGS}/xdmod.log.gz",
            "or Open XDMoD's headerless sacct dump (gzip is fine)",
            reader=sacct.read_sacct_xdmod,
            arguments=JOBS,
            stats=sacct.SacctReadStats,
            check=sacct.check_xdmod_header,
            provides="sacct_psv",
        ),
        SourceKind(
            "sacct_json",
            "file",
            "attempts",
            f"{LOGS}/jobs.json",
            "or sacct --json / slurmrestd output",
            reader=sacct_json.read_sacct_json,
            arguments=JOBS,
            stats=sacct_json.SacctJsonReadStats,
            check=sacct_json.check_header,
            provides="sacct_psv",
        ),
        SourceKind(
            "sacctmgr_events_psv",
            "file",
            "node_events",
            f"{LOGS}/events.psv",
            "optional: sacctmgr -P show event: node DOWN/DRAIN events",
            reader=sacctmgr_events.read_sacctmgr_events,
            arguments=(*TIME, "limits"),
            stats=sacctmgr_events.SacctmgrReadStats,
            check=sacctmgr_events.check_header,
            source="slurm_event",
            signal="reason",
            nodes="events",
            lemon_signal="out_count",
        ),
        SourceKind(
            "scontrol_nodes",
            "file",
            "node_events",
            f"{LOGS}/scontrol_nodes.txt",
            "optional: `scontrol show node -o` snapshots (cron)",
            reader=scontrol_nodes.read_scontrol_nodes,
            arguments=TIME,
            stats=scontrol_nodes.ScontrolReadStats,
            source="slurm_event",
            signal="reason",
            nodes="events",
            lemon_signal="out_count",
        ),
        SourceKind(
            "xid_syslog",
            "file",
            "xid_events",
            f"{LOGS}/xid.log",
            "optional: NVIDIA Xid kernel lines from syslog",
            reader=xid_syslog.read_xid_syslog,
            arguments=SYSLOG,
            stats=syslog.SyslogReadStats,
            source="xid",
            signal="xid",
            nodes="health",
            gpu_report=True,
            lemon_signal="xid_cnt",
        ),
        SourceKind(
            "xid_dmesg_dir",
            "directory",
            "xid_events",
            f"{LOGS}/dmesg",
            "optional: kernel-log captures, <dir>/<node>/<any file>[.gz]",
            reader=xid_dmesg.read_xid_dmesg_dir,
            arguments=SYSLOG,
            stats=xid_dmesg.DmesgReadStats,
            source="xid",
            signal="xid",
            nodes="health",
            gpu_report=True,
            lemon_signal="xid_cnt",
        ),
        SourceKind(
            "nhc_syslog",
            "file",
            "health_checks",
            f"{LOGS}/nhc.log",
            "optional: LBNL NHC 'Health check failed' lines from syslog",
            reader=nhc_log.read_nhc_log,
            arguments=SYSLOG,
            stats=syslog.SyslogReadStats,
            source="nhc",
            signal="check",
            nodes="health",
        ),
        SourceKind(
            "dcgm_health_dir",
            "directory",
            "health_checks",
            f"{LOGS}/dcgm",
            "optional: dcgmi health/diag/nvlink -e -j output and nvlink -s text, <dir>/<node>/<time>.json|.txt",
            reader=dcgm_health.read_dcgm_health_dir,
            arguments=HEALTH,
            stats=dcgm_health.DcgmReadStats,
            source="dcgm",
            signal="check: status",
            nodes="health",
            gpu_report=True,
        ),
        SourceKind(
            "dcgm_series",
            "file",
            "health_checks",
            f"{LOGS}/dcgm_series.jsonl",
            "optional: dcgm-exporter series saved from Prometheus (as prometheus_dcgm pulls them): their Xids and error counters' increases",
            more_tables=("xid_events",),
            reader=dcgm_series.read_dcgm_series,
            arguments=HEALTH,
            stats=dcgm_series.DcgmSeriesReadStats,
            check=dcgm_series.check_header,
            source="dcgm_exporter",
            signal="check",
            nodes="health",
            gpu_report=True,
        ),
        SourceKind(
            "gcm_health_dir",
            "directory",
            "health_checks",
            f"{LOGS}/gcm",
            "optional: Meta GCM health-check records, every file under it",
            reader=gcm_health.read_gcm_health_dir,
            arguments=HEALTH,
            stats=gcm_health.GcmReadStats,
            source="gcm",
            signal="check: status: message",
            nodes="health",
        ),
        SourceKind(
            "link_syslog",
            "file",
            "health_checks",
            f"{LOGS}/links.log",
            "optional: network links that went down, from syslog (NIC drivers' Link is Down, systemd-networkd Lost carrier, mlx5 cable events)",
            reader=link_syslog.read_link_syslog,
            arguments=SYSLOG,
            stats=link_syslog.LinkReadStats,
            source="link",
            signal="check: status",
            nodes="health",
        ),
        SourceKind(
            "ipmi_sel_dir",
            "directory",
            "health_checks",
            f"{LOGS}/sel",
            "optional: `ipmitool sel elist` captures, <dir>/<node>/<any file>[.gz]",
            reader=ipmi_sel.read_ipmi_sel_dir,
            arguments=HEALTH,
            stats=ipmi_sel.SelReadStats,
            source="ipmi_sel",
            signal="check: status",
            nodes="health",
        ),
        SourceKind(
            "repair_tickets_csv",
            "file",
            "health_checks",
            "logs/tickets.csv",
            "optional: repair tickets CSV (node, opened_at, ...)",
            reader=repair_tickets.read_repair_tickets,
            arguments=HEALTH,
            stats=repair_tickets.TicketReadStats,
            check=repair_tickets.check_header,
            source="ticket",
            signal="check",
            lemon_signal="tickets",
        ),
        SourceKind(
            "prometheus_dcgm",
            "url",
            "health_checks",
            "http://prometheus:9090",
            "or pull them from Prometheus: NVIDIA dcgm-exporter's Xid and error-counter series (docs/sources.md)",
            pull=prometheus_dcgm.pull_series,
            probe=prometheus_dcgm.probe,
            settings=servers.PrometheusDcgmSource,
            pulled_file="dcgm_series.jsonl",
            provides="dcgm_series",
        ),
        SourceKind(
            "sacct_command",
            "command",
            "attempts",
            ("sacct",),
            'or pull the month live (run with TZ=UTC; through ssh: ["ssh", "head", "sacct"])',
            pull=slurm_live.pull_sacct,
            pulled_file="sacct.usv",
            provides="sacct_psv",
        ),
        SourceKind(
            "sacctmgr_events_command",
            "command",
            "node_events",
            ("sacctmgr",),
            "or pull them live",
            pull=slurm_live.pull_node_events,
            pulled_file="events.psv",
            provides="sacctmgr_events_psv",
        ),
        SourceKind(
            "scontrol_nodes_command",
            "command",
            "node_events",
            ("scontrol",),
            "or one snapshot now",
            pull=slurm_live.pull_node_states,
            pulled_file="scontrol_nodes.txt",
            provides="scontrol_nodes",
        ),
        SourceKind(
            "slurmrestd",
            "url",
            "attempts",
            "http://slurm-head:6820",
            "or pull the month from Slurm's REST API (a JWT in $SLURM_JWT: scontrol token)",
            settings=servers.SlurmrestdSource,
            pull=slurmrestd.pull,
            probe=slurmrestd.probe,
            pulled_file="slurmrestd.json",
            provides="sacct_json",
        ),
    )
}


def given_input(kind: str) -> str:
    """The input a kind gives: its own, or (through the kinds it provides) the one it is another way to give."""
    provides = SOURCE_KINDS[kind].provides
    return given_input(provides) if provides else kind


def landed_source(kind: str) -> str:
    """The landed `source` of a kind's rows (a command's: that of the kind it provides)."""
    return SOURCE_KINDS[given_input(kind)].source


def node_input(kind: str) -> str:
    """What a kind's input tells of the nodes: "events", "health" or "" (see SourceKind.nodes)."""
    return SOURCE_KINDS[given_input(kind)].nodes


FILE_KINDS = tuple(kind for kind, k in SOURCE_KINDS.items() if k.reads in ("file", "directory"))
DIRECTORY_KINDS = tuple(kind for kind, k in SOURCE_KINDS.items() if k.reads == "directory")
COMMAND_KINDS = {kind: given_input(kind) for kind, k in SOURCE_KINDS.items() if k.reads == "command"}
URL_KINDS = {kind: given_input(kind) for kind, k in SOURCE_KINDS.items() if k.reads == "url"}
PULLED_KINDS = {**COMMAND_KINDS, **URL_KINDS}  # the landing pulls them now, then lands the pull like a file
URL_SETTINGS: dict[str, type] = {kind: SOURCE_KINDS[kind].settings for kind in URL_KINDS}
# the ways to give the job records (without them there is no month), for the message that asks for one
JOB_RECORD_SOURCES = tuple(kind for kind in SOURCE_KINDS if given_input(kind) == "sacct_psv")
JOB_RECORD_KINDS = tuple(kind for kind in FILE_KINDS if SOURCE_KINDS[kind].table == "attempts")  # read from a file
# the kinds that tell of a node's faults (node events or health): the fleet's fault rate needs one
NODE_SOURCES = tuple(kind for kind in SOURCE_KINDS if node_input(kind))


class LandedSource(NamedTuple):
    """What a landed `source` name's rows are: their table, the text the taxonomy matches, whether they
    are a GPU's own report and the lemon signal they count toward (the seed `landed_sources`)."""

    table: str
    signal: Signal
    gpu_report: bool
    lemon_signal: str | None


# The landed `source` names, in the order of the kinds
LANDED_SOURCES: dict[str, LandedSource] = {
    k.source: LandedSource(k.table, k.signal, k.gpu_report, k.lemon_signal)
    for k in SOURCE_KINDS.values()
    if k.source and k.signal
}
LANDED_SOURCES_SEED = DBT_PROJECT_DIR / "seeds" / "landed_sources.csv"


def landed_sources_csv() -> str:
    """The seed dbt reads the landed source names from (the health events' classification and the
    taxonomy's tests, the node-days' GPU reports, the lemon signals): one row per landed source."""
    lines = ["source,landed_table,signal,gpu_report,lemon_signal"]
    lines += [
        f"{source},{s.table},{s.signal},{str(s.gpu_report).lower()},{s.lemon_signal or ''}"
        for source, s in LANDED_SOURCES.items()
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # write the seed after a declaration changed (tests/test_source_kinds.py says when)
    LANDED_SOURCES_SEED.write_text(landed_sources_csv())
    print(f"wrote {LANDED_SOURCES_SEED}", file=sys.stderr)
