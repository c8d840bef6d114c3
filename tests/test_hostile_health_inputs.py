"""Issue 50's hostile inputs for the node-health readers and their times: every value a line can hold
(a year-1 or year-9999 time in any zone, infinities, 5,000-digit numbers, JSON nested 100,000 deep,
types a tool never writes) is quarantined with its file, line and field, never a raw exception that
stops the file or the directory; times are read as written and inside the clock's window of valid
times; a line that names a reader's marker is never passed over as noise; each reader's statistics
account for every line; no reader's time grows worse than linearly in a line's length.

Each case reads the bad input beside a good one and asserts both outcomes.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest
from hostile import Outcome, hostile

from flows.ingest.sources.clock import LocalClock
from flows.ingest.sources.dcgm_health import DcgmReadStats, read_dcgm_health_dir
from flows.ingest.sources.dcgm_series import DcgmSeriesReadStats, header_line, read_dcgm_series
from flows.ingest.sources.errors import InputFormatError
from flows.ingest.sources.gcm_health import GcmReadStats, read_gcm_health_dir
from flows.ingest.sources.ipmi_sel import SelReadStats, read_ipmi_sel_dir
from flows.ingest.sources.limits import MAX_FIELD_CHARS
from flows.ingest.sources.link_syslog import LinkReadStats, read_link_syslog
from flows.ingest.sources.nhc_log import read_nhc_log
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.repair_tickets import TicketReadStats, read_repair_tickets
from flows.ingest.sources.syslog import SyslogReadStats
from flows.ingest.sources.xid_dmesg import DmesgReadStats, read_xid_dmesg_dir
from flows.ingest.sources.xid_syslog import read_xid_syslog

DUMPED = datetime(2026, 11, 30, tzinfo=UTC)  # the dump's time: the window of valid times ends a day later
# east of UTC a year-1 time is before the first UTC date, west of it a year-9999 one after the last
ZONES = ("Asia/Tokyo", "America/Los_Angeles")
XID = "kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
NHC = "nhc[811]: ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted"
LINK = "kernel: ixgbe 0000:08:00.0 eth11: NIC Link is Down"
GOOD = "2026-11-03T10:00:00+00:00 gpu0001 "
DMESG_XID = "NVRM: Xid (PCI:0000:3b:00): 48, DBE (double bit error)"
GOOD_DMESG = f"2026-11-22T03:22:04,000000+00:00 {DMESG_XID}\n"
GOOD_SEL = "  3a | 11/14/2026 | 23:09:44 | Critical Interrupt #0x11 | Bus Uncorrectable error | Asserted\n"
HEALTHY = {"header": ["Health Monitor Report"], "body": {"Overall Health": {"value": "Healthy"}}}
T0 = 1_790_000_000 - 1_790_000_000 % 60  # 2026-09-21, a whole minute
DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5000


def clock(zone: str = "UTC") -> LocalClock:
    return LocalClock(ZoneInfo(zone), as_of=DUMPED)


def lenient() -> Quarantine:
    return Quarantine(strict=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def where(errors: Iterable[InputFormatError]) -> list[tuple[str, int, str]]:
    """Each error's file name, line and field."""
    return [(Path(e.path).name, e.line, e.field) for e in errors]


def rows(found: Any) -> list[dict]:
    """A reader's rows as dicts (an Arrow table's or row objects')."""
    return found.to_pylist() if isinstance(found, pa.Table) else [asdict(row) for row in found]


# --- a time beyond the dates UTC holds, in any zone, in every reader of a syslog or capture line -------


def syslog_case(reader: Callable[..., Any], message: str) -> Callable[[Path, str, list[str]], tuple]:
    def run(tmp_path: Path, zone: str, stamps: list[str]) -> tuple:
        lines = [GOOD + message] + [f"{stamp} gpu0002 {message}" for stamp in stamps]
        path = write(tmp_path / "x.log", "\n".join(lines) + "\n")
        quarantine, stats = lenient(), (LinkReadStats if reader is read_link_syslog else SyslogReadStats)()
        found = rows(reader(path, clock(zone), 2026, stats=stats, quarantine=quarantine))
        return [r["node"] for r in found], quarantine, stats

    return run


SYSLOG_READERS = {
    "xid_syslog": syslog_case(read_xid_syslog, XID),
    "nhc_syslog": syslog_case(read_nhc_log, NHC),
    "link_syslog": syslog_case(read_link_syslog, LINK),
}


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("kind", SYSLOG_READERS)
@hostile(Outcome.QUARANTINE)
def test_a_syslog_time_in_year_1_or_9999_is_quarantined_and_the_file_read(tmp_path: Path, kind: str, zone: str):
    nodes, quarantine, stats = SYSLOG_READERS[kind](
        tmp_path, zone, ["0001-01-01T00:00:00", "9999-12-31T23:59:59", "0001-01-01T00:00:00+05:00"]
    )
    assert nodes == ["gpu0001"]
    assert where(quarantine.errors) == [("x.log", 2, "timestamp"), ("x.log", 3, "timestamp"), ("x.log", 4, "timestamp")]
    assert (stats.lines, stats.matched, stats.other_lines) == (4, 4, 0)


