"""The readers' fuzzer: real lines of every file and directory kind, mutated, run through the kind's
reader as `reliability-report parse` runs it, and every outcome checked (issue 50, item 5).

Seeds are real lines: tests/data (Slurm 22.05, Open XDMoD, the Xid, link and SEL lines of public
reports, dcgmi's NVLink output) and a small simulated month (sacct, events, Xid and NHC syslog,
dcgmi health files), plus the formats nothing in the repository prints (GCM records, saved
dcgm-exporter series, repair tickets) built as their readers' docstrings and tests write them.
Mutations (`MUTATIONS`, plain seeded random: deterministic for a seed) change bytes (a flipped bit,
NUL, a lone CR, CRLF, invalid UTF-8, ESC and BEL), fields (dropped, repeated, swapped, empty,
400,000 spaces, `[` or digits), numbers, times and zones, Unicode, JSON values and nesting, and
node names and host lists (a group name that would run `touch`, `*`, `@all`, `!`, `&`, a
19-byte list of a million nodes).

Each input (a file, or a directory for the directory kinds, of `records_per_input` records, most
of them mutated) is read in a worker process by `flows.ingest.parse.parse_source` (the non-strict
quarantine the landing's `parse` uses) and checked:

- `raw`: no exception escapes but an input error (`flows.core.errors.InputError`) that names the
  file; `refused`: such an error for the whole file is only accepted when the mutation may make the
  file unreadable as a whole (a JSON document that no longer parses, a broken header); its message
  carries no engine internals (`internals`);
- `command`: no command runs: an audit hook records (and blocks) every subprocess, exec, spawn,
  fork and os.system the read attempts, and the sentinel file the crafted node names would `touch`
  must not appear; `printed`: nothing reaches the worker's stdout or stderr;
- `hang`: each input is read within `timeout` seconds (the worker is killed past it) and within
  `memory_mib` of resident memory;
- `unaccounted`: every record is landed (a row whose source line is its line), quarantined (an
  error naming its line, or its file from a line on) or counted by the reader's statistics as
  skipped (`ACCOUNTING`, one function per kind).

A failing input is shrunk to its single mutated records (each read alone), and the smallest
reproducer per finding is written to a directory. Checks that cannot pass yet are in one place,
`KNOWN_GAPS`, each with its reason: delete an entry to switch its check on.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import multiprocessing
import multiprocessing.connection
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
SENTINEL = "FUZZ_SENTINEL"  # the file a crafted node name would `touch` (relative: the worker's cwd)
ZONES = ("UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe")
YEAR = 2026
CHECKS = ("raw", "refused", "internals", "command", "printed", "hang", "unaccounted")


# --- known gaps ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gap:
    """A check that cannot pass yet for a kind: its failures are reported but fail nothing.

    For `unaccounted`, only the records it excuses are left out of the count: those `records` (a
    bytes regex over the record as written) finds, or those `joined(record, the records before it in
    its file, seeds)` holds for; with neither, it excuses every failure of the kind."""

    kind: str
    check: str
    reason: str
    records: bytes | None = None
    joined: Callable[[bytes, list[bytes], SeedSet], bool] | None = None

    def excuses(self, record: bytes, before: list[bytes] | None = None, seeds: SeedSet | None = None) -> bool:
        if self.records is None and self.joined is None:
            return True
        if self.records is not None and re.search(self.records, record):
            return True
        return self.joined is not None and seeds is not None and self.joined(record, before or [], seeds)


# The one list of checks that cannot pass yet. Delete an entry to switch its check on.
KNOWN_GAPS: tuple[Gap, ...] = ()


def known_gap(
    kind: str, check: str, records: Iterable[tuple[bytes, list[bytes]]] = (), seeds: SeedSet | None = None
) -> Gap | None:
    """The gap that excuses a failure of `check` in `kind` for the records involved ((record, the records
    before it in its file)), or None."""
    records = list(records)
    for gap in KNOWN_GAPS:
        if gap.kind != kind or gap.check != check:
            continue
        if (gap.records is None and gap.joined is None) or (
            records and all(gap.excuses(record, before, seeds) for record, before in records)
        ):
            return gap
    return None


# --- seeds ---------------------------------------------------------------------------------------


@dataclass
class Record:
    """One record of an input: a line (a whole file for dcgm_health_dir), the mutations it took."""

    text: bytes
    ops: tuple[str, ...] = ()
    folder: str = ""  # directory kinds: the node folder (and file) it is written to
    file: str = ""
    may_refuse: bool = False  # a mutation that may make the whole file unreadable (not JSON any more)


@dataclass(frozen=True)
class SeedSet:
    """Records of one layout: the structural lines before them (a header) and the records."""

    header: tuple[bytes, ...]
    records: tuple[bytes, ...]
    fields: tuple[str, ...] = ()  # the header's field names (psv, csv) for field-aware mutations
    delimiter: bytes = b""


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line.strip()]


def _tsv_raw_lines(name: str) -> list[bytes]:
    rows = (DATA / "health" / name).read_text().splitlines()[1:]
    return [row.split("\t")[-1].encode() for row in rows if row.strip()]


@cache
def simulated_month() -> Path:
    """A small simulated month's files (8 nodes, cached for the process)."""
    from datetime import date

    from simulator import SimParams, simulate

    out = Path(tempfile.mkdtemp(prefix="fuzz-month-"))
    simulate(SimParams("fz", date(YEAR, 10, 1), nodes=24, seed=7), out)
    return out


def _psv(path: Path) -> SeedSet:
    header, *records = _lines(path)
    return SeedSet((header,), tuple(records), tuple(header.decode().split("|")), b"|")


def _sacct_psv() -> list[SeedSet]:
    slurm = DATA / "slurm-22.05"
    return [_psv(slurm / "sacct_fields_by_jobid.psv"), _psv(slurm / "sacct_fields_allocations.psv"),
            _cut(_psv(simulated_month() / "sacct.psv"), 400)]  # fmt: skip


def _cut(seeds: SeedSet, n: int) -> SeedSet:
    return SeedSet(seeds.header, seeds.records[:n], seeds.fields, seeds.delimiter)


def _sacct_xdmod() -> list[SeedSet]:
    from flows.ingest.sources.sacct import XDMOD_FIELDS

    records = _lines(DATA / "xdmod" / "accounting-logs.log") + _lines(
        DATA / "xdmod" / "accounting-logs-with-job-arrays.log"
    )
    return [SeedSet((), tuple(records), XDMOD_FIELDS, b"|")]


def _sacct_json() -> list[SeedSet]:
    document = json.loads((DATA / "slurm-22.05" / "sacct.json").read_text())
    jobs = tuple(json.dumps(job).encode() for job in document.pop("jobs"))
    document["jobs"] = "\x00JOBS"
    envelope = json.dumps(document, indent=1).encode()
    return [SeedSet((envelope,), jobs)]


def _sacctmgr() -> list[SeedSet]:
    slurm = DATA / "slurm-22.05"
    return [_psv(slurm / "sacctmgr_event.final.psv"), _psv(slurm / "sacctmgr_event.down.psv"),
            _psv(simulated_month() / "events.psv")]  # fmt: skip


