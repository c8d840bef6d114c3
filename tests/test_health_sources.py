"""NHC log lines and DCGM health reports: readers on real-format samples and on bad input."""

import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from flows.core.months import Month
from flows.ingest.sources.dcgm_health import DcgmReadStats, read_dcgm_health_dir
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.nhc_log import read_nhc_log
from flows.ingest.sources.syslog import SyslogReadStats
from simulator import SimParams, simulate
from simulator.writers.dcgm_health import dcgm_health_json

UTC = ZoneInfo("UTC")


def test_nhc_lines_as_syslog_writes_them(tmp_path: Path):
    log = tmp_path / "messages"
    log.write_text(
        # the formats of LBNL NHC (mej/nhc) and Azure's aznhc, behind syslog prefixes
        "Oct  3 12:00:01 gpu0042 nhc[811]: ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted\n"
        "Oct  3 12:00:02 gpu0042 nhc[811]: SUCCESS:  nhc:  Health check passed:  check_gpu_count: Expected 8 and found 8\n"
        "2026-10-03T12:05:00+02:00 gpu0043 nhc[900]: ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port mlx5_0:1 is ACTIVE\n"
    )
    stats = SyslogReadStats()
    checks = read_nhc_log(log, UTC, 2026, stats=stats).to_pylist()
    assert [(c["node"], c["check_name"], c["message"]) for c in checks] == [
        ("gpu0042", "check_fs_mount", "/home not mounted"),
        ("gpu0043", "check_hw_ib", "No IB port mlx5_0:1 is ACTIVE"),
    ]
    assert checks[1]["ts"].hour == 10  # +02:00 converted to UTC
    assert stats.other_lines == 1 and stats.matched == 2


def test_nhc_failed_check_without_prefix_names_the_line(tmp_path: Path):
    log = tmp_path / "nhc.log"
    log.write_text("ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted\n")
    with pytest.raises(InputFormatError, match=r"nhc.log:1: field timestamp"):
        read_nhc_log(log, UTC, 2026)


def test_dcgm_reports_become_one_check_per_unhealthy_system(tmp_path: Path):
    node_dir = tmp_path / "gpu0007"
    node_dir.mkdir()
    report = dcgm_health_json(
        {
            3: [("Memory system", "Failure", "Detected 1 volatile double-bit ECC error(s) in GPU 3.")],
            5: [
                (
                    "PCIe system",
                    "Warning",
                    "Detected more than 8 PCIe replays per minute for GPU 5 : 23 Reconnect PCIe card.",
                )
            ],
        }
    )
    (node_dir / "20261003T120000Z.json").write_text(json.dumps(report, indent=3))
    (node_dir / "20261003T130000Z.json").write_text(json.dumps(dcgm_health_json({})))
    stats = DcgmReadStats()
    checks = list(read_dcgm_health_dir(tmp_path, stats=stats))
    assert [(c.node, c.check, c.status) for c in checks] == [
        ("gpu0007", "Memory system", "Failure"),
        ("gpu0007", "PCIe system", "Warning"),
    ]
    assert checks[0].ts.isoformat() == "2026-10-03T12:00:00+00:00"
    assert checks[1].message.startswith("GPU 5: Detected more than 8 PCIe replays")
    assert stats.files == 2 and stats.healthy_files == 1 and stats.incidents == 2


@pytest.mark.parametrize(
    ("name", "content", "field"),
    [
        ("20261003T120000Z.json", "{not json", "document"),
        ("20261003T120000Z.json", '{"body": {}}', "document"),
        ("latest.json", json.dumps(dcgm_health_json({})), "file name"),
    ],
)
def test_bad_dcgm_file_is_named(tmp_path: Path, name: str, content: str, field: str):
    (tmp_path / "gpu0001").mkdir()
    (tmp_path / "gpu0001" / name).write_text(content)
    with pytest.raises(InputFormatError, match=rf"gpu0001/{name}:1: field {field}"):
        list(read_dcgm_health_dir(tmp_path))


def test_simulated_health_logs_read_back(tmp_path: Path):
    truth = simulate(SimParams("h", Month.parse("2026-10"), nodes=64, seed=8, r_f=30.0), tmp_path)
    nhc = read_nhc_log(tmp_path / "nhc.log", UTC, 2026).to_pylist()
    dcgm = list(read_dcgm_health_dir(tmp_path / "dcgm"))
    assert nhc and dcgm
    failed_nodes = {c["node"] for c in nhc} | {c.node for c in dcgm if c.status == "Failure"}
    assert {f["node"] for f in truth["infra_failures"] if f["cause"] != "node_unresponsive"} <= failed_nodes


# --- kernel ring buffer captures (dmesg / journalctl -k) ---------------------------------------


