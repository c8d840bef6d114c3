"""The hostile-input corpus of the node-health sources (issue 21): syslog (Xid, NHC), dmesg, DCGM,
GCM, repair tickets and IPMI SEL (link downs: tests/test_source_link_syslog.py), each case marked
with its class of outcome.

Every case reads a bad input beside good ones and asserts both its own outcome (the error or the
quarantine with its file, line and field, or the figure) and that the good rows still land.
Readers are called directly (cheap); one case lands a month to show a bad health file is
quarantined and counted there, never fatal.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow.parquet as pq
import pytest
from hostile import Outcome, hostile

from flows.ingest.sources.dcgm_health import DcgmReadStats, read_dcgm_health_dir
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.gcm_health import GcmReadStats, read_gcm_health_dir
from flows.ingest.sources.ipmi_sel import SelReadStats, read_ipmi_sel_dir
from flows.ingest.sources.nhc_log import read_nhc_log
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.repair_tickets import TicketReadStats, read_repair_tickets
from flows.ingest.sources.syslog import SyslogReadStats
from flows.ingest.sources.xid_dmesg import read_xid_dmesg_dir
from flows.ingest.sources.xid_syslog import read_xid_syslog

UTC = ZoneInfo("UTC")
XID = "kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
GOOD_XID = f"2026-11-03T10:00:00+00:00 gpu0001 {XID}"


def lenient() -> Quarantine:
    return Quarantine(strict=False)


def where(error: InputFormatError) -> tuple[str, int, str]:
    """The error's file name, line and field."""
    return Path(error.path).name, error.line, error.field


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def lines_of(data: Path, name: str) -> list[str]:
    with open(data / name, newline="") as handle:
        return [row["raw_line"] for row in csv.DictReader(handle, delimiter="\t")]


# --- Xid and NHC lines from syslog ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(
            f"2026-11-03T10:00:01+00:00 gpu0002 kernel: NVRM: Xid (PCI:0000:3b:00): {'9' * 25}, x",
            "xid",
            id="xid-beyond-int64",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "2026-11-03T10:00:01+00:00 gpu0002 kernel: NVRM: Xid (PCI:0000:3b:00): 5000, x",
            "xid",
            id="xid-5000-fits-int64-but-is-no-xid",  # it would fail the landing's quality suite
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "2026-11-03T10:00:01+00:00 gpu0002 kernel: NVRM: Xid (PCI:0000:3b:00): 0, x",
            "xid",
            id="xid-0",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            f"2026-11-03T10:00:01+00:00 gpu 0002 {XID}",
            "host",
            id="host-with-a-space",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            f"Nov  3 10:00:01 gpu[1-2] {XID}", "host", id="host-is-a-host-list", marks=hostile(Outcome.QUARANTINE)
        ),
        pytest.param(f"gpu0002 {XID}", "timestamp", id="no-syslog-prefix", marks=hostile(Outcome.QUARANTINE)),
        pytest.param(
            f"Feb 30 10:00:01 gpu0002 {XID}", "timestamp", id="impossible-date", marks=hostile(Outcome.QUARANTINE)
        ),
    ],
)
def test_a_bad_xid_line_is_quarantined_and_the_good_one_lands(tmp_path: Path, bad: str, field: str):
    log = write(tmp_path / "xid.log", f"{GOOD_XID}\n{bad}\nunrelated kernel line\n")
    quarantine, stats = lenient(), SyslogReadStats()
    rows = read_xid_syslog(log, UTC, 2026, stats=stats, quarantine=quarantine).to_pylist()
    assert [(r["node"], r["xid"], r["source_line"]) for r in rows] == [("gpu0001", 79, 1)]
    assert [where(e) for e in quarantine.errors] == [("xid.log", 2, field)]
    assert (stats.lines, stats.other_lines) == (3, 1)


@hostile(Outcome.FIGURE)
def test_an_xid_line_with_a_negative_offset_lands_in_utc(tmp_path: Path):
    log = write(tmp_path / "xid.log", f"2026-11-03T22:30:00-05:00 gpu0001 {XID}\n")
    (row,) = read_xid_syslog(log, UTC, 2026).to_pylist()
    assert row["ts"].isoformat() == "2026-11-04T03:30:00"