@pytest.mark.parametrize("kind", SYSLOG_READERS)
@hostile(Outcome.QUARANTINE)
def test_a_syslog_time_in_1970_or_2999_or_with_an_offset_no_zone_has_is_quarantined(tmp_path: Path, kind: str):
    stamps = ["1970-01-01T00:00:00Z", "2999-01-01T00:00:00+00:00", "2026-11-03T10:00:00+99:99"]
    nodes, quarantine, _ = SYSLOG_READERS[kind](tmp_path, "Europe/Berlin", stamps)
    assert nodes == ["gpu0001"]
    assert [(e.line, e.field) for e in quarantine.errors] == [(n, "timestamp") for n in (2, 3, 4)]
    assert "14:00" in quarantine.errors[2].reason  # the offset is refused, never applied


@hostile(Outcome.QUARANTINE)
def test_a_bsd_syslog_time_outside_the_window_is_quarantined(tmp_path: Path):
    """A BSD stamp takes the report month's year: in 1999 it is before the earliest valid date."""
    path = write(tmp_path / "x.log", f"Nov  3 10:00:00 gpu0001 {XID}\n")
    quarantine = lenient()
    assert read_xid_syslog(path, clock(), 1999, quarantine=quarantine).num_rows == 0
    assert where(quarantine.errors) == [("x.log", 1, "timestamp")]


@hostile(Outcome.FIGURE)
def test_a_syslog_time_with_an_offset_is_that_instant_whatever_the_site_zone(tmp_path: Path):
    path = write(tmp_path / "x.log", f"2026-11-22T03:21:55+05:00 gpu0001 {XID}\n")
    (row,) = read_xid_syslog(path, clock("America/New_York"), 2026).to_pylist()
    assert row["ts"] == datetime(2026, 11, 21, 22, 21, 55)  # naive UTC


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(
    ("capture", "field"),
    [
        pytest.param(f"[Mon Jan  1 00:00:00 0001] {DMESG_XID}\n", "timestamp", id="ctime-year-1"),
        pytest.param(f"[Fri Dec 31 23:59:59 9999] {DMESG_XID}\n", "timestamp", id="ctime-year-9999"),
        pytest.param(f"0001-01-01T00:00:00,000000+05:00 {DMESG_XID}\n", "timestamp", id="iso-year-1"),
        pytest.param(f"9999-12-31T23:59:59,000000-05:00 {DMESG_XID}\n", "timestamp", id="iso-year-9999"),
        pytest.param(f"1970-01-01T00:00:00,000000+00:00 {DMESG_XID}\n", "timestamp", id="iso-1970"),
        pytest.param(f"2999-01-01T00:00:00,000000+00:00 {DMESG_XID}\n", "timestamp", id="iso-2999"),
        pytest.param(f"# boot_time: 0001-01-01T00:00:00\n[5.000000] {DMESG_XID}\n", "boot_time", id="boot-year-1"),
        pytest.param(f"# boot_time: 9999-12-31T23:59:59\n[5.000000] {DMESG_XID}\n", "boot_time", id="boot-9999"),
        pytest.param(f"# boot_time: 2026-11-20T00:00:00Z\n[{'9' * 12}.0] {DMESG_XID}\n", "timestamp", id="uptime"),
        pytest.param(f"Jan 01 00:00:00 gpu2 kernel: {DMESG_XID}\n", "timestamp", id="journal-before-window"),
    ],
)
@hostile(Outcome.QUARANTINE)
def test_a_capture_time_beyond_the_window_is_quarantined_and_the_other_node_lands(
    tmp_path: Path, capture: str, field: str, zone: str
):
    write(tmp_path / "gpu1" / "dmesg.log", GOOD_DMESG)
    write(tmp_path / "gpu2" / "dmesg.log", capture)
    quarantine, stats = lenient(), DmesgReadStats()
    events = list(read_xid_dmesg_dir(tmp_path, clock(zone), 1999, stats=stats, quarantine=quarantine))
    assert [(e.node, e.xid) for e in events] == [("gpu1", 48)]
    assert [(name, field) for name, _, field in where(quarantine.errors)][0] == ("dmesg.log", field)
    assert stats.lines == len(events) + len(quarantine.errors) + stats.other_lines + stats.boot_time_lines


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(
    "date", ["01/01/0001 | 00:00:00", "12/31/9999 | 23:59:59", "01/01/1970 | 00:00:00", "01/01/2999 | 00:00:00 UTC"]
)
@hostile(Outcome.QUARANTINE)
def test_a_sel_time_beyond_the_window_is_quarantined_and_the_other_entry_lands(tmp_path: Path, date: str, zone: str):
    bad = f"  3b | {date} | Critical Interrupt #0x11 | Bus Uncorrectable error | Asserted\n"
    write(tmp_path / "gpu1" / "sel.txt", GOOD_SEL + bad)
    quarantine = lenient()
    checks = list(read_ipmi_sel_dir(tmp_path, clock(zone), quarantine=quarantine))
    assert [c.message for c in checks] == ["record 3a"]
    assert where(quarantine.errors) == [("sel.txt", 2, "date")]