def write_capture(root: Path, node: str, name: str, text: str) -> Path:
    path = root / node / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_dmesg_time_formats_all_read(tmp_path: Path):
    from flows.ingest.sources.clock import LocalClock
    from flows.ingest.sources.xid_dmesg import DmesgReadStats, read_xid_dmesg_dir

    xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    write_capture(
        tmp_path,
        "gpu1.cluster.local",  # a node name with dots: the folder is the node
        "epilog-1.log",
        f"2026-11-22T03:22:04,123456+00:00 {xid}\n"  # dmesg --time-format=iso
        f"kern  :err   : 2026-11-22T03:22:05,000000+01:00 {xid}\n"  # ... with --decode
        f"[Sun Nov 22 03:22:06 2026] {xid}\n"  # dmesg -T, local time (Berlin)
        "# boot_time: 2026-11-20T00:00:00Z\n"
        f"[171167.620236] {xid}\n"  # raw dmesg, seconds since boot
        f"Nov 22 03:22:07.498559 gpu1 kernel: {xid}\n"  # journalctl -o short-precise
        f"[171168.000001] gpu1 kernel: {xid}\n"  # journalctl -o short-monotonic
        "[171169.000000] NVRM: GPU at PCI:0000:3b:00: GPU-af4f89ae\n",  # context: skipped
    )
    clock, stats = LocalClock(ZoneInfo("Europe/Berlin")), DmesgReadStats()
    events = list(read_xid_dmesg_dir(tmp_path, clock, 2026, stats=stats))
    assert [e.ts.isoformat() for e in events] == [
        "2026-11-22T03:22:04.123456+00:00",
        "2026-11-22T02:22:05+00:00",
        "2026-11-22T02:22:06+00:00",
        "2026-11-21T23:32:47.620236+00:00",
        "2026-11-22T02:22:07.498559+00:00",
        "2026-11-21T23:32:48.000001+00:00",
    ]
    assert {e.node for e in events} == {"gpu1.cluster.local"} and {e.xid for e in events} == {79}
    assert events[0].source_file == "gpu1.cluster.local/epilog-1.log" and events[3].source_line == 5
    assert (stats.files, stats.matched, stats.other_lines) == (1, 6, 1)  # the boot_time line is not "other"


def test_dmesg_seconds_since_boot_without_a_boot_time_are_quarantined(tmp_path: Path):
    from flows.ingest.sources.quarantine import Quarantine
    from flows.ingest.sources.xid_dmesg import read_xid_dmesg_dir

    write_capture(tmp_path, "gpu2", "dmesg.txt", "[ 1843.308145] NVRM: Xid (PCI:0000:b3:00): 79, GPU has fallen off\n")
    quarantine = Quarantine(strict=False)
    assert list(read_xid_dmesg_dir(tmp_path, UTC, 2026, quarantine=quarantine)) == []
    (error,) = quarantine.errors
    assert (error.path.endswith("gpu2/dmesg.txt"), error.line, error.field) == (True, 1, "timestamp")
    assert "boot_time" in error.reason


def test_a_journal_line_with_an_impossible_date_is_quarantined_naming_its_capture(tmp_path: Path):
    from flows.ingest.sources.quarantine import Quarantine
    from flows.ingest.sources.xid_dmesg import read_xid_dmesg_dir

    xid = "kernel: NVRM: Xid (PCI:0000:b3:00): 79, GPU has fallen off the bus."
    write_capture(tmp_path, "gpu1", "journal.txt", f"Nov 22 03:22:07 gpu1 {xid}\n")
    write_capture(tmp_path, "gpu2", "journal.txt", f"Nov 22 03:22:07 gpu2 {xid}\nFeb 30 03:22:08 gpu2 {xid}\n")
    quarantine = Quarantine(strict=False)
    events = list(read_xid_dmesg_dir(tmp_path, UTC, 2026, quarantine=quarantine))
    assert [(e.node, e.ts.isoformat()) for e in events] == [
        ("gpu1", "2026-11-22T03:22:07+00:00"),
        ("gpu2", "2026-11-22T03:22:07+00:00"),
    ]
    (error,) = quarantine.errors
    assert (error.path.endswith("gpu2/journal.txt"), error.line, error.value) == (True, 2, "Feb 30 03:22:08")


def test_overlapping_captures_of_a_node_count_an_xid_once(tmp_path: Path):
    from flows.ingest.sources.xid_dmesg import DmesgReadStats, read_xid_dmesg_dir

    line = "2026-11-22T03:22:04,123456+00:00 NVRM: Xid (PCI:0000:3b:00): 48, DBE (double bit error)\n"
    write_capture(tmp_path, "gpu3", "a.log", line)
    write_capture(tmp_path, "gpu3", "b.log", line + line.replace("03:22:04", "04:00:00"))
    stats = DmesgReadStats()
    assert len(list(read_xid_dmesg_dir(tmp_path, UTC, 2026, stats=stats))) == 2 and stats.repeated_lines == 1