@hostile(Outcome.QUARANTINE)
def test_a_truncated_gzip_syslog_keeps_the_lines_before_the_damage(tmp_path: Path):
    whole = gzip.compress("".join(f"{GOOD_XID}\n" for _ in range(200)).encode())
    log = write(tmp_path / "xid.log.gz", whole[: len(whole) - 30])
    quarantine = lenient()
    rows = read_xid_syslog(log, UTC, 2026, quarantine=quarantine).to_pylist()
    (error,) = quarantine.errors
    assert error.field == "file" and error.line == len(rows) + 1 and 0 < len(rows) < 200


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(
            "Oct  3 12:00:02 gpu 42 nhc[811]: ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port is ACTIVE",
            "host",
            id="nhc-host-with-a-space",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port is ACTIVE",
            "timestamp",
            id="nhc-without-prefix",
            marks=hostile(Outcome.QUARANTINE),
        ),
    ],
)
def test_a_bad_nhc_line_is_quarantined_and_the_good_one_lands(tmp_path: Path, bad: str, field: str):
    good = "Oct  3 12:00:01 gpu0042 nhc[811]: ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted"
    log = write(tmp_path / "nhc.log", f"{good}\n{bad}\n")
    quarantine = lenient()
    rows = read_nhc_log(log, UTC, 2026, quarantine=quarantine).to_pylist()
    assert [(r["node"], r["check_name"], r["message"]) for r in rows] == [
        ("gpu0042", "check_fs_mount", "/home not mounted")
    ]
    assert [where(e) for e in quarantine.errors] == [("nhc.log", 2, field)]


@hostile(Outcome.FIGURE)
def test_an_nhc_warning_lands_as_a_warning_and_a_passed_check_is_counted(tmp_path: Path):
    log = write(
        tmp_path / "nhc.log",
        "2026-10-03T12:00:01+00:00 gpu0042 nhc[8]: WARNING:  nhc:  Health check failed:  check_ps_loadavg:  load 90\n"
        "2026-10-03T12:00:02+00:00 gpu0042 nhc[8]: SUCCESS:  nhc:  Health check passed:  check_fs_mount\n",
    )
    stats = SyslogReadStats()
    (row,) = read_nhc_log(log, UTC, 2026, stats=stats).to_pylist()
    assert (row["status"], row["check_name"], stats.matched, stats.other_lines) == ("WARNING", "check_ps_loadavg", 1, 1)


# --- kernel-log captures per node -----------------------------------------------------------------

DMESG_XID = "NVRM: Xid (PCI:0000:3b:00): 48, DBE (double bit error)"


@pytest.mark.parametrize(
    ("node", "capture", "line", "field"),
    [
        pytest.param(
            "gpu2",
            f"2026-11-22T03:22:04,000000+00:00 NVRM: Xid (PCI:0000:3b:00): {'1' * 30}, x\n",
            1,
            "xid",
            id="dmesg-xid-beyond-int64",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu 2",
            f"2026-11-22T03:22:04,000000+00:00 {DMESG_XID}\n",
            1,
            "node folder",
            id="folder-not-a-node-name",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2",
            f"# boot_time: yesterday\n[12.000000] {DMESG_XID}\n",
            1,
            "boot_time",
            id="unreadable-boot-time",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2",
            f"# boot_time: 2026-11-20T00:00:00Z\n[{'9' * 20}.000000] {DMESG_XID}\n",
            2,
            "timestamp",
            id="seconds-since-boot-out-of-range",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2",
            f"2026-13-45T03:22:04,000000+00:00 {DMESG_XID}\n",
            1,
            "timestamp",
            id="iso-month-13",
            marks=hostile(Outcome.QUARANTINE),
        ),
    ],
)
def test_a_bad_capture_line_is_quarantined_and_the_other_node_lands(
    tmp_path: Path, node: str, capture: str, line: int, field: str
):
    write(tmp_path / "gpu1" / "dmesg.log", f"2026-11-22T03:22:04,000000+00:00 {DMESG_XID}\n")
    write(tmp_path / node / "dmesg.log", capture)
    quarantine = lenient()
    events = list(read_xid_dmesg_dir(tmp_path, UTC, 2026, quarantine=quarantine))
    assert [(e.node, e.xid) for e in events] == [("gpu1", 48)]
    assert [where(e) for e in quarantine.errors][:1] == [("dmesg.log", line, field)]
    if field == "boot_time":  # the line after it has no boot time either: quarantined too, not dropped
        assert [e.field for e in quarantine.errors] == ["boot_time", "timestamp"]