# --- repair tickets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "field"),
    [
        pytest.param("gpu2,1970-01-01T00:00:00,T2,", "opened_at", id="opened-1970"),
        pytest.param("gpu2,2999-01-01T00:00:00,T2,", "opened_at", id="opened-2999"),
        pytest.param("gpu2,0001-01-01T00:00:00+05:00,T2,", "opened_at", id="opened-year-1-with-offset"),
        pytest.param("gpu2,2026-11-01T00:00:00+23:00,T2,", "opened_at", id="opened-offset-no-zone-has"),
        pytest.param("gpu2,2026-11-01T00:00:00,T2,not a time", "closed_at", id="closed-not-a-time"),
        pytest.param("gpu2,2026-11-01T00:00:00,T2,2999-01-01T00:00:00", "closed_at", id="closed-2999"),
        pytest.param("gpu2,2026-11-01T00:00:00,T2,2026-10-01T00:00:00", "closed_at", id="closed-before-opened"),
    ],
)
@hostile(Outcome.QUARANTINE)
def test_a_ticket_time_that_is_none_or_outside_the_window_is_quarantined(tmp_path: Path, row: str, field: str):
    path = write(tmp_path / "tickets.csv", f"node,opened_at,ticket_id,closed_at\ngpu1,2026-11-01T00:00:00,T1,\n{row}\n")
    quarantine, stats = lenient(), TicketReadStats()
    tickets = list(read_repair_tickets(path, clock("Europe/Berlin"), stats=stats, quarantine=quarantine))
    assert [(t.node, t.status) for t in tickets] == [("gpu1", "OPEN")]  # never CLOSED by a closed_at that is none
    assert where(quarantine.errors) == [("tickets.csv", 3, field)]
    assert stats.rows == stats.tickets + len(quarantine.errors)


@hostile(Outcome.FIGURE)
def test_a_ticket_time_with_an_offset_is_that_instant_and_a_closed_one_is_closed(tmp_path: Path):
    path = write(tmp_path / "t.csv", "node,opened_at,closed_at\ngpu1,2026-11-22T03:21:55+05:00,2026-11-23T00:00:00\n")
    (ticket,) = read_repair_tickets(path, clock("America/New_York"))
    assert (ticket.ts, ticket.status) == (datetime(2026, 11, 21, 22, 21, 55, tzinfo=UTC), "CLOSED")


# --- JSON: deep nesting, huge integers, infinities, strict types --------------------------------------


def gcm_line(**fields: Any) -> str:
    record = {"node": "gpu1", "health_check": "xid errors", "result": 2, "_msg": "x", "end_time": 1795000001}
    return json.dumps([{**record, **fields}])


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(DEEP, "record", id="nested-100000-deep"),
        pytest.param(gcm_line(result=2).replace('"result": 2', f'"result": {HUGE}'), "record", id="5000-digits"),
        pytest.param(gcm_line(end_time=1).replace("1}]", "NaN}]"), "record", id="end-time-nan"),
        pytest.param(gcm_line(end_time=1).replace("1}]", "1e400}]"), "record", id="end-time-1e400"),
        pytest.param(gcm_line(end_time=True), "end_time", id="end-time-true"),
        pytest.param(gcm_line(end_time="1795000001"), "end_time", id="end-time-text"),
        pytest.param(gcm_line(end_time=1e300), "end_time", id="end-time-beyond-dates"),
        pytest.param(gcm_line(end_time=0), "end_time", id="end-time-1970"),
        pytest.param(gcm_line(end_time=32503680000), "end_time", id="end-time-3000"),
        pytest.param(gcm_line(result=True), "result", id="result-true"),
        pytest.param(gcm_line(result=2.0), "result", id="result-2.0"),
        pytest.param(gcm_line(result=4), "result", id="result-4"),
        pytest.param(gcm_line(_msg=5), "_msg", id="message-a-number"),
    ],
)
@hostile(Outcome.QUARANTINE)
def test_a_gcm_line_beyond_jsons_bounds_or_of_the_wrong_type_is_quarantined(tmp_path: Path, bad: str, field: str):
    write(tmp_path / "a.log", bad + "\n" + gcm_line() + "\n")
    write(tmp_path / "b.log", gcm_line() + "\n")
    quarantine, stats = lenient(), GcmReadStats()
    checks = list(read_gcm_health_dir(tmp_path, clock(), stats=stats, quarantine=quarantine))
    assert [(c.source_file, c.source_line, c.status) for c in checks] == [
        ("a.log", 2, "CRITICAL"),
        ("b.log", 1, "CRITICAL"),
    ]
    assert where(quarantine.errors) == [("a.log", 1, field)]
    assert stats.lines == stats.blank_lines + stats.record_lines + len(quarantine.errors)