def _scontrol() -> list[SeedSet]:
    slurm = DATA / "slurm-22.05"
    records = [line for name in ("down", "drain", "final") for line in _lines(slurm / f"scontrol_show_node.{name}.txt")]
    return [SeedSet((), tuple(records))]


def _xid_lines() -> list[bytes]:
    return _lines(simulated_month() / "xid.log")[:300]


def _nhc_lines() -> list[bytes]:
    nhc = _lines(simulated_month() / "nhc.log")
    # NHC's own lines beside the failed checks: passed runs and other daemons' lines are counted and skipped
    return nhc + [
        line.replace(b"ERROR:  nhc:  Health check failed:", b"NOTICE:  nhc:  Node Health Check completed")
        for line in nhc
    ]


def _syslog(own: list[bytes]) -> list[SeedSet]:
    others = _xid_lines()[:40] + _nhc_lines() + _tsv_raw_lines("link_lines.tsv") + _tsv_raw_lines("xid_lines.tsv")
    return [SeedSet((), tuple(own * max(1, 60 // max(1, len(own))) + others))]


def _dmesg() -> list[SeedSet]:
    # the reports' dmesg lines (monotonic, -T, journald, remote), after a boot time, and journal lines
    return [
        SeedSet((b"# boot_time: 2026-11-20T08:00:00Z",), tuple(_tsv_raw_lines("xid_lines.tsv") + _xid_lines()[:60]))
    ]


def _dcgm_health() -> list[SeedSet]:
    root = simulated_month() / "dcgm"
    files = [path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()]
    files += [
        (DATA / "health" / "dcgmi_nvlink_e_gpu0.json").read_bytes(),
        (DATA / "health" / "dcgmi_nvlink_s.txt").read_bytes(),
    ]
    diag = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "GPU Memory", "results": [{"gpu_id": "0", "status": "Fail", "warnings": [{"warning": "Memory error"}]},
                                           {"gpu_id": "1", "status": "Pass"}]}]}]}}  # fmt: skip
    return [SeedSet((), tuple([*files, json.dumps(diag).encode()]))]


def _dcgm_series() -> list[SeedSet]:
    from flows.ingest.sources.dcgm_series import header_line, series_line

    start, step = 1_790_000_000, 30  # 2026-09-21
    header = header_line("http://prometheus:9090", "dcgm", start, start + 3600, step, "Hostname").rstrip("\n")
    lines = []
    for n in range(1, 5):
        for gpu in range(2):
            labels = {"gpu": str(gpu), "UUID": f"GPU-{n}-{gpu}", "pci_bus_id": f"00000000:{gpu + 1:02X}:00.0",
                      "Hostname": f"gpu{n:04d}", "device": f"nvidia{gpu}", "modelName": "NVIDIA H100 80GB HBM3"}  # fmt: skip
            at = start + 60 * (n + gpu)
            lines.append(series_line({**labels, "__name__": "DCGM_FI_DEV_XID_ERRORS"},
                                     [(start, at, "0"), (at + step, start + 3600, str(79 if gpu else 48))]))  # fmt: skip
            lines.append(series_line({**labels, "__name__": "DCGM_EXP_XID_ERRORS_COUNT", "xid": "79"},
                                     [(at, at + 300, "1"), (at + 330, at + 600, "2")]))  # fmt: skip
            lines.append(series_line({**labels, "__name__": "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"},
                                     [(start, at, "3"), (at + step, start + 3600, "7")]))  # fmt: skip
    return [SeedSet((header.encode(),), tuple(line.rstrip("\n").encode() for line in lines))]


def _gcm() -> list[SeedSet]:
    records = []
    for n in range(1, 13):
        result = n % 4
        stdout = [{"node": f"gpu{n}", "cluster": "c", "health_check": "xid errors", "type": "prolog", "result": result,
                   "_msg": f"XID error: {n}", "job_id": 20 + n, "start_time": 1795404124.12 + n, "end_time": 1795404124.35 + n}]  # fmt: skip
        sink = {"int": {"result": (n + 1) % 4, "job_id": 0}, "double": {"start_time": 1795404000.0 + n, "end_time": 1795404001.5 + n},
                "normal": {"node": f"gpu{n}", "health_check": "nvidia smi ecc_corrected", "type": "nagios", "_msg": "corrected ECC"}, "tags": {}}  # fmt: skip
        records += [json.dumps(stdout).encode(), json.dumps(sink).encode()]
    return [SeedSet((), tuple(records))]


def _link() -> list[SeedSet]:
    return _syslog(_tsv_raw_lines("link_lines.tsv"))


def _sel() -> list[SeedSet]:
    return [SeedSet((), tuple(_tsv_raw_lines("sel_lines.tsv")))]


def _tickets() -> list[SeedSet]:
    header = b"ticket_id,node,opened_at,closed_at,category,summary"
    rows = []
    for n, line in enumerate(
        _lines(simulated_month() / "events.psv")[2:] + _lines(DATA / "slurm-22.05" / "sacctmgr_event.final.psv")[2:]
    ):
        fields = line.decode().split("|")
        reason = fields[7].replace(",", ";")
        rows.append(
            f"T-{n},{fields[6]},{fields[8]},{fields[3] if fields[3] != 'Unknown' else ''},hardware,{reason}".encode()
        )
    rows.append(b'T-99,gpu0003,2026-10-02T10:00:00+00:00,,gpu,"GPU 3 replaced, ""RMA"" opened"')
    return [SeedSet((header,), tuple(rows), tuple(header.decode().split(",")), b",")]


# --- per-kind layout and accounting ----------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """How a kind's inputs are built and accounted for."""

    kind: str
    seeds: Callable[[], list[SeedSet]]
    layout: str  # "lines" (one file), "json_document" (sacct_json), "node_dirs" (<dir>/<node>/<file>),
    #              "dcgm_dir" (<dir>/<node>/<time>.json: a record is a file), "files" (gcm: any file under it)
    json_records: bool = False  # each record is a JSON value (mutated as one)
    node_span: Callable[[bytes, SeedSet], tuple[int, int] | None] | None = None  # where a record names its node
    blank_lines_are_records: bool = False  # the reader counts blank lines (syslog: as other lines)
    covering_fields: tuple[str, ...] = (
        "file",
        "node folder",
        "file name",
    )  # a quarantine that takes its file from its line on


def _field_span(name: str) -> Callable[[bytes, SeedSet], tuple[int, int] | None]:
    def span(text: bytes, seeds: SeedSet) -> tuple[int, int] | None:
        if name not in seeds.fields:
            return None
        index, at = seeds.fields.index(name), 0
        parts = text.split(seeds.delimiter)
        if len(parts) <= index:
            return None
        for part in parts[:index]:
            at += len(part) + len(seeds.delimiter)
        return at, at + len(parts[index])

    return span


def _regex_span(pattern: bytes) -> Callable[[bytes, SeedSet], tuple[int, int] | None]:
    compiled = re.compile(pattern)

    def span(text: bytes, seeds: SeedSet) -> tuple[int, int] | None:
        found = compiled.search(text)
        return found.span(1) if found else None

    return span


_SYSLOG_HOST = _regex_span(
    rb"^(?:\d{4}-\d\d-\d\dT\S+|[A-Z][a-z]{2}\s+\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?)\s+(\S+)|^(\S+): kern: "
)