@hostile(Outcome.QUARANTINE)
def test_a_corrupt_gzip_capture_is_quarantined_and_the_next_one_read(tmp_path: Path):
    write(tmp_path / "gpu1" / "a.log.gz", b"\x1f\x8b\x08\x00not really gzip")
    write(tmp_path / "gpu1" / "b.log", f"2026-11-22T03:22:04,000000+00:00 {DMESG_XID}\n")
    quarantine = lenient()
    assert [e.source_file for e in read_xid_dmesg_dir(tmp_path, UTC, 2026, quarantine=quarantine)] == ["gpu1/b.log"]
    assert [where(e) for e in quarantine.errors] == [("a.log.gz", 1, "file")]


# --- DCGM -----------------------------------------------------------------------------------------

HEALTHY = {"header": ["Health Monitor Report"], "body": {"Overall Health": {"value": "Healthy"}}}


def health_report(systems: dict[str, dict[str, str]], group: str = "GPU") -> dict:
    """A `dcgmi health -c -j` report: entity -> system -> status (its message the system's name)."""
    entities = {
        entity: {
            "children": {"Errors": {"children": {s: {"value": v, "overflow": [f"{s} {v}"]} for s, v in checks.items()}}}
        }
        for entity, checks in systems.items()
    }
    return {
        "header": ["Health Monitor Report"],
        "body": {"Overall Health": {"value": "Failure"}, group: {"children": entities}},
    }


def dcgm_case(tmp_path: Path, bad_name: str, bad: str) -> tuple[list, Quarantine, DcgmReadStats]:
    write(tmp_path / "gpu1" / "20261103T100000Z.json", json.dumps(health_report({"0": {"Memory system": "Failure"}})))
    write(tmp_path / bad_name, bad)
    quarantine, stats = lenient(), DcgmReadStats()
    return list(read_dcgm_health_dir(tmp_path, stats=stats, quarantine=quarantine)), quarantine, stats


@pytest.mark.parametrize(
    ("bad_name", "bad", "field"),
    [
        pytest.param(
            "gpu2/20261103T100000Z.json",
            "[1, 2]",
            "document",
            id="document-is-a-list",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2/20261103T100000Z.json",
            json.dumps({"body": {"Overall Health": {"value": "Failure"}, "GPU": [{"children": {}}]}}),
            "body.GPU",
            id="entity-group-is-a-list",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2/20261103T100000Z.json",
            json.dumps({"DCGM GPU Diagnostic": {"test_categories": [{"tests": [{"name": "x", "results": ["Fail"]}]}]}}),
            "test_categories.0.tests.0.results.0",
            id="diag-result-is-a-string",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2/20261103T100000Z.json",
            json.dumps(
                health_report({"0": {"Memory system": "Failure"}})
                | {
                    "body": {
                        "Overall Health": {"value": "x"},
                        "GPU": {
                            "children": {
                                "0": {"children": {"Errors": {"children": {"PCIe system": {"overflow": "x"}}}}}
                            }
                        },
                    }
                }
            ),
            "body.GPU.children.0.children.Errors.children.PCIe system.overflow",
            id="overflow-is-not-a-list",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2/20261103T100000Z.txt",
            "GPU 0: all good\n",
            "document",
            id="text-that-is-not-nvlink-s",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2/20261103T100000Z.txt",
            "+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n    gpuId 0:\n",
            "link status",
            id="nvlink-s-cut-short",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "20261103T100000Z.json",
            json.dumps(HEALTHY),
            "file name",
            id="file-outside-a-node-folder",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu 2/20261103T100000Z.json",
            json.dumps(HEALTHY),
            "node folder",
            id="folder-not-a-node-name",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2/20261103T100000Z.json",
            json.dumps(
                {
                    "header": ["NVLINK Error Counts", "GPU 0"],
                    "body": {"Link 0": {"children": {"Replay Error": {"value": "N/A"}}}},
                }
            ),
            "Link 0.Replay Error",
            id="nvlink-count-not-a-number",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "gpu2/20261103T100000Z.json",
            json.dumps(HEALTHY) + "{oops",
            "document",
            id="second-document-not-json",
            marks=hostile(Outcome.QUARANTINE),
        ),
    ],
)
def test_a_dcgm_file_of_an_unexpected_shape_is_quarantined_and_the_others_read(
    tmp_path: Path, bad_name: str, bad: str, field: str
):
    checks, quarantine, stats = dcgm_case(tmp_path, bad_name, bad)
    assert [(c.node, c.check, c.status) for c in checks] == [("gpu1", "Memory system", "Failure")]
    (error,) = quarantine.errors
    assert (error.path.endswith(Path(bad_name).name), error.field) == (True, field)
    assert stats.files == 2 and stats.incidents == 1