def test_real_dmesg_lines_from_issue_reports(health_fixtures: Path, tmp_path: Path):
    """Every Xid line of the real fixtures that carries a dmesg time prefix is read with its Xid."""
    import csv

    from flows.ingest.sources.xid_dmesg import read_xid_dmesg_dir

    with open(health_fixtures / "xid_lines.tsv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["xid"] and r["raw_line"].startswith("[")]
    assert len(rows) >= 6  # raw (monotonic) and -T (ctime) captures
    write_capture(
        tmp_path, "n1", "dmesg", "# boot_time: 2024-08-30T00:00:00Z\n" + "\n".join(r["raw_line"] for r in rows)
    )
    events = list(read_xid_dmesg_dir(tmp_path, UTC, 2024))
    assert [e.xid for e in events] == [int(r["xid"]) for r in rows]


# --- Meta GCM health checks -----------------------------------------------------------------------


def test_gcm_stdout_and_file_sink_records(tmp_path: Path):
    from flows.ingest.sources.gcm_health import GcmReadStats, read_gcm_health_dir

    stdout_sink = [
        {
            "node": "gpu7",
            "cluster": "c",
            "health_check": "xid errors",
            "type": "prolog",
            "result": 2,
            "_msg": "XID error: 48, XID causes: HW Error. ",
            "job_id": 21,
            "start_time": 1795404124.12,
            "end_time": 1795404124.35,
        },
    ]
    file_sink = {
        "int": {"result": 1, "job_id": 0},
        "double": {"start_time": 1795404000.0, "end_time": 1795404001.5},
        "normal": {
            "node": "gpu8",
            "health_check": "nvidia smi ecc_corrected",
            "type": "nagios",
            "_msg": "corrected ECC count 1200 > 1000",
        },
        "tags": {},
    }
    ok = {
        "int": {"result": 0},
        "double": {"end_time": 1795404002.0},
        "normal": {"node": "gpu9", "health_check": "check ibstat", "_msg": "ok"},
    }
    (tmp_path / "gpu7").mkdir()
    (tmp_path / "gpu7" / "stdout.log").write_text(json.dumps(stdout_sink) + "\n")
    (tmp_path / "health.log.1").write_text(json.dumps(file_sink) + "\n\n" + json.dumps(ok) + "\n")
    stats = GcmReadStats()
    checks = list(read_gcm_health_dir(tmp_path, stats=stats))
    assert [(c.node, c.check, c.status) for c in checks] == [
        ("gpu7", "xid errors", "CRITICAL"),
        ("gpu8", "nvidia smi ecc_corrected", "WARNING"),
    ]
    assert checks[0].ts.isoformat() == "2026-11-23T03:22:04.350000+00:00" and checks[0].message.startswith("XID")
    assert checks[0].source_file == "gpu7/stdout.log"
    assert (stats.files, stats.records, stats.ok_results, stats.incidents) == (2, 3, 1, 2)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("{not json", "record"),
        ('[{"node": "n", "health_check": "x", "result": 7, "end_time": 1}]', "result"),
        ('[{"health_check": "x", "result": 2, "end_time": 1}]', "node"),
        ('[{"node": "n", "health_check": "x", "result": 2}]', "start_time"),
        ('[{"node": "n", "health_check": "x", "result": 2, "end_time": "soon"}]', "end_time"),
    ],
)
def test_bad_gcm_record_is_quarantined_naming_the_field(tmp_path: Path, line: str, field: str):
    from flows.ingest.sources.gcm_health import read_gcm_health_dir
    from flows.ingest.sources.quarantine import Quarantine

    (tmp_path / "health.log").write_text('[{"node": "n", "health_check": "x", "result": 0, "end_time": 1}]\n' + line)
    quarantine = Quarantine(strict=False)
    assert list(read_gcm_health_dir(tmp_path, quarantine=quarantine)) == []
    (error,) = quarantine.errors
    assert (error.line, error.field) == (2, field)


# --- repair tickets ------------------------------------------------------------------------------


def test_repair_tickets(tmp_path: Path):
    from flows.ingest.sources.quarantine import Quarantine
    from flows.ingest.sources.repair_tickets import TicketReadStats, read_repair_tickets

    csv_path = tmp_path / "tickets.csv"
    csv_path.write_text(
        "ticket_id,node,opened_at,closed_at,category,summary\n"
        'T-1,gpu1,2026-11-02T10:00:00,2026-11-03T09:00:00,gpu,"Xid 79, reseated GPU 3"\n'
        "T-2,gpu2,2026-11-05T12:00:00+00:00,,,\n"
        "T-3,,2026-11-06T12:00:00,,,\n"
        "T-4,gpu4,yesterday,,,\n"
    )
    quarantine, stats = Quarantine(strict=False), TicketReadStats()
    tickets = list(read_repair_tickets(csv_path, ZoneInfo("America/New_York"), stats=stats, quarantine=quarantine))
    assert [(t.node, t.check, t.status, t.message) for t in tickets] == [
        ("gpu1", "gpu", "CLOSED", "T-1: Xid 79, reseated GPU 3"),
        ("gpu2", "repair", "OPEN", "T-2"),
    ]
    assert tickets[0].ts.isoformat() == "2026-11-02T15:00:00+00:00"  # site time zone
    assert [(e.line, e.field) for e in quarantine.errors] == [(4, "node"), (5, "opened_at")]
    assert (stats.rows, stats.tickets) == (4, 2)