def dcgm_dir(tmp_path: Path, bad: str, name: str = "20261101T000000Z.json") -> tuple[list, Quarantine, DcgmReadStats]:
    write(tmp_path / "gpu1" / "20261101T000000Z.json", json.dumps(HEALTHY))
    write(tmp_path / "gpu1" / "20261102T000000Z.json", json.dumps(nvlink("3")))
    write(tmp_path / "gpu2" / name, bad)
    quarantine, stats = lenient(), DcgmReadStats()
    return list(read_dcgm_health_dir(tmp_path, clock(), stats=stats, quarantine=quarantine)), quarantine, stats


def nvlink(count: str) -> dict:
    return {
        "header": ["NVLINK Error Counts", "GPU 0"],
        "body": {"Link 0": {"children": {"Replay Error": {"value": count}}}},
    }


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(DEEP, "document", id="nested-100000-deep"),
        pytest.param(json.dumps(HEALTHY) + "\n" + DEEP, "document", id="second-document-nested-deep"),
        pytest.param(json.dumps(HEALTHY).replace('"Healthy"', HUGE), "document", id="5000-digits"),
        pytest.param(json.dumps(HEALTHY).replace('"Healthy"', "Infinity"), "document", id="infinity"),
        pytest.param(json.dumps(HEALTHY).replace('"Healthy"', "true"), "body.Overall Health.value", id="verdict-true"),
        pytest.param(
            json.dumps(nvlink("3")).replace('"3"', "3.0"), "body.Link 0.children.Replay Error.value", id="count-3.0"
        ),
        pytest.param("", "document", id="empty-capture"),
        pytest.param(" \n\n", "document", id="blank-capture"),
        pytest.param(json.dumps(nvlink("-5")), "Link 0.Replay Error", id="negative-counter"),
        pytest.param(json.dumps(nvlink(HUGE)), "Link 0.Replay Error", id="counter-of-5000-digits"),
        pytest.param(json.dumps(nvlink("1_000")), "Link 0.Replay Error", id="counter-1_000"),
    ],
)
@hostile(Outcome.QUARANTINE)
def test_a_dcgm_file_beyond_jsons_bounds_or_empty_is_quarantined_and_the_directory_read(
    tmp_path: Path, bad: str, field: str
):
    checks, quarantine, stats = dcgm_dir(tmp_path, bad)
    assert [(c.node, c.status) for c in checks] == [("gpu1", "Failure")]  # the other node's files are read
    assert where(quarantine.errors) == [("20261101T000000Z.json", 1, field)]
    assert (stats.files, stats.healthy_files, stats.files_with_incidents, stats.files_quarantined) == (3, 1, 1, 1)


@hostile(Outcome.QUARANTINE)
def test_a_dcgm_file_timed_before_the_window_is_quarantined(tmp_path: Path):
    _, quarantine, _ = dcgm_dir(tmp_path, json.dumps(HEALTHY), name="19700101T000000Z.json")
    assert where(quarantine.errors) == [("19700101T000000Z.json", 1, "file name")]


@hostile(Outcome.FIGURE)
def test_a_negative_nvlink_count_is_never_the_next_captures_baseline(tmp_path: Path):
    write(tmp_path / "gpu1" / "20261101T000000Z.json", json.dumps(nvlink("-5")))
    write(tmp_path / "gpu1" / "20261102T000000Z.json", json.dumps(nvlink("0")))
    write(tmp_path / "gpu1" / "20261103T000000Z.json", json.dumps(nvlink("2")))
    quarantine = lenient()
    checks = list(read_dcgm_health_dir(tmp_path, clock(), quarantine=quarantine))
    assert [c.message for c in checks] == ["GPU 0 Link 0: 2 new Replay Error (total 2)"]  # not 5 new at 0
    assert where(quarantine.errors) == [("20261101T000000Z.json", 1, "Link 0.Replay Error")]


def series_file(tmp_path: Path, *lines: str) -> Path:
    header = header_line("http://127.0.0.1:9090", "{...}", T0, T0 + 1200, 60, "Hostname")
    return write(tmp_path / "dcgm_series.jsonl", header + "".join(line + "\n" for line in lines))