@hostile(Outcome.FIGURE)
def test_every_failed_check_of_a_dcgm_file_lands(tmp_path: Path):
    report = health_report(
        {"3": {"Memory system": "Failure", "PCIe system": "Warning"}, "5": {"NVLINK system": "Failure"}}
    )
    write(tmp_path / "gpu7" / "20261103T100000Z.json", json.dumps(report))
    write(
        tmp_path / "gpu7" / "20261103T110000Z.json",
        json.dumps(health_report({"1": {"NVSwitch fatal": "Failure"}}, "Switch")),
    )
    checks = list(read_dcgm_health_dir(tmp_path))
    assert [(c.check, c.status, c.message, c.source_line) for c in checks] == [
        ("Memory system", "Failure", "GPU 3: Memory system Failure", 1),
        ("PCIe system", "Warning", "GPU 3: PCIe system Warning", 1),
        ("NVLINK system", "Failure", "GPU 5: NVLINK system Failure", 1),
        ("NVSwitch fatal", "Failure", "Switch 1: NVSwitch fatal Failure", 1),  # other entity groups too
    ]


@hostile(Outcome.FIGURE)
def test_nvlink_error_counters_are_compared_with_dcgms_thresholds(health_fixtures: Path, tmp_path: Path):
    """The real `dcgmi nvlink -e -j` (all zero) is healthy; later counts are compared with it."""
    sample = (health_fixtures / "dcgmi_nvlink_e_gpu0.json").read_text()
    write(tmp_path / "gpu1" / "20261103T100000Z.json", sample)
    later = json.loads(sample)
    later["body"]["Link 2"]["children"]["Replay Error"]["value"] = "2"
    later["body"]["Link 2"]["children"]["CRC FLIT Error"]["value"] = "5"
    write(tmp_path / "gpu1" / "20261103T110000Z.json", json.dumps(later))
    again = json.loads(json.dumps(later))
    again["body"]["Link 2"]["children"]["Replay Error"]["value"] = "1"  # went down: the driver was reloaded
    write(tmp_path / "gpu1" / "20261103T120000Z.json", json.dumps(again))
    stats = DcgmReadStats()
    checks = list(read_dcgm_health_dir(tmp_path, stats=stats))
    assert [(c.ts.hour, c.check, c.status, c.message) for c in checks] == [
        (11, "NVLINK system", "Warning", "GPU 0 Link 2: 5 new CRC FLIT Error (total 5)"),
        (11, "NVLINK system", "Failure", "GPU 0 Link 2: 2 new Replay Error (total 2)"),
        (12, "NVLINK system", "Failure", "GPU 0 Link 2: 1 new Replay Error (total 1)"),
    ]
    assert (stats.files, stats.healthy_files, stats.incidents) == (3, 1, 3)


@hostile(Outcome.FIGURE)
def test_one_nvlink_output_per_gpu_in_one_file_are_all_read(health_fixtures: Path, tmp_path: Path):
    """An epilog looping over the GPUs writes one `dcgmi nvlink -e -g <gpu> -j` after the other."""
    sample = (health_fixtures / "dcgmi_nvlink_e_gpu0.json").read_text()
    gpu1 = json.loads(sample)
    gpu1["header"][1] = "GPU 1"
    gpu1["body"]["Link 4"]["children"]["Recovery Error"]["value"] = "3"
    write(tmp_path / "gpu1" / "20261103T100000Z.json", sample + json.dumps(gpu1, indent=8) + "\n")
    checks = list(read_dcgm_health_dir(tmp_path))
    assert [(c.status, c.message) for c in checks] == [("Failure", "GPU 1 Link 4: 3 new Recovery Error (total 3)")]