SPECS: dict[str, Spec] = {
    spec.kind: spec
    for spec in (
        Spec("sacct_psv", _sacct_psv, "lines", node_span=_field_span("NodeList")),
        Spec("sacct_xdmod", _sacct_xdmod, "lines", node_span=_field_span("NodeList")),
        Spec("sacct_json", _sacct_json, "json_document", json_records=True),
        Spec("sacctmgr_events_psv", _sacctmgr, "lines", node_span=_field_span("NodeName")),
        Spec("scontrol_nodes", _scontrol, "lines", node_span=_regex_span(rb"^NodeName=(\S+)")),
        Spec(
            "xid_syslog", lambda: _syslog(_xid_lines()), "lines", node_span=_SYSLOG_HOST, blank_lines_are_records=True
        ),
        Spec("xid_dmesg_dir", _dmesg, "node_dirs", node_span=_SYSLOG_HOST, blank_lines_are_records=True),
        Spec(
            "nhc_syslog", lambda: _syslog(_nhc_lines()), "lines", node_span=_SYSLOG_HOST, blank_lines_are_records=True
        ),
        Spec("dcgm_health_dir", _dcgm_health, "dcgm_dir", json_records=True, covering_fields=()),
        Spec(
            "dcgm_series", _dcgm_series, "lines", json_records=True, covering_fields=("file", "header", "step_seconds")
        ),
        Spec("gcm_health_dir", _gcm, "files", json_records=True),
        Spec("link_syslog", _link, "lines", node_span=_SYSLOG_HOST, blank_lines_are_records=True),
        Spec("ipmi_sel_dir", _sel, "node_dirs"),
        Spec("repair_tickets_csv", _tickets, "lines", node_span=_field_span("node")),
    )
}
KINDS = tuple(SPECS)


@dataclass
class Outcome:
    """What one read gave, as the worker reports it (keys relative to the input)."""

    status: str  # "ok", "input_error", "raw", "hang", "memory", "crash"
    rows: list[tuple[str, int]] = field(default_factory=list)  # (file, source_line) of each landed row
    quarantined: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, field)
    stats: dict[str, Any] = field(default_factory=dict)
    error: str = ""  # the exception's type and message (input_error, raw)
    where: str = ""  # raw: the innermost frame in flows/
    commands: list[str] = field(default_factory=list)
    printed: str = ""
    seconds: float = 0.0


def _q(outcome: Outcome, fields: Iterable[str]) -> set[tuple[str, int]]:
    wanted = set(fields)
    return {(f, line) for f, line, name in outcome.quarantined if name in wanted}


def skipped_count(kind: str, outcome: Outcome, touched: set[tuple[str, int]]) -> int:
    """The records `kind`'s reader says it read and skipped (neither landed nor quarantined), from its
    statistics; `touched`: the records landed or quarantined. One rule per kind, each reading the
    counters a reader has (main's, and those the readers gained in issue 50: adapt it when one changes)."""
    s = outcome.stats
    landed_lines = len(set(outcome.rows))
    if kind in ("sacct_psv", "sacct_xdmod"):  # (a row split over lines: each line after its first is joined)
        return s.get("steps_skipped", 0) + s.get("duplicate_records", 0) + s.get("joined_lines", 0)
    if kind == "sacct_json":
        return s.get("duplicate_records", 0)
    if kind == "sacctmgr_events_psv":
        return s.get("cluster_records", 0) + s.get("without_node", 0) + s.get("joined_lines", 0)
    if kind == "scontrol_nodes":  # nodes read, less those out of service; a Reason quarantined was counted as a node
        return s.get("nodes", 0) - s.get("out_of_service", 0) - len(_q(outcome, ["Reason"]))
    if kind in ("xid_syslog", "nhc_syslog"):
        return s.get("other_lines", 0)
    if kind == "link_syslog":
        return s.get("other_lines", 0) + s.get("virtual_links", 0)
    if kind == "xid_dmesg_dir":  # (the `# boot_time:` lines the fuzzer writes are no records)
        return s.get("other_lines", 0) + s.get("repeated_lines", 0)
    if kind == "dcgm_health_dir":
        return s.get("healthy_files", 0)
    if kind == "dcgm_series":
        # every line read as a series is counted (`series`); a GPU's series land together (its events at
        # its first line), or are quarantined whole after they were counted: the records are the series
        # plus the lines quarantined as they are read (those quarantined after: `series_quarantined`)
        if "series_quarantined" in s:
            read_errors = len(outcome.quarantined) - s["series_quarantined"] - s.get("files_quarantined", 0)
        else:
            from flows.ingest.sources.dcgm_series import METRICS

            later = {(f, n) for f, n, name in outcome.quarantined if name == "xid" or re.fullmatch(METRICS, name)}
            read_errors = len({(f, n) for f, n, _ in outcome.quarantined} - later)
        return s.get("series", 0) + read_errors - len(touched)
    if kind == "gcm_health_dir":
        if "record_lines" in s:  # lines read whole: landed (an incident) or skipped (OK results only)
            return s["record_lines"] - landed_lines
        return s.get("ok_results", 0)  # a line of OK results only: at most one per OK result
    if kind == "ipmi_sel_dir":
        return s.get("deasserted", 0) + s.get("oem_records", 0) + s.get("repeated_entries", 0)
    if kind == "repair_tickets_csv":  # a record over lines (a quoted field holding a newline): the rest joined
        return s.get("joined_lines", 0)
    raise KeyError(kind)


ACCOUNTING = skipped_count  # the per-kind rule (see `account`)


# --- mutations -----------------------------------------------------------------------------------

NODE_CRAFTED = (
    f"@x';touch {SENTINEL};'",
    f"node[1-2]x[1-2]y,@x';touch {SENTINEL};'",
    f"$(touch {SENTINEL})",
    f"`touch {SENTINEL}`",
    f"gpu1;touch {SENTINEL}",
    "@x';\a\x1bc;'",
    "*",
    "@all",
    "@compute",
    "@nosuchgroup",
    "a!b",
    "node3!node3",
    "gpu[1-3]&gpu[5-6]",
    "gpu[1-3]^gpu[2]",
    "gpu*",
    "gpu[1-2]x,*",
    "n[1-1000]m[1-1000]",
    "node[1-100000000]",
    "node[0001-0000]",
    "node[5-1]",
    "node[1-3",
    "node]1[",
    "[" * 400_000,
    "",
    " ",
    "-node",
    "node..1",
    "nöde1",
    "node1\x1b[2J",
    "gpu0001,gpu0001",
    "gpu[0001-0002],gpu[0002-0003]",
    "a" * 300,
)
NUMBERS = ("9" * 5000, "-5", "-0", "12.5", "0x10", "1e3", "1_000", "0b101", "Infinity", "-Infinity", "NaN",
           "1e400", "00012", " 7", "７", "٣", "99999999999999999999", "-9223372036854775809", "")  # fmt: skip