def test_ticket_csv_without_its_columns_fails_naming_them(tmp_path: Path):
    from flows.ingest.sources.repair_tickets import read_repair_tickets

    csv_path = tmp_path / "tickets.csv"
    csv_path.write_text("id,host,when\n1,gpu1,2026-11-02\n")
    with pytest.raises(InputFormatError, match=r"tickets.csv:1: field header=.*missing columns node, opened_at"):
        list(read_repair_tickets(csv_path, UTC))


# --- scontrol show node -o ------------------------------------------------------------------------


def test_scontrol_snapshots_from_the_real_cluster(slurm_fixtures: Path):
    from flows.ingest.sources.scontrol_nodes import ScontrolReadStats, read_scontrol_nodes

    down = list(read_scontrol_nodes(slurm_fixtures / "scontrol_show_node.down.txt", UTC))
    assert [(e.node, e.state, e.reason, e.user, e.started_at.isoformat()) for e in down] == [
        ("node3", "DOWN", "xid 79 gpu fell off bus", "root", "2026-11-22T03:22:04+00:00"),
        ("node4", "DOWN*", "Not responding", "root", "2026-11-22T03:22:32+00:00"),
    ]
    stats = ScontrolReadStats()
    drain = list(read_scontrol_nodes(slurm_fixtures / "scontrol_show_node.drain.txt", UTC, stats))
    # node2 is MIXED+DRAIN (still running a job): sacctmgr has no event for it yet (pitfall 16)
    assert [(e.node, e.state, e.reason) for e in drain] == [
        ("node2", "DRAIN", "nvlink errors, drain after job"),
        ("node4", "DRAIN", "ecc: uncorrectable errors on gpu 3"),
    ]
    assert (stats.nodes, stats.out_of_service) == (4, 2)
    assert list(read_scontrol_nodes(slurm_fixtures / "scontrol_show_node.final.txt", UTC)) == []


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ("DOWN", "DOWN"),
        ("DOWN+NOT_RESPONDING", "DOWN*"),
        ("DOWN*", "DOWN*"),
        ("IDLE+DRAIN", "DRAIN"),
        ("DRAINED", "DRAIN"),
        ("MIXED+DRAIN+RESERVED", "DRAIN"),
        ("FAIL", "FAIL"),
        ("ALLOCATED", None),
        ("IDLE", None),
    ],
)
def test_node_state_to_event_state(state: str, expected: str | None):
    from flows.ingest.sources.scontrol_nodes import event_state

    assert event_state(state) == expected


def test_dcgm_diag_results_become_checks(tmp_path: Path):
    diag = {
        "DCGM GPU Diagnostic": {
            "version": "3.3.1",
            "test_categories": [
                {"category": "Deployment", "tests": [{"name": "Denylist", "results": [{"status": "Pass"}]}]},
                {
                    "category": "Hardware",
                    "tests": [
                        {
                            "name": "GPU Memory",
                            "results": [
                                {"gpu_id": "0", "status": "Pass"},
                                {
                                    "gpu_id": "3",
                                    "status": "Fail",
                                    "warnings": [{"warning": "Error using CUDA API cudaMalloc", "error_id": 11}],
                                },
                            ],
                        },
                        {"name": "Diagnostic", "results": [{"gpu_ids": "1", "status": "WARN", "warnings": ["slow"]}]},
                        {"name": "Targeted Power", "results": [{"gpu_id": "2", "status": "Skip"}]},
                    ],
                },
            ],
        }
    }
    (tmp_path / "gpu5").mkdir()
    (tmp_path / "gpu5" / "20261102T101500Z.json").write_text(json.dumps(diag))
    stats = DcgmReadStats()
    checks = list(read_dcgm_health_dir(tmp_path, stats=stats))
    assert [(c.node, c.check, c.status, c.message) for c in checks] == [
        ("gpu5", "diag GPU Memory", "Failure", "GPU 3: Error using CUDA API cudaMalloc"),
        ("gpu5", "diag Diagnostic", "Warning", "GPU 1: slow"),
    ]
    assert checks[0].ts.isoformat() == "2026-11-02T10:15:00+00:00" and stats.incidents == 2