@hostile(Outcome.FIGURE)
def test_nvlink_link_status_text_is_read_beside_the_json(health_fixtures: Path, tmp_path: Path):
    """The real `dcgmi nvlink -s` (all up) is healthy; a link Down is a Failure naming GPU and link."""
    sample = (health_fixtures / "dcgmi_nvlink_s.txt").read_text()
    write(tmp_path / "gpu1" / "20261103T100000Z.txt", sample)
    lines = sample.splitlines()
    lines[9] = "        U U U D U U U D _ _ _ _ _ _ _ _ _ _"  # gpuId 2's links
    write(tmp_path / "gpu1" / "20261103T110000Z.txt", "\n".join(lines) + "\n")
    write(tmp_path / "gpu1" / "20261103T110000Z.json", json.dumps(HEALTHY))
    stats = DcgmReadStats()
    checks = list(read_dcgm_health_dir(tmp_path, stats=stats))
    assert [(c.check, c.status, c.message, c.source_line) for c in checks] == [
        ("NVLINK system", "Failure", "GPU 2: NvLink links 3, 7 Down", 10)
    ]
    assert (stats.files, stats.healthy_files) == (3, 2)


# --- Meta GCM -------------------------------------------------------------------------------------

GOOD_GCM = {"node": "gpu7", "health_check": "check ibstat", "result": 2, "_msg": "mlx5_0 down", "end_time": 1795404124}


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(
            [GOOD_GCM | {"node": ["gpu1", "gpu2"]}], "node", id="node-is-a-list", marks=hostile(Outcome.QUARANTINE)
        ),
        pytest.param(
            [GOOD_GCM | {"node": "gpu[1-2]"}], "node", id="node-is-a-host-list", marks=hostile(Outcome.QUARANTINE)
        ),
        pytest.param([GOOD_GCM | {"result": [2]}], "result", id="result-is-a-list", marks=hostile(Outcome.QUARANTINE)),
        pytest.param(
            [GOOD_GCM | {"end_time": 1e20}], "end_time", id="end-time-far-future", marks=hostile(Outcome.QUARANTINE)
        ),
        pytest.param(
            {"normal": ["gpu7"], "int": {"result": 2}},
            "normal",
            id="file-sink-group-is-a-list",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(42, "record", id="line-is-a-number", marks=hostile(Outcome.QUARANTINE)),
        pytest.param([GOOD_GCM, "gpu7 failed"], "record", id="record-is-a-string", marks=hostile(Outcome.QUARANTINE)),
    ],
)
def test_a_gcm_line_of_an_unexpected_shape_is_quarantined_whole(tmp_path: Path, bad: object, field: str):
    write(tmp_path / "health.log", json.dumps([GOOD_GCM]) + "\n" + json.dumps(bad) + "\n")
    quarantine, stats = lenient(), GcmReadStats()
    checks = list(read_gcm_health_dir(tmp_path, stats=stats, quarantine=quarantine))
    assert [(c.node, c.check, c.source_line) for c in checks] == [("gpu7", "check ibstat", 1)]
    assert [where(e) for e in quarantine.errors] == [("health.log", 2, field)]
    assert (stats.records, stats.incidents) == (1, 1)  # nothing of the bad line counted as read


@hostile(Outcome.FIGURE)
def test_every_record_of_a_gcm_line_lands(tmp_path: Path):
    records = [GOOD_GCM, GOOD_GCM | {"health_check": "xid errors", "_msg": "XID error: 79"}, GOOD_GCM | {"result": 0}]
    write(tmp_path / "health.log", json.dumps(records) + "\n")
    stats = GcmReadStats()
    checks = list(read_gcm_health_dir(tmp_path, stats=stats))
    assert [(c.node, c.check, c.source_line) for c in checks] == [
        ("gpu7", "check ibstat", 1),
        ("gpu7", "xid errors", 1),
    ]
    assert (stats.records, stats.ok_results, stats.incidents) == (3, 1, 2)


# --- repair tickets -------------------------------------------------------------------------------