TIMES = (
    "0001-01-01T00:00:00", "9999-12-31T23:59:59", "1970-01-01T00:00:00", "2999-01-01T00:00:00",
    "2026-10-05T12:08:38+05:00", "2026-10-05T12:08:38Z", "2026-10-05T12:08:38+99:99", "2026-10-05T12:08:38-14:00",
    "2026-10-05T12:08:38 CET", "2026-10-05T12:08:38 America/New_York", "2026-10-05T12:08:38.123456789",
    "2026-11-01T01:30:00", "2026-10-25T02:30:00", "2026-03-08T02:30:00", "2026-03-29T02:30:00",
    "2026-04-05T02:30:00", "2026-10-04T02:15:00", "2026-02-29T00:00:00", "2026-13-01T00:00:00",
    "2026-10-32T00:00:00", "2026-10-05T25:00:00", "2026-10-05T23:59:60", "2026-10-05", "20261005T120838",
    "Unknown", "None", "0", "-1", "2026-10-05T12:08:38+05:00[Asia/Kolkata]",
)  # fmt: skip
EPOCHS = ("0", "-1", "253402300800", "32503680000", "1e20", "1e400", "Infinity", "NaN", "-Infinity", "1795404124.5",
          "9" * 5000, "true", "\"2026-11-22T03:21:55+05:00\"", "null", "[]", "{}")  # fmt: skip
UNICODE = ("é", "\u200b", "\u202e", "\ufeff", "\U0001f600", "１２", "٣", "\u2028", "\u2029", "\x85", "\ud7ff",
           "Ω" * 1000, "\u0301", "ﬁ")  # fmt: skip
CONTROL = (b"\x1b", b"\x07", b"\x1bc", b"\x1b[2J", b"\x08", b"\x7f", b"\x0c", b"\x0b", b"\x1f", b"\x1e", b"\x00")
BAD_UTF8 = (b"\xff", b"\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xc0\xaf", b"\xe2\x82")
LONG = (" " * 400_000, "[" * 400_000, "9" * 400_000, "a " * 200_000)
DEEP = "[" * 100_000 + "]" * 100_000
_ISO_TIME = re.compile(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?")
_BSD_TIME = re.compile(rb"[A-Z][a-z]{2}\s+\d{1,2} \d\d:\d\d:\d\d")
_SEL_TIME = re.compile(rb"\d\d/\d\d/\d{2,4} \| \d\d:\d\d:\d\d")
_NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def _insert(rng: random.Random, text: bytes, piece: bytes) -> bytes:
    at = rng.randint(0, len(text))
    return text[:at] + piece + text[at:]


def _replace_span(text: bytes, span: tuple[int, int], value: bytes) -> bytes:
    return text[: span[0]] + value + text[span[1] :]


def _fields(seeds: SeedSet, text: bytes) -> tuple[list[bytes], bytes]:
    if seeds.delimiter:
        return text.split(seeds.delimiter), seeds.delimiter
    return text.split(b" "), b" "


# Each mutation: (rng, text, seeds, spec) -> the new text, or None when it does not apply to the record.
Mutation = Callable[[random.Random, bytes, SeedSet, Spec], bytes | None]


def _byte_flip(rng: random.Random, text: bytes, seeds: SeedSet, spec: Spec) -> bytes | None:
    if not text:
        return None
    at = rng.randrange(len(text))
    flipped = text[at] ^ (1 << rng.randrange(8))
    return None if flipped == 0x0A else text[:at] + bytes([flipped]) + text[at + 1 :]


def _mutate_field(how: str) -> Mutation:
    def mutate(rng: random.Random, text: bytes, seeds: SeedSet, spec: Spec) -> bytes | None:
        parts, sep = _fields(seeds, text)
        if len(parts) < 2:
            return None
        i, j = rng.randrange(len(parts)), rng.randrange(len(parts))
        if how == "drop":
            del parts[i]
        elif how == "duplicate":
            parts.insert(i, parts[i])
        elif how == "swap":
            parts[i], parts[j] = parts[j], parts[i]
        elif how == "empty":
            parts[i] = b""
        elif how == "long":
            parts[i] = rng.choice(LONG).encode()
        return sep.join(parts)

    return mutate


def _number(rng: random.Random, text: bytes, seeds: SeedSet, spec: Spec) -> bytes | None:
    found = list(_NUMBER.finditer(text))
    if not found:
        return None
    return _replace_span(text, rng.choice(found).span(), rng.choice(NUMBERS).encode())


def _time(rng: random.Random, text: bytes, seeds: SeedSet, spec: Spec) -> bytes | None:
    found = list(_ISO_TIME.finditer(text)) + list(_BSD_TIME.finditer(text)) + list(_SEL_TIME.finditer(text))
    if not found:
        return None
    match = rng.choice(found)
    value = rng.choice(TIMES)
    if match.re is _BSD_TIME:
        value = rng.choice(("Feb 30 12:00:00", "Oct  5 25:61:61", "Mar  8 02:30:00", "Nov  1 01:30:00", "Jan  1 00:00:00",
                            "Oct  5 12:08:38+05:00", "Oct  5 12:08:38 CET", "Xyz  5 12:08:38", "Oct 99 12:08:38"))  # fmt: skip
    elif match.re is _SEL_TIME:
        value = rng.choice(("01/01/0001 | 00:00:00", "12/31/9999 | 23:59:59", "01/01/1970 | 00:00:00",
                            "03/08/2026 | 02:30:00 EST", "11/01/2026 | 01:30:00", "13/45/2026 | 25:00:00",
                            "10/05/2026 | 12:08:38 +05:00", "10/05/26 | 12:08:38 CET", "10/05/2026 | 12:08:38 Z"))  # fmt: skip
    elif rng.random() < 0.3:  # a zone after the seed's own time
        value = match.group().decode() + rng.choice(
            ("+05:00", "Z", "+99:99", " UTC", " CEST", " Europe/Berlin", "-00:00")
        )
    return _replace_span(text, match.span(), value.encode())


def _node(rng: random.Random, text: bytes, seeds: SeedSet, spec: Spec) -> bytes | None:
    span = spec.node_span(text, seeds) if spec.node_span else None
    if span is None:
        return None
    return _replace_span(text, span, rng.choice(NODE_CRAFTED).encode())


LINE_MUTATIONS: dict[str, tuple[float, Mutation]] = {
    "byte:flip": (3, _byte_flip),
    "byte:nul": (1, lambda rng, t, s, p: _insert(rng, t, b"\x00")),
    "byte:lone_cr": (2, lambda rng, t, s, p: _insert(rng, t, b"\r")),
    "byte:crlf": (2, lambda rng, t, s, p: t + b"\r"),
    "byte:bad_utf8": (2, lambda rng, t, s, p: _insert(rng, t, rng.choice(BAD_UTF8))),
    "byte:control": (2, lambda rng, t, s, p: _insert(rng, t, rng.choice(CONTROL))),
    "byte:truncate": (1, lambda rng, t, s, p: t[: rng.randint(0, len(t))]),
    "unicode": (2, lambda rng, t, s, p: _insert(rng, t, rng.choice(UNICODE).encode("utf-8", "surrogatepass"))),
    "field:drop": (1, _mutate_field("drop")),
    "field:duplicate": (1, _mutate_field("duplicate")),
    "field:swap": (1, _mutate_field("swap")),
    "field:empty": (1, _mutate_field("empty")),
    "field:long": (1, _mutate_field("long")),
    "number": (4, _number),
    "time": (5, _time),
    "node": (5, _node),
}


# JSON records: a value anywhere in the record replaced (placeholders let raw text in: NaN, 1e400, depth)
JSON_VALUES: tuple[tuple[str, str], ...] = (
    ("json:true", "true"), ("json:false", "false"), ("json:null", "null"), ("json:string_for_number", '"12"'),
    ("json:number_for_string", "12"), ("json:negative", "-5"), ("json:fraction", "12.5"), ("json:huge", "9" * 5000),
    ("json:1e400", "1e400"), ("json:nan", "NaN"), ("json:infinity", "Infinity"), ("json:deep", DEEP),
    ("json:empty_list", "[]"), ("json:empty_object", "{}"), ("json:empty_string", '""'),
    ("json:long_string", json.dumps(" " * 400_000)), ("json:unicode", json.dumps("\u202e\x1b[2J\U0001f600")),
    ("json:control_chars", json.dumps("a\x1b[2J\x07\x00\r\nb")), ("json:lone_surrogate", '"\\ud800"'),
    ("json:epoch_year1", "-62135596800"), ("json:epoch_9999", "253402300799"), ("json:epoch_1970", "1"),
    ("json:offset_time", '"2026-11-22T03:21:55+05:00"'), ("json:big_int64", "9223372036854775808"),
)  # fmt: skip
NODE_KEYS = ("node", "nodes", "Hostname", "batch_host")
TIME_KEYS = ("submission", "start", "end", "eligible", "start_time", "end_time", "time")


def _json_paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _json_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:20]):
            yield from _json_paths(item, (*path, index))


