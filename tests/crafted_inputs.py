"""Inputs of every kind that name a node, each holding one good record and records whose node is a
crafted name: shell syntax that ClusterShell's default group resolver once pasted into a `sed`
line run by `/bin/sh` (issue 50), group and pattern syntax, and terminal control characters.

`CRAFTED_NAMES` run `touch $CRAFTED_SENTINEL` if anything hands them to a shell; a test sets the
variable to a path of its own and asserts that the file never appears. The names hold no `/` and
no blank, so each is also a directory name (the capture directories' node folders) and one word
of a syslog line (its host). Real formats: the Slurm files are tests/data/slurm-22.05's own with
one node renamed; the health lines are as tests/test_health_sources.py writes them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from flows.core.months import Month
from flows.ingest.sources.dcgm_series import header_line, series_line
from flows.ingest.sources.sacct import XDMOD_FIELDS
from simulator.writers.dcgm_health import dcgm_health_json

SENTINEL_VARIABLE = "CRAFTED_SENTINEL"
# `${IFS}` is a blank to the shell that would run it; none is written in the name itself
SHELL = "@x';touch${IFS}$CRAFTED_SENTINEL;'"
CRAFTED_NAMES = (
    SHELL,
    "@x';\a\x1bc;touch${IFS}$CRAFTED_SENTINEL;'",  # BEL and a terminal reset, then the command
    "*",
    "@all",
    "gpu[1-3]&gpu[5-6]",
    "node3!node3",
    "`touch${IFS}$CRAFTED_SENTINEL`",
    "$(touch${IFS}$CRAFTED_SENTINEL)",
)
# the names that are one word with no '[' and no '*', and so can be a folder and a syslog host
FOLDER_NAMES = tuple(name for name in CRAFTED_NAMES if name not in ("*",))
MONTH = Month.parse("2026-11")  # the month of tests/data/slurm-22.05
GOOD = "gpu01"
T0 = 1795404124  # 2026-11-22T03:22:04Z
ISO = "2026-11-22T03:22:04+00:00"
XID = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


def _lines(nodes: tuple[str, ...], line: str) -> str:
    return "".join(line.format(node=node) for node in nodes)


def _sacct_psv(slurm: Path, out: Path) -> None:
    lines = (slurm / "sacct_fields_allocations.psv").read_text().splitlines()
    header = lines[0].split("|")
    at = header.index("NodeList")
    body = [line.split("|") for line in lines[1:] if line.split("|")[at].startswith("node")]
    records = [lines[0], *("|".join(fields) for fields in body)]
    for number, name in enumerate(CRAFTED_NAMES, start=1):
        for text in (name, f"node[1-2]x[1-2]y,{name}"):  # a simple and a complex list
            fields = list(body[0])
            fields[0] = fields[1] = str(900_000 + 2 * number + (text != name))
            fields[at] = text
            records.append("|".join(fields))
    out.write_text("\n".join(records) + "\n")


def _sacct_xdmod(out: Path) -> None:
    good = {
        "JobID": "700", "JobIDRaw": "700", "Cluster": "ci", "Partition": "gpu", "QOS": "normal",
        "Account": "a", "Group": "g", "GID": "1", "User": "u", "UID": "1",
        "Submit": "2026-11-22T03:00:00", "Eligible": "2026-11-22T03:00:00", "Start": "2026-11-22T03:00:00",
        "End": "2026-11-22T04:00:00", "Elapsed": "01:00:00", "ExitCode": "0:0", "State": "COMPLETED",
        "NNodes": "1", "NCPUS": "8", "ReqCPUS": "8", "ReqMem": "8000M", "ReqTRES": "cpu=8,gres/gpu=8",
        "AllocTRES": "billing=8,cpu=8,gres/gpu=8,node=1", "Timelimit": "02:00:00", "NodeList": GOOD,
        "JobName": "train",
    }  # fmt: skip
    records = ["|".join(good[name] for name in XDMOD_FIELDS)]
    for number, name in enumerate(CRAFTED_NAMES, start=1):
        crafted = good | {"JobID": str(700 + number), "JobIDRaw": str(700 + number), "NodeList": name}
        records.append("|".join(crafted[field] for field in XDMOD_FIELDS))
    out.write_text("\n".join(records) + "\n")


def _sacct_json(slurm: Path, out: Path) -> None:
    document = json.loads((slurm / "sacct.json").read_text())
    template = next(job for job in document["jobs"] if job.get("nodes") == "node3")
    for number, name in enumerate(CRAFTED_NAMES, start=1):
        job = json.loads(json.dumps(template))
        job["job_id"] = 800_000 + number
        job["nodes"] = name
        document["jobs"].append(job)
    out.write_text(json.dumps(document))


def _sacctmgr_events(slurm: Path, out: Path) -> None:
    lines = (slurm / "sacctmgr_event.down.psv").read_text().splitlines()
    node_event = next(line for line in lines if "|node3|" in line)
    out.write_text("\n".join([*lines, *(node_event.replace("|node3|", f"|{n}|") for n in CRAFTED_NAMES)]) + "\n")


def _scontrol_nodes(slurm: Path, out: Path) -> None:
    lines = (slurm / "scontrol_show_node.down.txt").read_text().splitlines()
    down = next(line for line in lines if " State=DOWN" in line and "Reason=" in line)
    name = down.split()[0]
    out.write_text("\n".join([*lines, *(down.replace(name, f"NodeName={n}", 1) for n in FOLDER_NAMES)]) + "\n")


def _capture_dir(root: Path, file_name: str, text: str) -> None:
    for node in (GOOD, *FOLDER_NAMES):
        folder = root / node
        folder.mkdir(parents=True)
        (folder / file_name).write_text(text)


def _tickets(out: Path) -> None:
    with open(out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ticket_id", "node", "opened_at", "closed_at", "category", "summary"])
        for number, node in enumerate((GOOD, *CRAFTED_NAMES)):
            writer.writerow([f"T-{number}", node, "2026-11-22T03:22:04", "", "gpu", "Xid 79"])


def write_crafted_inputs(slurm: Path, out: Path) -> dict[str, Path]:
    """Write one input of each of the 14 file and directory kinds into `out`, each with a good
    record on `GOOD` (or a real node of tests/data/slurm-22.05) and the crafted ones; {kind: path}."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        kind: out / name
        for kind, name in {
            "sacct_psv": "sacct.psv",
            "sacct_xdmod": "xdmod.log",
            "sacct_json": "jobs.json",
            "sacctmgr_events_psv": "events.psv",
            "scontrol_nodes": "scontrol_nodes.txt",
            "xid_syslog": "xid.log",
            "xid_dmesg_dir": "dmesg",
            "nhc_syslog": "nhc.log",
            "dcgm_health_dir": "dcgm",
            "dcgm_series": "dcgm_series.jsonl",
            "gcm_health_dir": "gcm",
            "link_syslog": "links.log",
            "ipmi_sel_dir": "sel",
            "repair_tickets_csv": "tickets.csv",
        }.items()
    }
    nodes = (GOOD, *FOLDER_NAMES)
    _sacct_psv(slurm, paths["sacct_psv"])
    _sacct_xdmod(paths["sacct_xdmod"])
    _sacct_json(slurm, paths["sacct_json"])
    _sacctmgr_events(slurm, paths["sacctmgr_events_psv"])
    _scontrol_nodes(slurm, paths["scontrol_nodes"])
    paths["xid_syslog"].write_text(_lines(nodes, f"{ISO} {{node}} kernel: {XID}\n"))
    nhc = "nhc[811]: ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted"
    paths["nhc_syslog"].write_text(_lines(nodes, f"{ISO} {{node}} {nhc}\n"))
    paths["link_syslog"].write_text(_lines(nodes, f"{ISO} {{node}} systemd-networkd[257]: eth0: Lost carrier\n"))
    _capture_dir(paths["xid_dmesg_dir"], "dmesg.log", f"2026-11-22T03:22:04,123456+00:00 {XID}\n")
    failure = dcgm_health_json({0: [("Memory", "Failure", "A DBE occurred")]})
    _capture_dir(paths["dcgm_health_dir"], "20261122T032204Z.json", json.dumps(failure))
    sel = "   2 | 11/22/2026 | 03:22:04 | Processor #0x40 | Uncorrectable machine check exception | Asserted\n"
    _capture_dir(paths["ipmi_sel_dir"], "sel.txt", sel)
    gcm = paths["gcm_health_dir"]
    gcm.mkdir()
    record = {"health_check": "xid errors", "type": "prolog", "result": 2, "_msg": "XID 48", "job_id": 1}
    with open(gcm / "health.log", "w") as handle:
        for node in (GOOD, *CRAFTED_NAMES):
            handle.write(json.dumps([record | {"node": node, "start_time": T0, "end_time": T0 + 1}]) + "\n")
    step = 60
    header = header_line("http://127.0.0.1:9090", "{...}", T0, T0 + 4 * step, step, "Hostname")
    labels = {"__name__": "DCGM_FI_DEV_XID_ERRORS", "gpu": "0", "UUID": "GPU-1", "device": "nvidia0"}
    series = "".join(
        series_line(labels | {"Hostname": node}, [(T0, T0 + step, "0"), (T0 + 2 * step, T0 + 4 * step, "79")])
        for node in (GOOD, *CRAFTED_NAMES)
    )
    paths["dcgm_series"].write_text(header + series)
    _tickets(paths["repair_tickets_csv"])
    return paths