TICKETS = "ticket_id,node,opened_at,category\nT-1,gpu1,2026-11-02T10:00:00,gpu\n"


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(
            "T-2,gpu 2,2026-11-03T10:00:00,gpu", "node", id="node-with-a-space", marks=hostile(Outcome.QUARANTINE)
        ),
        pytest.param(
            'T-2,"gpu1,gpu2",2026-11-03T10:00:00,gpu', "node", id="two-nodes", marks=hostile(Outcome.QUARANTINE)
        ),
        pytest.param(
            "T-2,gpu2,0001-01-01T00:00:00+01:00,gpu",
            "opened_at",
            id="opened-before-year-1-utc",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            f"T-2,gpu2,2026-11-03T10:00:00,{'x' * 200_000}",
            "row",
            id="field-past-csv-limit",
            marks=hostile(Outcome.QUARANTINE),
        ),
    ],
)
def test_a_bad_ticket_is_quarantined_and_the_others_land(tmp_path: Path, bad: str, field: str):
    path = write(tmp_path / "tickets.csv", TICKETS + bad + "\nT-3,gpu3,2026-11-04T10:00:00,gpu\n")
    quarantine, stats = lenient(), TicketReadStats()
    tickets = list(read_repair_tickets(path, UTC, stats=stats, quarantine=quarantine))
    assert [(t.node, t.source_line) for t in tickets] == [("gpu1", 2), ("gpu3", 4)]
    assert [where(e) for e in quarantine.errors] == [("tickets.csv", 3, field)]
    assert (stats.rows, stats.tickets) == (3, 2)


@hostile(Outcome.ERROR)
def test_an_empty_ticket_file_is_an_error_naming_its_header(tmp_path: Path):
    path = write(tmp_path / "tickets.csv", "")
    with pytest.raises(InputFormatError, match=r"tickets.csv:1: field header=.*missing columns node, opened_at"):
        list(read_repair_tickets(path, UTC, quarantine=lenient()))


# --- IPMI SEL -------------------------------------------------------------------------------------


@hostile(Outcome.FIGURE)
def test_real_sel_lines_land_their_asserted_events(health_fixtures: Path, tmp_path: Path):
    write(tmp_path / "gpu1" / "sel.txt", "\n".join(lines_of(health_fixtures, "sel_lines.tsv")) + "\n")
    stats = SelReadStats()
    events = list(read_ipmi_sel_dir(tmp_path, ZoneInfo("Europe/Paris"), stats=stats))
    assert [(e.check, e.status, e.source_line) for e in events] == [
        ("Processor #0x40", "Uncorrectable machine check exception", 1),
        ("Temperature #0x17", "", 2),
        ("Power Unit Pwr Unit Status", "Power off/down", 3),
        ("Management Subsys Health AutoCfg Status", "State Asserted", 5),
        ("Memory #0x88", "Correctable ECC (CPU0_G1)", 6),  # ipmitool 1.8.19: 12/14/22, 23:09:44 CET
        ("Processor #0xc9", "IERR", 7),
        ("System Event #0x4a", "Undetermined system hardware failure", 9),
        ("Critical Interrupt #0x17", "Bus Uncorrectable error", 10),
    ]
    assert events[4].ts.isoformat() == "2022-12-14T22:09:44+00:00"  # CET is the site's zone then
    assert events[0].ts.isoformat() == "2026-05-14T18:42:44+00:00"  # no zone: the site's (CEST)
    assert (stats.entries, stats.deasserted, stats.oem_records) == (10, 1, 1)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(
            "   5 |  Pre-Init  |0000011104| Power Unit #0x01 | Power off/down | Asserted",
            "date",
            id="pre-init-time",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "   5 | Linux kernel panic: Fatal excep",
            "date",
            id="kernel-panic-record",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "   5 | 02/30/2026 | 10:00:00 | Memory #0x88 | Uncorrectable ECC | Asserted",
            "date",
            id="impossible-date",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "   5 | 11/03/2026 | 10:00:00 PST | Memory #0x88 | Uncorrectable ECC | Asserted",
            "time",
            id="zone-not-the-sites",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param(
            "   5 | 11/03/2026 | 10:00:00 | Memory #0x88 | Uncorrectable ECC | Sideways",
            "direction",
            id="unknown-direction",
            marks=hostile(Outcome.QUARANTINE),
        ),
        pytest.param("SEL has no entries? | x", "record id", id="not-a-sel-line", marks=hostile(Outcome.QUARANTINE)),
    ],
)
def test_a_bad_sel_line_is_quarantined_and_the_good_one_lands(tmp_path: Path, bad: str, field: str):
    good = "   4 | 11/03/2026 | 09:00:00 | Critical Interrupt #0x17 | Bus Uncorrectable error | Asserted"
    write(tmp_path / "gpu1" / "sel.txt", f"{good}\n{bad}\n")
    quarantine = lenient()
    events = list(read_ipmi_sel_dir(tmp_path, UTC, quarantine=quarantine))
    assert [(e.node, e.check, e.ts.hour) for e in events] == [("gpu1", "Critical Interrupt #0x17", 9)]
    assert [where(e) for e in quarantine.errors] == [("sel.txt", 2, field)]