def _set(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    value[head] = _set(value[head], tuple(rest), new)
    return value


def _json_mutation(rng: random.Random, text: bytes, spec: Spec) -> tuple[bytes, str, bool] | None:
    """(new text, op, may_refuse) of a JSON record with one value replaced, a key dropped or added."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    paths = [p for p in _json_paths(value) if p]
    if not paths:
        return None
    keyed = [p for p in paths if isinstance(p[-1], str)]
    roll = rng.random()
    if roll < 0.2 and keyed:  # a node name crafted where the record names one
        nodes = [p for p in keyed if p[-1] in NODE_KEYS]
        if nodes:
            return json.dumps(_set(value, rng.choice(nodes), rng.choice(NODE_CRAFTED))).encode(), "node", False
    if roll < 0.35:
        times = [p for p in keyed if p[-1] in TIME_KEYS or (len(p) > 1 and p[-2] in TIME_KEYS)]
        if times:
            placeholder = "\x00FUZZ"
            dumped = json.dumps(_set(value, rng.choice(times), placeholder))
            return dumped.replace(json.dumps(placeholder), rng.choice(EPOCHS)).encode(), "time", False
    if roll < 0.45 and keyed:
        path = rng.choice(keyed)
        parent = value
        for step in path[:-1]:
            parent = parent[step]
        del parent[path[-1]]
        return json.dumps(value).encode(), "json:drop_key", False
    if roll < 0.5 and keyed:  # a key twice (the later wins in Python)
        dumped = json.dumps(value)
        return (dumped[:-1] + f', "{keyed[0][-1]}": "x"' + dumped[-1:]).encode(), "json:duplicate_key", False
    op, raw = rng.choice(JSON_VALUES)
    placeholder = "\x00FUZZ"
    dumped = json.dumps(_set(value, rng.choice(paths), placeholder))
    return dumped.replace(json.dumps(placeholder), raw).encode(), op, False


FAMILIES = ("byte", "field", "number", "time", "node", "unicode", "json")
FOCUSED_SHARE = 0.6  # inputs whose records take one family of mutations only: one lone CR per file would
# otherwise hide every other mutation of a reader that refuses the file for it


def mutate_record(
    rng: random.Random, text: bytes, seeds: SeedSet, spec: Spec, families: tuple[str, ...] = FAMILIES
) -> Record | None:
    """One mutated record of the `families` given: a JSON value change (JSON records, mostly; a JSON
    document's always but for one record in 500, whose bytes change) or a line mutation; None when
    none of them applies to the record."""
    document = spec.layout == "json_document"
    share = 0.998 if document else 0.75
    focused = families != FAMILIES
    # focused on a family JSON mutations have (json, node, time): those; a document focused on another: any
    json_family = bool({"json", "node", "time"} & set(families))
    if spec.json_records and (json_family or document) and (rng.random() < share or focused):
        for _ in range(4):
            found = _json_mutation(rng, text, spec)
            if found is not None and (not focused or not json_family or found[1].split(":")[0] in families):
                return Record(found[0], (found[1],))
    names = [name for name in LINE_MUTATIONS if name.split(":")[0] in families]
    if document and focused:  # a document's text only in unfocused inputs (else it is mostly refused whole)
        return None
    if not names:
        return None
    weights = [LINE_MUTATIONS[name][0] for name in names]
    for _ in range(8):
        name = rng.choices(names, weights)[0]
        new = LINE_MUTATIONS[name][1](rng, text, seeds, spec)
        if new is not None and new != text and new.count(b"\n") <= text.count(b"\n"):  # no line added
            # a byte mutation of a JSON document may leave it no JSON: the file may then be refused whole
            refuse = document  # (a number, time or node of its text replaced may leave it no JSON too)
            return Record(new, (name,), may_refuse=refuse)
    return None


# --- inputs --------------------------------------------------------------------------------------


@dataclass
class Case:
    """One input: its records (each with where it was written), its zone, and whether it may be refused."""

    kind: str
    number: int
    seeds: SeedSet
    records: list[Record]
    timezone: str
    gzip: bool = False
    keys: list[tuple[str, int]] = field(default_factory=list)  # each record's (file, line) as written

    @property
    def mutated(self) -> int:
        return sum(1 for r in self.records if r.ops)

    @property
    def may_refuse(self) -> bool:
        return any(r.may_refuse for r in self.records)


NODE_FOLDERS = ("gpu0001", "gpu0002", "node3", "gpu0004.cluster")
FOLDER_CRAFTED = ("@x';touch FUZZ_SENTINEL;'", "gpu[1-2]", "*", "-node", "nöde", "a b", "node\x1b[2J", ".hidden", "..x")


def make_case(kind: str, number: int, rng: random.Random, size: int, mutated_share: float = 0.8) -> Case:
    """A case of `size` records of one seed set, about `mutated_share` of them mutated (by every family of
    mutations, or in FOCUSED_SHARE of the cases by one)."""
    spec = SPECS[kind]
    seeds = rng.choice(spec.seeds())
    families = (rng.choice(FAMILIES),) if rng.random() < FOCUSED_SHARE else FAMILIES
    records = []
    for _ in range(size):
        text = rng.choice(seeds.records)
        record = mutate_record(rng, text, seeds, spec, families) if rng.random() < mutated_share else None
        records.append(record or Record(text))
    case = Case(
        kind, number, seeds, records, ZONES[number % len(ZONES)], gzip=spec.layout == "lines" and rng.random() < 0.05
    )
    if spec.layout in ("node_dirs", "dcgm_dir", "files"):
        for index, record in enumerate(records):
            folder = rng.choice(NODE_FOLDERS)
            if rng.random() < 0.03:  # a crafted node folder, or a file outside any node folder
                folder = rng.choice((*FOLDER_CRAFTED, ""))
                record.ops = (*record.ops, "layout:folder")
            record.folder = folder
            if spec.layout == "dcgm_dir":
                stamp = f"202610{1 + index % 28:02d}T{index % 24:02d}{index % 60:02d}00Z"
                if rng.random() < 0.03:
                    stamp = rng.choice(("00010101T000000Z", "99991231T235959Z", "20261332T250000Z", "notatime", ""))
                    record.ops = (*record.ops, "layout:file_name")
                suffix = ".txt" if b"NvLink Link Status" in record.text else ".json"
                record.file = f"{stamp}{suffix}"
            else:
                record.file = f"capture{index % 3}.log"
    return case


def write_case(case: Case, root: Path) -> Path:
    """Write the case's input under `root`; the path its reader is given. Fills `case.keys`."""
    spec = SPECS[case.kind]
    root.mkdir(parents=True, exist_ok=True)
    case.keys = []
    if spec.layout == "json_document":
        envelope = case.seeds.header[0]
        jobs = b"[\n" + b",\n".join(r.text for r in case.records) + b"\n]"
        (root / "jobs.json").write_bytes(envelope.replace(b'"\\u0000JOBS"', jobs))
        case.keys = [("", i) for i in range(1, len(case.records) + 1)]
        return root / "jobs.json"
    if spec.layout == "lines":
        lines = [*case.seeds.header, *(r.text for r in case.records)]
        first = len(case.seeds.header) + 1
        case.keys = [("", first + i) for i in range(len(case.records))]
        data = b"\n".join(lines) + b"\n"
        name = {"sacct_json": "jobs.json", "dcgm_series": "dcgm_series.jsonl", "repair_tickets_csv": "tickets.csv"}.get(
            case.kind, "input.log"
        )
        if case.gzip:
            path = root / (name + ".gz")
            path.write_bytes(gzip.compress(data, mtime=0))
        else:
            path = root / name
            path.write_bytes(data)
        return path
    top = root / "input"
    top.mkdir()
    if spec.layout == "dcgm_dir":
        for index, record in enumerate(case.records):
            relative = f"{record.folder}/{record.file}" if record.folder else record.file
            if (top / relative).exists():  # two records given one time: the second's name says so too
                folder, _, name = relative.rpartition("/")
                stamp, _, suffix = name.partition(".")
                relative = "/".join(part for part in (folder, f"{stamp}.{index}.{suffix}") if part)
            path = top / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(record.text)
            case.keys.append((relative, 1))
        return top
    by_file: dict[str, list[bytes]] = {}
    for record in case.records:
        relative = f"{record.folder}/{record.file}" if record.folder else record.file
        lines = by_file.setdefault(relative, list(case.seeds.header))
        lines.append(record.text)
        case.keys.append((relative, len(lines)))
    for relative, lines in by_file.items():
        path = top / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(lines) + b"\n")
    return top


# --- the worker ----------------------------------------------------------------------------------

BLOCKED_EVENTS = ("subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn", "os.fork", "os.forkpty",
                  "pty.spawn", "os.startfile", "ctypes.dlopen")  # fmt: skip


# Read by each worker before its first input (not checked): the readers' lazy imports and DuckDB's start
WARM_UP = (
    ("sacct_psv", DATA / "slurm-22.05" / "sacct_fields_allocations.psv"),
    ("sacct_json", DATA / "slurm-22.05" / "sacct.json"),
    ("scontrol_nodes", DATA / "slurm-22.05" / "scontrol_show_node.final.txt"),
)


class CommandBlocked(RuntimeError):
    """A read tried to run a command (the fuzzer's audit hook refuses it)."""


def _audit(commands: list[str]) -> Callable[[str, tuple], None]:
    def hook(event: str, args: tuple) -> None:
        if event in BLOCKED_EVENTS and event != "ctypes.dlopen":
            commands.append(f"{event}{args!r}"[:300])
            raise CommandBlocked(f"the fuzzer blocked {event}")

    return hook


def _innermost_flows_frame(error: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "/flows/" in f.filename]
    if not frames:
        return ""
    frame = frames[-1]
    return f"flows/{frame.filename.rsplit('/flows/', 1)[1]}:{frame.lineno}"


def read_input(kind: str, path: Path, timezone: str, commands: list[str]) -> Outcome:
    """Run `kind`'s reader on `path` as `parse_source` does and summarise what came out."""
    from flows.core.errors import InputError
    from flows.ingest.parse import parse_source

    start = time.perf_counter()
    try:
        parsed = parse_source(kind, path, timezone, YEAR)
    except InputError as error:
        return Outcome(
            "input_error", error=f"{type(error).__name__}: {error}"[:2000], seconds=time.perf_counter() - start
        )
    except (Exception, RecursionError, MemoryError) as error:  # noqa: BLE001 - every escape is the finding
        text = f"{type(error).__name__}: {error}"[:500]
        return Outcome("raw", error=text, where=_innermost_flows_frame(error), seconds=time.perf_counter() - start)
    seconds = time.perf_counter() - start
    columns = parsed.rows.column_names
    lines = parsed.rows.column("source_line").to_pylist() if "source_line" in columns else []
    files = (
        parsed.rows.column("source_file").to_pylist()
        if "source_file" in columns and path.is_dir()
        else [""] * len(lines)
    )
    rows = sorted({(f or "", int(line)) for f, line in zip(files, lines, strict=True) if line is not None})
    quarantined = []
    for error in parsed.quarantined:
        relative = ""
        if path.is_dir():
            with contextlib.suppress(ValueError):
                relative = str(Path(error.path).relative_to(path))
        quarantined.append((relative, int(error.line), str(error.field)))
    stats = {k: v for k, v in parsed.stats.items() if isinstance(v, int | bool)}
    return Outcome("ok", rows, quarantined, stats, seconds=seconds)


def _worker(conn: multiprocessing.connection.Connection, workdir: str) -> None:
    """A worker process: reads (kind, path, timezone) requests, answers Outcomes; no command may run."""
    os.chdir(workdir)
    out = os.open(os.path.join(workdir, "printed"), os.O_RDWR | os.O_CREAT | os.O_TRUNC)
    os.dup2(out, 1)
    os.dup2(out, 2)
    commands: list[str] = []
    sys.addaudithook(_audit(commands))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for kind, path in WARM_UP:  # the first read of a process loads what the readers load lazily (~1 s)
        read_input(kind, path, "UTC", commands)
    conn.send("ready")
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        kind, path, timezone = request
        commands.clear()
        os.lseek(out, 0, os.SEEK_SET)
        os.ftruncate(out, 0)
        outcome = read_input(kind, Path(path), timezone, commands)
        outcome.commands = list(commands)
        if os.path.exists(SENTINEL):
            outcome.commands.append(f"the sentinel file {SENTINEL} was created")
            os.unlink(SENTINEL)
        sys.stdout.flush()
        sys.stderr.flush()
        os.lseek(out, 0, os.SEEK_SET)
        printed = os.read(out, 4000)
        outcome.printed = printed.decode("utf-8", "replace")
        conn.send(outcome)


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Worker:
    """A worker process that reads one input at a time, restarted after a hang or a crash."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(child, str(self.workdir)), daemon=True)
        self.process.start()
        child.close()
        if self.conn.poll(120):  # warmed up (WARM_UP): its first input is timed as any other
            self.conn.recv()

    def submit(self, kind: str, path: Path, timezone: str) -> None:
        self.started = time.perf_counter()
        self.conn.send((kind, str(path), timezone))

    def poll(self, timeout: float, memory_mib: float) -> Outcome | None:
        """The outcome when it is there, a hang or memory outcome past the bounds, else None."""
        if self.conn.poll(0):
            try:
                return self.conn.recv()
            except (EOFError, OSError):
                self.restart()
                return Outcome("crash", error="the worker died", seconds=time.perf_counter() - self.started)
        if not self.process.is_alive():
            self.restart()
            return Outcome(
                "crash",
                error=f"the worker died (exit {self.process.exitcode})",
                seconds=time.perf_counter() - self.started,
            )
        elapsed = time.perf_counter() - self.started
        if elapsed > timeout:
            self.restart()
            return Outcome("hang", error=f"over {timeout:g} s", seconds=elapsed)
        if _rss_mib(self.process.pid) > memory_mib:
            self.restart()
            return Outcome("memory", error=f"over {memory_mib:g} MiB resident", seconds=elapsed)
        return None

    def restart(self) -> None:
        self.stop(kill=True)
        self._start()

    def stop(self, kill: bool = False) -> None:
        if kill and self.process.is_alive():
            os.kill(self.process.pid, signal.SIGKILL)
        else:
            with contextlib.suppress(OSError, BrokenPipeError):
                self.conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.join()
        self.conn.close()


# --- checking ------------------------------------------------------------------------------------


@dataclass
class Failure:
    kind: str
    check: str
    detail: str  # what happened (the exception and where, the command, the count)
    ops: tuple[str, ...]  # the mutations of the records involved (all of the input's, before shrinking)
    case: int
    records: list[Record] = field(default_factory=list, repr=False)  # the input's records (before shrinking)
    seeds: SeedSet | None = field(default=None, repr=False)
    timezone: str = "UTC"
    gap: Gap | None = None

    @property
    def signature(self) -> tuple[str, str, str]:
        """(kind, check, what happened with its numbers as N): one finding; a known gap's apart."""
        detail = re.sub(r"\d+", "N", self.detail.split("\n")[0])[:160]
        return self.kind, self.check, detail + (" [known gap]" if self.gap else "")


def account(case: Case, outcome: Outcome) -> tuple[int, list[int]]:
    """(records unaccounted for, the indices of the records neither landed nor quarantined)."""
    spec = SPECS[case.kind]
    landed = set(outcome.rows)
    quarantined = {(f, line) for f, line, _ in outcome.quarantined}
    covering = [(f, line) for f, line, name in outcome.quarantined if name in spec.covering_fields]
    if spec.layout == "dcgm_dir":  # a record is a file
        landed = {(f, 1) for f, _ in landed}
        quarantined = {(f, 1) for f, _ in quarantined}
    touched_keys = landed | quarantined
    records = [(i, key) for i, (key, r) in enumerate(zip(case.keys, case.records, strict=True))
               if spec.blank_lines_are_records or r.text.strip()]  # fmt: skip
    untouched, touched = [], set()
    for index, key in records:
        if key in touched_keys or any(key[0] == f and key[1] >= line for f, line in covering):
            touched.add(key)
        else:
            untouched.append(index)
    skipped = ACCOUNTING(case.kind, outcome, touched & touched_keys if case.kind == "dcgm_series" else touched)
    return max(0, len(untouched) - skipped), untouched


_INTERNALS = re.compile(r"duckdb|Possible fixes|state machine|Traceback|pyarrow|\.py\b", re.IGNORECASE)


def check(case: Case, outcome: Outcome, path: Path) -> list[Failure]:
    """The failures of one input's outcome."""
    ops = tuple(sorted({op for r in case.records for op in r.ops}))
    found: list[Failure] = []

    def fail(check: str, detail: str, records_ops: tuple[str, ...] = ops, gap: Gap | None = None) -> None:
        gap = gap or known_gap(case.kind, check)
        found.append(
            Failure(case.kind, check, detail, records_ops, case.number, case.records, case.seeds, case.timezone, gap)
        )

    if outcome.commands:
        fail("command", outcome.commands[0])
    if outcome.printed.strip():
        fail("printed", outcome.printed.strip()[:300])
    if outcome.status in ("hang", "memory"):
        fail("hang", outcome.error)
    elif outcome.status in ("raw", "crash"):
        fail("raw", f"{outcome.error.splitlines()[0][:300]} at {outcome.where or '?'}")
    elif outcome.status == "input_error":
        names = path.name in outcome.error or str(path) in outcome.error
        if not names:
            fail("raw", f"an input error that does not name the file: {outcome.error[:300]}")
        elif _INTERNALS.search(outcome.error):
            fail("internals", outcome.error[:400])
        elif not case.may_refuse:
            fail("refused", outcome.error[:400])
    else:
        missing, untouched = account(case, outcome)
        if missing:
            lines = SPECS[case.kind].layout == "lines"
            texts = [(case.records[i].text, [r.text for r in case.records[:i]] if lines else []) for i in untouched]
            gaps = [known_gap(case.kind, "unaccounted", [text], case.seeds) for text in texts]
            unexcused = missing - sum(1 for gap in gaps if gap is not None)
            untouched_ops = tuple(sorted({op for i in untouched for op in case.records[i].ops})) or ("seed",)
            detail = f"{missing} of {len(case.records)} records neither landed, quarantined nor counted"
            fail("unaccounted", detail, untouched_ops, None if unexcused > 0 else next(g for g in gaps if g))
    return found


# --- the run -------------------------------------------------------------------------------------


@dataclass
class KindReport:
    kind: str
    inputs: int = 0
    mutated: int = 0
    records: int = 0
    rows: int = 0
    quarantined: int = 0
    skipped: int = 0
    raw: int = 0
    hangs: int = 0
    unaccounted: int = 0
    commands: int = 0
    refused: int = 0
    slowest_ms: float = 0.0
    seconds: float = 0.0
    ops: Counter = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)

    @property
    def failed(self) -> list[Failure]:
        return [f for f in self.failures if f.gap is None]