def series(host: object = "gpu7", runs: object = None, name: str = "DCGM_FI_DEV_XID_ERRORS") -> str:
    runs = runs if runs is not None else [[T0, T0, "0"], [T0 + 60, T0 + 60, "79"]]
    return json.dumps({"metric": {"__name__": name, "Hostname": host, "gpu": "0"}, "runs": runs})


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        pytest.param(DEEP, "series", id="nested-100000-deep"),
        pytest.param(
            series(runs=[[T0, T0, "0"], [0, 0, "79"]]).replace("[0, 0,", f"[{HUGE}, {HUGE},"),
            "series",
            id="5000-digit-time",
        ),
        pytest.param(
            series(runs=[[T0, T0, "0"], [0, 0, "79"]]).replace("[0, 0,", "[Infinity, Infinity,"),
            "series",
            id="infinite-time",
        ),
        pytest.param(
            series(runs=[[T0, T0, "0"], [0, 0, "79"]]).replace("[0, 0,", "[1e400, 1e400,"), "series", id="1e400-time"
        ),
        pytest.param(series(runs=[[T0, T0, "0"], [1e300, 1e300, "79"]]), "runs", id="time-1e300"),
        pytest.param(series(runs=[[T0, T0, "0"], [10**19, 10**19, "79"]]), "runs", id="time-beyond-dates"),
        pytest.param(series(runs=[[T0, T0, "0"], [True, True, "79"]]), "runs", id="time-true"),
        pytest.param(series(runs=[[T0, T0, "0"], [0, 0, "79"]]), "runs", id="time-1970"),
        pytest.param(series(runs=[[T0, T0, "0"], [T0 + 120, T0 + 60, "79"]]), "runs", id="run-ends-before-it-starts"),
        pytest.param(series(runs=[[T0, T0, "0"], [T0 + 60, T0 + 60, 79]]), "runs", id="value-not-text"),
        pytest.param(series(runs=[[T0, T0, "0"], [T0 + 60, T0 + 60, "7_9"]]), "runs", id="value-7_9"),
        pytest.param(series(host=12), "Hostname", id="host-label-a-number"),
        pytest.param(
            series(
                name="DCGM_EXP_XID_ERRORS_COUNT",
                runs=[[T0 + 60 * i, T0 + 60 * i, str(i % 2 * 90_000)] for i in range(6)],
            ).replace('"gpu": "0"', '"gpu": "1", "xid": "79"'),
            "DCGM_EXP_XID_ERRORS_COUNT",
            id="xid-count-flood",
        ),
        pytest.param(series(host=["gpu8"]), "Hostname", id="host-label-a-list"),
    ],
)
@hostile(Outcome.QUARANTINE)
def test_a_series_beyond_jsons_bounds_or_of_the_wrong_type_is_quarantined(tmp_path: Path, bad: str, field: str):
    path = series_file(tmp_path, series(), bad)
    quarantine, stats = lenient(), DcgmSeriesReadStats()
    events = list(read_dcgm_series(path, clock(), stats=stats, quarantine=quarantine))
    assert [(e.node, e.xid) for e in events] == [("gpu7", 79)]  # never node "12"
    assert where(quarantine.errors) == [("dcgm_series.jsonl", 3, field)]
    assert stats.lines == 1 + stats.blank_lines + stats.series + len(quarantine.errors) - stats.series_quarantined


@pytest.mark.parametrize(
    "header",
    [
        pytest.param(DEEP, id="nested-100000-deep"),
        pytest.param(json.dumps({"dcgm_series": 1, "start": 1, "end": 2, "step_seconds": 1, "host_label": "h"}).replace(": 1,", f": {HUGE},", 1), id="5000-digits"),
        pytest.param(json.dumps({"dcgm_series": True, "start": 1, "end": 2, "step_seconds": 60, "host_label": "h"}), id="version-true"),
        pytest.param(json.dumps({"dcgm_series": 1, "start": 1, "end": 2, "step_seconds": True, "host_label": "h"}), id="step-true"),
        pytest.param(json.dumps({"dcgm_series": 1, "start": 1.5, "end": 2, "step_seconds": 60, "host_label": "h"}), id="start-1.5"),
        pytest.param(json.dumps({"dcgm_series": 1, "start": 9, "end": 2, "step_seconds": 60, "host_label": "h"}), id="ends-before-start"),
    ],
)  # fmt: skip
@hostile(Outcome.QUARANTINE)
def test_a_series_file_whose_header_is_beyond_bounds_is_quarantined_whole(tmp_path: Path, header: str):
    path = write(tmp_path / "dcgm_series.jsonl", header + "\n" + series() + "\n")
    quarantine, stats = lenient(), DcgmSeriesReadStats()
    assert list(read_dcgm_series(path, clock(), stats=stats, quarantine=quarantine)) == []
    assert [e.line for e in quarantine.errors] == [1] and stats.files_quarantined == 1


# --- lost signals: the marker without its fields ---------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        pytest.param("kernel: NVRM: Xid (PCI:0000:3b:00): -5, x", id="negative"),
        pytest.param("kernel: NVRM: Xid (PCI:0000:3b:00):", id="cut-after-the-colon"),
        pytest.param("kernel: NVRM: Xid (PCI:0000:3b:00): ٧٩, x", id="arabic-indic-digits"),
        pytest.param(f"kernel: NVRM: Xid (PCI:0000:3b:00): {HUGE}, x", id="5000-digits"),
    ],
)
@hostile(Outcome.QUARANTINE)
def test_an_xid_syslog_line_whose_number_cannot_be_read_is_quarantined_not_skipped(tmp_path: Path, message: str):
    path = write(tmp_path / "x.log", f"{GOOD}{XID}\n{GOOD}{message}\n{GOOD}kernel: eth0: link up\n")
    quarantine, stats = lenient(), SyslogReadStats()
    assert read_xid_syslog(path, clock(), 2026, stats=stats, quarantine=quarantine)["xid"].to_pylist() == [79]
    assert where(quarantine.errors) == [("x.log", 2, "xid")]
    assert (stats.lines, stats.matched, stats.other_lines) == (3, 2, 1)


