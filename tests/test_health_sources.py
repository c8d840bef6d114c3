"""NHC log lines and DCGM health reports: readers on real-format samples and on bad input."""

import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from flows.months import Month
from flows.simulate import SimParams, dcgm_health_json, simulate
from flows.sources import InputFormatError
from flows.sources.dcgm_health import DcgmReadStats, read_dcgm_health_dir
from flows.sources.nhc_log import read_nhc_log
from flows.sources.syslog import SyslogReadStats

UTC = ZoneInfo("UTC")


def test_nhc_lines_as_syslog_writes_them(tmp_path: Path):
    log = tmp_path / "messages"
    log.write_text(
        # the formats of LBNL NHC and Azure's aznhc (../shared/docs/anchors.md §4), behind syslog prefixes
        "Oct  3 12:00:01 gpu0042 nhc[811]: ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted\n"
        "Oct  3 12:00:02 gpu0042 nhc[811]: SUCCESS:  nhc:  Health check passed:  check_gpu_count: Expected 8 and found 8\n"
        "2026-10-03T12:05:00+02:00 gpu0043 nhc[900]: ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port mlx5_0:1 is ACTIVE\n"
    )
    stats = SyslogReadStats()
    checks = list(read_nhc_log(log, UTC, 2026, stats))
    assert [(c.node, c.check, c.message) for c in checks] == [
        ("gpu0042", "check_fs_mount", "/home not mounted"),
        ("gpu0043", "check_hw_ib", "No IB port mlx5_0:1 is ACTIVE"),
    ]
    assert checks[1].ts.hour == 10  # +02:00 converted to UTC
    assert stats.other_lines == 1 and stats.matched == 2


def test_nhc_failed_check_without_prefix_names_the_line(tmp_path: Path):
    log = tmp_path / "nhc.log"
    log.write_text("ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted\n")
    with pytest.raises(InputFormatError, match=r"nhc.log:1: field timestamp"):
        list(read_nhc_log(log, UTC, 2026))


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
    checks = list(read_dcgm_health_dir(tmp_path, stats))
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
    nhc = list(read_nhc_log(tmp_path / "nhc.log", UTC, 2026))
    dcgm = list(read_dcgm_health_dir(tmp_path / "dcgm"))
    assert nhc and dcgm
    failed_nodes = {c.node for c in nhc} | {c.node for c in dcgm if c.status == "Failure"}
    assert {f["node"] for f in truth["infra_failures"] if f["cause"] != "node_unresponsive"} <= failed_nodes