def run_cases(
    cases: Iterable[Case],
    workdir: Path,
    workers: int = 1,
    timeout: float = 5.0,
    memory_mib: float = 2048.0,
    on_result: Callable[[Case, Outcome, list[Failure]], None] | None = None,
) -> Iterator[tuple[Case, Outcome, list[Failure]]]:
    """Read every case in `workers` worker processes; yield (case, outcome, failures) as they finish."""
    pool = [Worker(workdir / f"worker{i}") for i in range(workers)]
    busy: dict[int, tuple[Case, Path]] = {}
    todo = iter(cases)
    exhausted = False
    try:
        while True:
            for i, worker in enumerate(pool):
                if i not in busy and not exhausted:
                    case = next(todo, None)
                    if case is None:
                        exhausted = True
                        break
                    path = write_case(case, workdir / f"case{i}")
                    worker.submit(case.kind, path, case.timezone)
                    busy[i] = (case, path)
            if not busy:
                return
            multiprocessing.connection.wait([pool[i].conn for i in busy], timeout=0.05)
            for i in list(busy):
                outcome = pool[i].poll(timeout, memory_mib)
                if outcome is None:
                    continue
                case, path = busy.pop(i)
                failures = check(case, outcome, path)
                if on_result:
                    on_result(case, outcome, failures)
                shutil.rmtree(workdir / f"case{i}", ignore_errors=True)
                yield case, outcome, failures
    finally:
        for worker in pool:
            worker.stop(kill=bool(busy))