@pytest.mark.parametrize(
    "message",
    [
        pytest.param("NVRM: Xid (PCI:0000:3b:00): -5, x", id="negative"),
        pytest.param("NVRM: Xid (PCI:0000:3b:00):", id="cut-after-the-colon"),
        pytest.param(f"NVRM: Xid (PCI:0000:3b:00): {HUGE}, x", id="5000-digits"),
    ],
)  # fmt: skip
@hostile(Outcome.QUARANTINE)
def test_a_dmesg_line_whose_xid_cannot_be_read_is_quarantined_not_skipped(tmp_path: Path, message: str):
    write(tmp_path / "gpu1" / "dmesg.log", GOOD_DMESG + f"2026-11-22T03:22:05,000000+00:00 {message}\nother\n")
    quarantine, stats = lenient(), DmesgReadStats()
    assert [e.xid for e in read_xid_dmesg_dir(tmp_path, clock(), 2026, stats=stats, quarantine=quarantine)] == [48]
    assert where(quarantine.errors) == [("dmesg.log", 2, "xid")]
    assert (stats.lines, stats.matched, stats.other_lines) == (3, 2, 1)


@pytest.mark.parametrize(
    "message",
    [
        pytest.param("nhc[811]: ERROR:  nhc:  Health check failed:", id="cut-after-the-colon"),
        pytest.param("nhc[811]: ERROR:  nhc:  Health check failed:  : no check named", id="no-check-name"),
        pytest.param("nhc[811]: Health check failed: check_fs_mount: x", id="no-status"),
    ],
)
@hostile(Outcome.QUARANTINE)
def test_an_nhc_failed_check_that_does_not_parse_is_quarantined_not_skipped(tmp_path: Path, message: str):
    path = write(tmp_path / "nhc.log", f"{GOOD}{NHC}\n{GOOD}{message}\n{GOOD}nhc[811]: Node Health Check completed\n")
    quarantine, stats = lenient(), SyslogReadStats()
    assert read_nhc_log(path, clock(), 2026, stats=stats, quarantine=quarantine)["check_name"].to_pylist() == [
        "check_fs_mount"
    ]
    assert where(quarantine.errors) == [("nhc.log", 2, "check")]
    assert (stats.lines, stats.matched, stats.other_lines) == (3, 2, 1)


@hostile(Outcome.QUARANTINE)
def test_a_capture_directly_in_a_dmesg_or_sel_directory_is_quarantined_and_counted(tmp_path: Path):
    write(tmp_path / "dmesg" / "gpu1" / "a.log", GOOD_DMESG)
    write(tmp_path / "dmesg" / "loose.log", GOOD_DMESG)
    quarantine, stats = lenient(), DmesgReadStats()
    assert len(list(read_xid_dmesg_dir(tmp_path / "dmesg", clock(), 2026, stats=stats, quarantine=quarantine))) == 1
    assert where(quarantine.errors) == [("loose.log", 1, "file name")]
    assert (stats.files, stats.files_quarantined) == (2, 1)

    write(tmp_path / "sel" / "gpu1" / "a.txt", GOOD_SEL)
    write(tmp_path / "sel" / "loose.txt", GOOD_SEL)
    quarantine, sel = lenient(), SelReadStats()
    assert len(list(read_ipmi_sel_dir(tmp_path / "sel", clock(), stats=sel, quarantine=quarantine))) == 1
    assert where(quarantine.errors) == [("loose.txt", 1, "file name")]
    assert (sel.files, sel.files_quarantined) == (2, 1)


@hostile(Outcome.QUARANTINE)
def test_a_lone_carriage_return_keeps_the_line_numbers_editors_show(tmp_path: Path):
    """A CR inside a line (or a CRLF line) ends no line: the quarantine names the line `sed -n Np` shows."""
    with_cr = XID.replace("bus.", "bus.\rmore")
    text = f"{GOOD}{XID}\r\n{GOOD}{with_cr}\n1970-01-01T00:00:00Z gpu2 {XID}\n"
    path = write(tmp_path / "x.log", text)
    quarantine, stats = lenient(), SyslogReadStats()
    assert read_xid_syslog(path, clock(), 2026, stats=stats, quarantine=quarantine)["source_line"].to_pylist() == [1, 2]
    assert where(quarantine.errors) == [("x.log", 3, "timestamp")] and stats.lines == 3

    write(tmp_path / "dmesg" / "gpu1" / "a.log", f"x\ry\n{GOOD_DMESG}1970-01-01T00:00:00,000000+00:00 {DMESG_XID}\n")
    quarantine = lenient()
    assert [e.source_line for e in read_xid_dmesg_dir(tmp_path / "dmesg", clock(), 2026, quarantine=quarantine)] == [2]
    assert where(quarantine.errors) == [("a.log", 3, "timestamp")]