# the crafted records added to a simulated month's files: a few of a kind, within the quarantine's
# allowance ([ingest] max_bad_rows, 10 a source)
MONTH_NAMES = (SHELL, CRAFTED_NAMES[1], "@all", CRAFTED_NAMES[-1])


def add_crafted_records(month_dir: Path) -> int:
    """Add crafted records to a simulated month's inputs (sacct.psv, events.psv, xid.log, nhc.log,
    dcgm/): each a copy of a real record of the file with its node crafted. Returns how many."""
    added = 0
    sacct = month_dir / "sacct.psv"
    header, *records = sacct.read_text().splitlines()
    at, fields = header.split("|").index("NodeList"), records[-1].split("|")
    crafted = []
    for number, name in enumerate(MONTH_NAMES, start=1):
        copy = list(fields)
        copy[0] = copy[1] = str(9_900_000 + number)
        copy[at] = name if number % 2 else f"node[1-2]x[1-2]y,{name}"
        crafted.append("|".join(copy))
    sacct.write_text("\n".join([header, *records, *crafted]) + "\n")
    added += len(crafted)
    events = month_dir / "events.psv"
    header, *records = events.read_text().splitlines()
    at = header.split("|").index("NodeName")
    node_event = next(record.split("|") for record in records if record.split("|")[at])
    lines = ["|".join([*node_event[:at], name, *node_event[at + 1 :]]) for name in MONTH_NAMES]
    events.write_text("\n".join([header, *records, *lines]) + "\n")
    added += len(lines)
    for log in ("xid.log", "nhc.log"):
        path = month_dir / log
        first = next(line for line in path.read_text().splitlines() if len(line.split()) > 2)
        stamp, host = first.split()[:2]
        with open(path, "a") as handle:
            handle.writelines(first.replace(f"{stamp} {host} ", f"{stamp} {name} ", 1) + "\n" for name in MONTH_NAMES)
        added += len(MONTH_NAMES)
    dcgm = month_dir / "dcgm"
    capture = next(path for path in sorted(dcgm.rglob("*.json")))
    for name in (SHELL, CRAFTED_NAMES[-1]):
        (dcgm / name).mkdir()
        (dcgm / name / capture.name).write_text(capture.read_text())
        added += 1
    return added