def cases_for(kind: str, lines: int, seed: int, per_input: int) -> Iterator[Case]:
    """Inputs of `kind` until `lines` records have been mutated (deterministic for `seed`)."""
    rng = random.Random(f"{seed}:{kind}")
    done, number = 0, 0
    while done < lines and number < 20 * lines + 100:  # (bounded: should no mutation apply)
        size = min(per_input, max(1, lines - done)) if SPECS[kind].layout != "dcgm_dir" else min(per_input, 40)
        case = make_case(kind, number, rng, size)
        done += case.mutated
        number += 1
        if case.mutated:  # a case a focused family left unmutated is not read
            yield case


def fuzz(
    kinds: Iterable[str],
    lines: int,
    seed: int = 0,
    per_input: int = 100,
    workers: int = 1,
    timeout: float = 5.0,
    memory_mib: float = 2048.0,
    workdir: Path | None = None,
    progress: Callable[[KindReport], None] | None = None,
) -> dict[str, KindReport]:
    """Fuzz each kind with `lines` mutated records; a report per kind (`progress` is told of each input read)."""
    own = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="fuzz-readers-")) if workdir is None else workdir
    reports = {kind: KindReport(kind) for kind in kinds}
    kept: dict[tuple[str, str, str], int] = {}
    import flows.ingest.parse  # noqa: F401 - imported once here, so that each forked worker has it

    for kind in kinds:  # seeds first (the simulated month), so that workers fork with them built
        SPECS[kind].seeds()
    try:
        all_cases = (case for kind in kinds for case in cases_for(kind, lines, seed, per_input))
        for case, outcome, failures in run_cases(all_cases, workdir, workers, timeout, memory_mib):
            report = reports[case.kind]
            report.inputs += 1
            report.mutated += case.mutated
            report.records += len(case.records)
            report.rows += len(outcome.rows)
            report.quarantined += len(outcome.quarantined)
            report.ops.update(op for r in case.records for op in r.ops)
            if outcome.status == "ok":
                missing, untouched = account(case, outcome)
                report.skipped += len(untouched) - missing
            report.raw += outcome.status in ("raw", "crash")
            report.hangs += outcome.status in ("hang", "memory")
            report.refused += outcome.status == "input_error"
            report.commands += bool(outcome.commands)
            report.unaccounted += sum(int(f.detail.split()[0]) for f in failures if f.check == "unaccounted")
            report.slowest_ms = max(report.slowest_ms, outcome.seconds * 1000)
            report.seconds += outcome.seconds
            for failure in failures:  # the inputs of the first few of a finding are kept (to shrink), no more
                kept[failure.signature] = kept.get(failure.signature, 0) + 1
                if kept[failure.signature] > KEEP_INPUTS:
                    failure.records = []
            report.failures += failures
            if progress:
                progress(report)
    finally:
        if own:
            shutil.rmtree(workdir, ignore_errors=True)
    return reports


