"""The kinds of `[[sources]]` a config may list, as the config sees them: how each is given (a
file, a directory or a command), the input it gives, and the `init` starter's example of it.

How each kind is read, pulled and landed is the ingest's (flows/ingest/sources/registry.py, one
`SourceFormat` per kind here). Adding a format adds a line here and a line there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SourceKind:
    reads: Literal["file", "directory", "command"]
    example: str | tuple[str, ...]  # `init`: the path (or the command) ...
    explanation: str  # ... and one line on what it is
    provides: str = ""  # the input it is another way to give ('' : its own)
    # what its own input tells of the nodes (kinds that provide another's input have the other's):
    # "events" (a node's DOWN/DRAIN), "health" (a node's health checks and logs), "" (nothing: the
    # job records, tickets). flows/figures/measured.py: without either, nothing counts a node's faults.
    nodes: Literal["events", "health", ""] = ""


def given_input(kind: str) -> str:
    """The input a kind gives: its own, or the one it is another way to give."""
    return SOURCE_KINDS[kind].provides or kind


def node_input(kind: str) -> str:
    """What a kind's input tells of the nodes: "events", "health" or "" (see SourceKind.nodes)."""
    return SOURCE_KINDS[given_input(kind)].nodes


LOGS = "logs/{month}"
# The order is the config's (error messages list the kinds in it) and the landing's: node events
# from sacctmgr come before the scontrol snapshot, which is deduplicated against them.
# fmt: off
SOURCE_KINDS = {
    "sacct_psv": SourceKind("file", example=f"{LOGS}/sacct.psv", explanation="required, one of the four job-record kinds: sacct --allusers --duplicates --allocations --parsable2 (README lists the --format fields)"),
    "sacct_xdmod": SourceKind("file", provides="sacct_psv", example=f"{LOGS}/xdmod.log.gz", explanation="or Open XDMoD's headerless sacct dump (gzip is fine)"),
    "sacct_json": SourceKind("file", provides="sacct_psv", example=f"{LOGS}/jobs.json", explanation="or sacct --json / slurmrestd output"),
    "sacctmgr_events_psv": SourceKind("file", nodes="events", example=f"{LOGS}/events.psv", explanation="optional: sacctmgr -P show event: node DOWN/DRAIN events"),
    "scontrol_nodes": SourceKind("file", nodes="events", example=f"{LOGS}/scontrol_nodes.txt", explanation="optional: `scontrol show node -o` snapshots (cron)"),
    "xid_syslog": SourceKind("file", nodes="health", example=f"{LOGS}/xid.log", explanation="optional: NVIDIA Xid kernel lines from syslog"),
    "xid_dmesg_dir": SourceKind("directory", nodes="health", example=f"{LOGS}/dmesg", explanation="optional: kernel-log captures, <dir>/<node>/<any file>[.gz]"),
    "nhc_syslog": SourceKind("file", nodes="health", example=f"{LOGS}/nhc.log", explanation="optional: LBNL NHC 'Health check failed' lines from syslog"),
    "dcgm_health_dir": SourceKind("directory", nodes="health", example=f"{LOGS}/dcgm", explanation="optional: dcgmi health/diag/nvlink -e -j output and nvlink -s text, <dir>/<node>/<time>.json|.txt"),
    "gcm_health_dir": SourceKind("directory", nodes="health", example=f"{LOGS}/gcm", explanation="optional: Meta GCM health-check records, every file under it"),
    "link_syslog": SourceKind("file", nodes="health", example=f"{LOGS}/links.log", explanation="optional: network links that went down, from syslog (NIC drivers' Link is Down, systemd-networkd Lost carrier, mlx5 cable events)"),
    "ipmi_sel_dir": SourceKind("directory", nodes="health", example=f"{LOGS}/sel", explanation="optional: `ipmitool sel elist` captures, <dir>/<node>/<any file>[.gz]"),
    "repair_tickets_csv": SourceKind("file", example="logs/tickets.csv", explanation="optional: repair tickets CSV (node, opened_at, ...)"),
    "sacct_command": SourceKind("command", provides="sacct_psv", example=("sacct",), explanation='or pull the month live (run with TZ=UTC; through ssh: ["ssh", "head", "sacct"])'),
    "sacctmgr_events_command": SourceKind("command", provides="sacctmgr_events_psv", example=("sacctmgr",), explanation="or pull them live"),
    "scontrol_nodes_command": SourceKind("command", provides="scontrol_nodes", example=("scontrol",), explanation="or one snapshot now"),
}
# fmt: on

FILE_KINDS = tuple(kind for kind, k in SOURCE_KINDS.items() if k.reads != "command")  # a file or a directory
DIRECTORY_KINDS = tuple(kind for kind, k in SOURCE_KINDS.items() if k.reads == "directory")
COMMAND_KINDS = {kind: given_input(kind) for kind, k in SOURCE_KINDS.items() if k.reads == "command"}
# the ways to give the job records (without them there is no month), for the message that asks for one
JOB_RECORD_SOURCES = tuple(kind for kind in SOURCE_KINDS if given_input(kind) == "sacct_psv")
# the kinds that tell of a node's faults (node events or health): the fleet's fault rate needs one
NODE_SOURCES = tuple(kind for kind in SOURCE_KINDS if node_input(kind))