@hostile(Outcome.FIGURE)
def test_a_sel_entry_in_two_captures_is_read_once(tmp_path: Path):
    entry = "   4 | 11/03/2026 | 09:00:00 | Critical Interrupt #0x17 | Bus Uncorrectable error | Asserted\n"
    write(tmp_path / "gpu1" / "a.txt", entry)
    write(tmp_path / "gpu1" / "b.txt", entry + entry.replace("   4 |", "   5 |").replace("09:00", "09:30"))
    stats = SelReadStats()
    assert [e.message for e in read_ipmi_sel_dir(tmp_path, UTC, stats=stats)] == ["record 4", "record 5"]
    assert stats.repeated_entries == 1


# --- the landing: one bad health file never fails the month -----------------------------------------


@hostile(Outcome.QUARANTINE)
def test_bad_health_files_are_quarantined_and_counted_by_the_landing(slurm_fixtures: Path, tmp_path: Path):
    from flows.config.file import load_config
    from flows.core.months import Month
    from flows.ingest.land import land_month

    write(
        tmp_path / "dcgm" / "node3" / "20261122T032200Z.json",
        json.dumps(health_report({"0": {"Memory system": "Failure"}})),
    )
    write(tmp_path / "dcgm" / "node3" / "20261122T032300Z.json", "[]")  # raised 'list' ... before
    write(tmp_path / "gcm" / "health.log", json.dumps([GOOD_GCM | {"node": "node4"}]) + "\n" + '{"normal": 1}\n')
    write(tmp_path / "links.log", "2026-11-22T03:22:00+00:00 node2 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link down\n")
    write(
        tmp_path / "sel" / "node1" / "sel.txt",
        "  1 | 11/22/2026 | 03:21:00 | Critical Interrupt #0x17 | PCI SERR | Asserted\n",
    )
    sources = "".join(
        f'[[sources]]\nkind = "{kind}"\npath = "{path}"\n\n'
        for kind, path in [
            ("sacct_psv", str(slurm_fixtures / "sacct_fields_allocations.psv")),
            ("dcgm_health_dir", "dcgm"),
            ("gcm_health_dir", "gcm"),
            ("link_syslog", "links.log"),
            ("ipmi_sel_dir", "sel"),
        ]
    )
    (tmp_path / "c.toml").write_text(f'cluster = "ci"\n\n{sources}\n[paths]\ndata = "data"\n')
    landed = land_month(load_config(tmp_path / "c.toml"), Month.parse("2026-11"))
    manifest = json.loads((landed / "manifest.json").read_text())["sources"]
    assert {
        kind: (manifest[kind]["records"], manifest[kind]["quarantined"]) for kind in manifest if kind != "sacct_psv"
    } == {
        "dcgm_health_dir": (1, 1),
        "gcm_health_dir": (1, 1),
        "link_syslog": (1, 0),
        "ipmi_sel_dir": (1, 0),
    }
    checks = pq.read_table(landed / "health_checks.parquet").to_pylist()
    assert sorted((c["source"], c["node"], c["check_name"]) for c in checks) == [
        ("dcgm", "node3", "Memory system"),
        ("gcm", "node4", "check ibstat"),
        ("ipmi_sel", "node1", "Critical Interrupt #0x17"),
        ("link", "node2", "ibp59s0"),
    ]
    assert pq.read_table(landed / "attempts.parquet").num_rows == 18  # the job records landed as ever