KEEP_INPUTS = 5  # inputs kept per distinct finding, for `shrink`
SINGLE_RECORD_SECONDS = 1.0  # one record alone: a hang when over this (an input of many is bounded by `timeout`)


def shrink(failure: Failure, workdir: Path, timeout: float = 5.0, limit: int = 60) -> list[tuple[Case, Failure]]:
    """The failure's input cut to single records: each of its mutated records (at most `limit`) read
    alone, with its seed set's header, kept when it fails the same check (a hang: one record over
    SINGLE_RECORD_SECONDS). [(the one-record case, its failure)]."""
    assert failure.seeds is not None
    if not failure.records:  # not kept (KEEP_INPUTS)
        return []
    candidates = [r for r in failure.records if r.ops] or failure.records
    if failure.check == "hang":  # the likely ones first: the long values
        candidates = sorted(candidates, key=lambda r: -len(r.text))
        timeout = min(timeout, SINGLE_RECORD_SECONDS)
    tries = [
        Case(failure.kind, failure.case, failure.seeds, [record], failure.timezone) for record in candidates[:limit]
    ]
    found, seen = [], set()
    for case, failed in _failing(tries, failure, workdir, timeout):
        if case.records[0].text not in seen:
            seen.add(case.records[0].text)
            found.append((case, failed))
    if found or failure.check == "hang":
        return found
    # no record fails alone: halve the input while a half still fails (the records act together)
    records = list(failure.records)
    while len(records) > 1:
        halves = [records[: len(records) // 2], records[len(records) // 2 :]]
        tries = [Case(failure.kind, failure.case, failure.seeds, half, failure.timezone) for half in halves]
        failing = list(_failing(tries, failure, workdir, timeout))
        if not failing:
            break
        records = failing[0][0].records
    case = Case(failure.kind, failure.case, failure.seeds, records, failure.timezone)
    return [(case, f) for case, f in _failing([case], failure, workdir, timeout)]


def _failing(cases: list[Case], failure: Failure, workdir: Path, timeout: float) -> Iterator[tuple[Case, Failure]]:
    """The cases that fail as `failure` did (the same check, a known gap or not alike), with that failure."""
    for case, _, failures in run_cases(cases, workdir, 1, timeout):
        same = [f for f in failures if f.check == failure.check and (f.gap is None) == (failure.gap is None)]
        if same:
            yield case, same[0]


def reproducer(case: Case, failure: Failure, out: Path, name: str) -> Path:
    """Write the one-record case under `out/name` with a note of how to run it; the input's path."""
    target = out / name
    shutil.rmtree(target, ignore_errors=True)
    path = write_case(case, target)
    note = {
        "kind": case.kind,
        "check": failure.check,
        "what": failure.detail,
        "mutations": [list(r.ops) for r in case.records],
        "records_base64": [base64.b64encode(r.text).decode() for r in case.records],
        "records_repr": [repr(r.text[:300]) + ("..." if len(r.text) > 300 else "") for r in case.records],
        "timezone": case.timezone,
        "run": f"TZ={case.timezone} .venv/bin/reliability-report parse --kind {case.kind} {path} --json",
    }
    (target / "finding.json").write_text(json.dumps(note, indent=1) + "\n")
    return path


def summary_table(reports: dict[str, KindReport]) -> list[str]:
    header = ("kind", "inputs", "mutated lines", "rows", "quarantined", "skipped", "raw exceptions", "hangs",
              "unaccounted", "commands", "refused", "slowest input ms", "known gaps")  # fmt: skip
    rows = [header]
    for r in reports.values():
        known = sum(1 for f in r.failures if f.gap is not None)
        rows.append((r.kind, f"{r.inputs:,}", f"{r.mutated:,}", f"{r.rows:,}", f"{r.quarantined:,}", f"{r.skipped:,}",
                     str(r.raw), str(r.hangs), f"{r.unaccounted:,}", str(r.commands), str(r.refused),
                     f"{r.slowest_ms:,.0f}", str(known)))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
            for row in rows]  # fmt: skip