@hostile(Outcome.QUARANTINE)
def test_a_capture_in_a_subfolder_of_its_node_is_named_from_the_directory(tmp_path: Path):
    write(tmp_path / "gpu1" / "2026-11" / "a.log", GOOD_DMESG + f"Nov 99 00:00:00 gpu1 kernel: {DMESG_XID}\n")
    quarantine = lenient()
    events = list(read_xid_dmesg_dir(tmp_path, clock(), 2026, quarantine=quarantine))
    assert [e.source_file for e in events] == ["gpu1/2026-11/a.log"]
    assert [(Path(e.path), e.line) for e in quarantine.errors] == [(tmp_path / "gpu1" / "2026-11" / "a.log", 2)]

    write(tmp_path / "sel" / "gpu1" / "2026-11" / "a", GOOD_SEL)
    assert [c.source_file for c in read_ipmi_sel_dir(tmp_path / "sel", clock())] == ["gpu1/2026-11/a"]


# --- bounded work --------------------------------------------------------------------------------------


@hostile(Outcome.QUARANTINE)
def test_a_line_longer_than_any_field_is_quarantined_in_every_line_reader(tmp_path: Path):
    long = "x" * (MAX_FIELD_CHARS + 1)
    syslog = write(tmp_path / "x.log", f"{GOOD}{XID} {long}\n{GOOD}{XID}\n")
    quarantine = lenient()
    assert read_xid_syslog(syslog, clock(), 2026, quarantine=quarantine).num_rows == 1
    assert where(quarantine.errors) == [("x.log", 1, "line")]

    write(tmp_path / "dmesg" / "gpu1" / "a.log", f"2026-11-22T03:22:04,000000+00:00 {DMESG_XID} {long}\n{GOOD_DMESG}")
    quarantine = lenient()
    assert len(list(read_xid_dmesg_dir(tmp_path / "dmesg", clock(), 2026, quarantine=quarantine))) == 1
    assert where(quarantine.errors) == [("a.log", 1, "line")]

    write(tmp_path / "sel" / "gpu1" / "a.txt", GOOD_SEL.replace("Asserted", f"Asserted | {long}") + GOOD_SEL)
    quarantine = lenient()
    assert len(list(read_ipmi_sel_dir(tmp_path / "sel", clock(), quarantine=quarantine))) == 1
    assert where(quarantine.errors) == [("a.txt", 1, "line")]

    write(tmp_path / "gcm" / "a.log", gcm_line(_msg=long) + "\n" + gcm_line() + "\n")
    quarantine = lenient()
    assert len(list(read_gcm_health_dir(tmp_path / "gcm", clock(), quarantine=quarantine))) == 1
    assert where(quarantine.errors) == [("a.log", 1, "record")]

    report = {**HEALTHY, "body": {"Overall Health": {"value": "Warning"}}}
    report["body"]["GPU"] = {
        "children": {"0": {"children": {"Errors": {"children": {"Memory": {"value": "Warning", "overflow": [long]}}}}}}
    }
    write(tmp_path / "dcgm" / "gpu1" / "20261101T000000Z.json", json.dumps(report))
    quarantine = lenient()
    assert list(read_dcgm_health_dir(tmp_path / "dcgm", clock(), quarantine=quarantine)) == []
    assert where(quarantine.errors) == [("20261101T000000Z.json", 1, "message")]


@hostile(Outcome.QUARANTINE)
def test_a_line_of_megabytes_is_quarantined_without_holding_it(tmp_path: Path):
    """A log without a newline for 20 MB: its head is read, the rest passed over in pieces."""
    path = tmp_path / "x.log"
    with open(path, "w") as handle:
        handle.write(f"{GOOD}{XID}\n")
        for _ in range(20):
            handle.write("a" * (1 << 20))
        handle.write(f"\n{GOOD}{XID}\n")
    quarantine, stats = lenient(), SyslogReadStats()
    assert read_xid_syslog(path, clock(), 2026, stats=stats, quarantine=quarantine)["source_line"].to_pylist() == [1, 3]
    assert where(quarantine.errors) == [("x.log", 2, "line")] and stats.lines == 3


