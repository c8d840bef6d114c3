"""The readers' fuzzer in the quick tier (issue 50, item 5): every file and directory kind fed mutated
real lines with a small fixed budget and seed (tests/fuzz_readers.py has the seeds, mutations and
checks), and the on-demand bench (bench/fuzz_readers.py) run at toy size.

A failure names the kind, the check (`raw`, `refused`, `internals`, `command`, `printed`, `hang`,
`unaccounted`) and what happened; `.venv/bin/python bench/fuzz_readers.py --kind K` finds it again
at size and writes a one-record reproducer. A check that cannot pass yet is excused in one place,
`fuzz_readers.KNOWN_GAPS`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import fuzz_readers as fz
import pytest

from flows.ingest.sources.registry import DIRECTORY_KINDS, FILE_KINDS

QUICK_LINES = 80  # mutated records per kind: about a second of reading each, on two workers
QUICK_SEED = 50
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, fz.KindReport]:
    workdir = tmp_path_factory.mktemp("fuzz")
    return fz.fuzz(fz.KINDS, QUICK_LINES, QUICK_SEED, per_input=40, workers=2, timeout=5.0, workdir=workdir)


def test_every_file_and_directory_kind_is_fuzzed():
    assert set(fz.KINDS) == set(FILE_KINDS) | set(DIRECTORY_KINDS)
    assert len(fz.KINDS) == 14


@pytest.mark.parametrize("kind", fz.KINDS)
def test_reader_survives_mutated_lines(kind: str, reports: dict[str, fz.KindReport]):
    report = reports[kind]
    assert report.mutated >= QUICK_LINES and report.inputs >= 2
    failures = "\n".join(f"  {f.check}: {f.detail[:300]} (mutations: {', '.join(f.ops[:10])})" for f in report.failed)
    assert not report.failed, (
        f"{kind}: {len(report.failed)} inputs failed the fuzzer's checks (reproduce and shrink them: "
        f".venv/bin/python bench/fuzz_readers.py --kind {kind} --lines 2000):\n{failures}"
    )


def test_every_mutation_ran(reports: dict[str, fz.KindReport]):
    """Each family of mutations reached some reader (a mutation that never applies tests nothing)."""
    ops = set().union(*(r.ops for r in reports.values()))
    families = {op.split(":")[0] for op in ops}
    assert {"byte", "field", "number", "time", "node", "unicode", "json", "layout"} <= families, families
    assert {"byte:lone_cr", "byte:crlf", "byte:bad_utf8", "byte:control", "json:deep", "json:huge"} <= ops


def _outcome_of(case: fz.Case, landed: list[int]) -> fz.Outcome:
    return fz.Outcome("ok", rows=[("", case.keys[i][1]) for i in landed], stats={"other_lines": 0})


def test_a_record_neither_landed_quarantined_nor_counted_is_a_failure(tmp_path: Path):
    case = fz.Case("xid_syslog", 0, fz.SPECS["xid_syslog"].seeds()[0], [fz.Record(b"a"), fz.Record(b"b")], "UTC")
    path = fz.write_case(case, tmp_path)
    assert fz.check(case, _outcome_of(case, [0, 1]), path) == []
    (failure,) = fz.check(case, _outcome_of(case, [0]), path)
    assert failure.check == "unaccounted" and failure.detail.startswith("1 of 2 records")
    counted = fz.Outcome("ok", rows=[("", case.keys[0][1])], stats={"other_lines": 1})
    assert fz.check(case, counted, path) == []


def test_an_escaping_exception_or_a_command_is_a_failure(tmp_path: Path):
    case = fz.Case("repair_tickets_csv", 0, fz.SPECS["repair_tickets_csv"].seeds()[0], [fz.Record(b"x")], "UTC")
    path = fz.write_case(case, tmp_path)
    raw = fz.check(case, fz.Outcome("raw", error="OverflowError: date value out of range"), path)
    assert [f.check for f in raw] == ["raw"]
    ran = fz.check(case, fz.Outcome("ok", rows=[("", 2)], commands=["subprocess.Popen('/bin/sh')"]), path)
    assert [f.check for f in ran] == ["command"]
    refused = fz.check(case, fz.Outcome("input_error", error=f"InputFormatError: {path}:1: field file: broken"), path)
    assert [f.check for f in refused] == ["refused"]


def test_the_worker_blocks_and_records_commands():
    """The audit hook the workers install refuses a command and records it (a subprocess, os.system)."""
    code = (
        "import os, subprocess, sys; sys.path.insert(0, 'tests'); import fuzz_readers as fz\n"
        "seen = []; sys.addaudithook(fz._audit(seen))\n"
        "for run in (lambda: os.system('true'), lambda: subprocess.run(['true'])):\n"
        "    try:\n        run()\n    except fz.CommandBlocked:\n        pass\n"
        "print(len(seen), seen[0].split('(')[0], seen[1].split('(')[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["2", "os.system", "subprocess.Popen"], done.stderr


def test_the_on_demand_bench_at_toy_size(tmp_path: Path):
    """bench/fuzz_readers.py runs (two kinds, a few lines) and prints its table and findings."""
    out = tmp_path / "findings"
    done = subprocess.run(
        [sys.executable, "bench/fuzz_readers.py", "--lines", "15", "--kind", "scontrol_nodes", "--kind", "ipmi_sel_dir",
         "--workers", "1", "--per-input", "15", "--out", str(out), "--json", str(tmp_path / "fuzz.json")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    table = done.stdout.splitlines()
    assert table[1].split()[:3] == ["kind", "inputs", "mutated"] and table[2].startswith("scontrol_nodes")
    summary = json.loads((tmp_path / "fuzz.json").read_text())
    assert summary["kinds"]["ipmi_sel_dir"]["mutated"] >= 15
    assert done.returncode == (1 if any(not f["known_gap"] for f in summary["findings"]) else 0)