def within(seconds: float, work: Callable[[], object]) -> float:
    """How long `work` took, failing when it takes longer than `seconds` (an in-process timeout: a
    daemon thread, left behind if it hangs)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            work()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome.append(error)

    started = time.perf_counter()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s: worse than linear?"
    if outcome[0] is not None:
        raise outcome[0]
    return time.perf_counter() - started


RUNS = {
    "spaces": " " * 400_000,
    "brackets": "[" * 400_000,
    "digits": "9" * 400_000,
    "markers": "NVRM: Xid (" * 36_000,
    "pairs": " 1:1" * 100_000,
}


def crafted(tmp_path: Path, kind: str, run: str) -> Callable[[], object]:
    """A reader of `kind` on lines holding `run` where its patterns look."""
    q = {"quarantine": lenient()}
    if kind == "syslog":
        path = write(
            tmp_path / "x.log", f"{GOOD}NVRM: Xid ({run}\n{GOOD}kernel: NVRM: Xid (x): {run}\n{run}NVRM: Xid\n"
        )
        nhc = write(
            tmp_path / "n.log", f"{GOOD}nhc: ERROR: nhc: Health check failed: {run}\n{run}Health check failed\n"
        )
        links = write(tmp_path / "l.log", f"{GOOD}{run} Link is Down\n{GOOD}eth0{run}: Lost carrier\n")
        return lambda: (
            read_xid_syslog(path, clock(), 2026, **q),
            read_nhc_log(nhc, clock(), 2026, **q),
            read_link_syslog(links, clock(), 2026, **q),
        )
    if kind == "dmesg":
        write(
            tmp_path / "gpu1" / "a",
            f"[{run}] {DMESG_XID}\n# boot_time: {run}\n2026-11-22T03:22:04,000000+00:00 NVRM: Xid ({run}\n"
            f"kern  :{run}: {DMESG_XID}\n{run}\n",
        )
        return lambda: list(read_xid_dmesg_dir(tmp_path, clock(), 2026, **q))
    if kind == "sel":
        write(tmp_path / "gpu1" / "a", f"3a | 11/14/2026 | 23:09:44{run} | x | y | Asserted\n{run}|{run}\n")
        return lambda: list(read_ipmi_sel_dir(tmp_path, clock(), **q))
    if kind == "dcgm":
        write(tmp_path / "gpu1" / "20261101T000000Z.json", '{"header": ["' + run + '"], "body": {}}' + run)
        write(tmp_path / "gpu1" / "20261102T000000Z.txt", f"NvLink Link Status\n{run}\n  {run}\n")
        return lambda: list(read_dcgm_health_dir(tmp_path, clock(), **q))
    if kind == "gcm":
        write(tmp_path / "a", '[{"node": "' + run + '"}]\n' + run + "\n")
        return lambda: list(read_gcm_health_dir(tmp_path, clock(), **q))
    path = series_file(tmp_path, series(host=run), run)
    return lambda: list(read_dcgm_series(path, clock(), **q))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("kind", ["syslog", "dmesg", "sel", "dcgm", "gcm", "series"])
@hostile(Outcome.QUARANTINE)
def test_no_reader_is_worse_than_linear_on_long_runs(tmp_path: Path, kind: str, run: str):
    """400,000-character runs where each reader's patterns look: a linear reader reads these few
    lines in well under a second; a quadratic pattern would take minutes."""
    within(20, crafted(tmp_path, kind, RUNS[run]))


# --- accounting: every line landed, quarantined or counted as skipped -------------------------------------


@hostile(Outcome.QUARANTINE)
def test_every_syslog_line_is_landed_quarantined_or_a_counted_skip(tmp_path: Path):
    lines = [
        f"{GOOD}{LINK}",
        f"{GOOD}kernel: veth12ab: Link is Down",  # virtual: counted
        f"{GOOD}kernel: eth0: link up",  # other
        f"1970-01-01T00:00:00Z gpu1 {LINK}",  # quarantined
        "",
    ]
    path = write(tmp_path / "l.log", "\n".join(lines) + "\n")
    quarantine, stats = lenient(), LinkReadStats()
    landed = read_link_syslog(path, clock(), 2026, stats=stats, quarantine=quarantine).num_rows
    assert (landed, len(quarantine.errors), stats.virtual_links, stats.other_lines) == (1, 1, 1, 2)
    assert stats.lines == landed + len(quarantine.errors) + stats.virtual_links + stats.other_lines


@hostile(Outcome.QUARANTINE)
def test_every_sel_and_dmesg_line_is_landed_quarantined_or_a_counted_skip(tmp_path: Path):
    sel_lines = [
        GOOD_SEL,
        GOOD_SEL.replace("Asserted", "Deasserted"),
        "  3c | 11/14/2026 | 23:09:44 | OEM record e0 | 000000 | 0\n",
        "\n",
        "  3d | 01/01/1970 | 00:00:00 | x | y | Asserted\n",
    ]
    write(tmp_path / "sel" / "gpu1" / "a", "".join(sel_lines))
    write(tmp_path / "sel" / "gpu1" / "b", GOOD_SEL)  # the same entry again
    quarantine, sel = lenient(), SelReadStats()
    landed = len(list(read_ipmi_sel_dir(tmp_path / "sel", clock(), stats=sel, quarantine=quarantine)))
    skips = sel.blank_lines + sel.deasserted + sel.oem_records + sel.repeated_entries
    assert (landed, len(quarantine.errors), skips) == (1, 1, 4)
    assert sel.lines == landed + len(quarantine.errors) - sel.files_quarantined + skips

    capture = f"# boot_time: 2026-11-20T00:00:00Z\n[5.000000] {DMESG_XID}\nother\n{GOOD_DMESG}{GOOD_DMESG}"
    write(tmp_path / "dmesg" / "gpu1" / "a", capture + "[1.0] NVRM: Xid (x): 0, y\n")
    quarantine, dmesg = lenient(), DmesgReadStats()
    landed = len(list(read_xid_dmesg_dir(tmp_path / "dmesg", clock(), 2026, stats=dmesg, quarantine=quarantine)))
    skips = dmesg.other_lines + dmesg.boot_time_lines + dmesg.repeated_lines
    assert (landed, len(quarantine.errors), skips) == (2, 1, 3)
    assert dmesg.lines == landed + len(quarantine.errors) - dmesg.files_quarantined + skips
