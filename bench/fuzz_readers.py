"""The readers' fuzzer at size, on demand: N mutated lines per reader (default 100,000).

    .venv/bin/python bench/fuzz_readers.py [--lines N] [--kind K ...] [--seed S] [--workers W]
        [--per-input R] [--timeout SECONDS] [--out DIR]

Runs tests/fuzz_readers.py's harness (the seeds, mutations and checks are there, and
docs/testing.md says what is checked) over every file and directory kind, or the `--kind`s given,
and prints a table per reader: inputs read, mutated lines, rows landed, records quarantined and
skipped, raw exceptions, hangs (over the time or memory bound), records unaccounted for, commands
run, inputs refused whole and the slowest input. Then each distinct finding, shrunk to one record,
its reproducer written under `--out` (a `finding.json` beside the input: the record, what happened
and the `reliability-report parse` command that shows it). Exit 1 on any failure not excused by
`KNOWN_GAPS` (`--strict`: by none).

The flows package is the one Python imports: run it from another checkout with that checkout's
environment, e.g. `cd ../other && .venv/bin/python ../this/bench/fuzz_readers.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import fuzz_readers as fz  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=100_000, help="mutated lines (records) per reader")
    parser.add_argument("--kind", action="append", choices=fz.KINDS, help="a kind to fuzz (repeatable; default all 14)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--per-input", type=int, default=200, help="records per input file or directory")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds one input may take")
    parser.add_argument("--memory-mib", type=float, default=2048.0, help="resident memory one read may take")
    parser.add_argument("--out", type=Path, default=Path("bench/results/fuzz_findings"), help="reproducers go here")
    parser.add_argument("--shrink", type=int, default=3, help="failing inputs shrunk per distinct finding")
    parser.add_argument("--strict", action="store_true", help="known gaps fail too")
    parser.add_argument("--json", type=Path, help="write the table and findings as JSON here")
    args = parser.parse_args(argv)
    kinds = tuple(args.kind or fz.KINDS)

    import flows

    print(
        f"flows from {Path(flows.__file__).parent}; {args.lines:,} mutated lines per reader, seed {args.seed}",
        flush=True,
    )
    workdir = Path(tempfile.mkdtemp(prefix="fuzz-readers-"))
    started = time.perf_counter()
    try:
        reports: dict[str, fz.KindReport] = {}
        for kind in kinds:  # one kind at a time, its row printed (stderr) when it is done
            bounds = (args.timeout, args.memory_mib)
            reports |= fz.fuzz(
                [kind], args.lines, args.seed, args.per_input, args.workers, *bounds, workdir, _progress()
            )
            print(fz.summary_table({kind: reports[kind]})[-1], file=sys.stderr, flush=True)
        print("\n".join(fz.summary_table(reports)))
        print(f"({time.perf_counter() - started:,.0f} s)")
        findings = report_findings(reports, args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        table = {
            k: {key: value for key, value in vars(r).items() if key not in ("failures", "ops")}
            for k, r in reports.items()
        }
        args.json.write_text(json.dumps({"kinds": table, "findings": findings}, indent=1, default=str) + "\n")
    failing = [f for f in findings if args.strict or not f["known_gap"]]
    return 1 if failing else 0


def _progress(every: float = 30.0) -> Callable[[fz.KindReport], None]:
    """A line on stderr every `every` seconds: the kind being read, its mutated lines and failures so far."""
    last = [time.perf_counter()]

    def tell(report: fz.KindReport) -> None:
        if time.perf_counter() - last[0] >= every:
            last[0] = time.perf_counter()
            print(f"  ... {report.kind}: {report.mutated:,} mutated lines, {len(report.failures)} failing inputs",
                  file=sys.stderr, flush=True)  # fmt: skip

    return tell


def report_findings(reports: dict[str, fz.KindReport], args: argparse.Namespace, workdir: Path) -> list[dict]:
    """Each distinct finding (kind, check, what), shrunk to single records; reproducers under args.out."""
    by_signature: dict[tuple[str, str, str], list[fz.Failure]] = {}
    for report in reports.values():
        for failure in report.failures:
            by_signature.setdefault(failure.signature, []).append(failure)
    findings = []
    if by_signature:
        args.out.mkdir(parents=True, exist_ok=True)
        print(f"\n{len(by_signature)} distinct findings (reproducers in {args.out}):")
    for n, (signature, failures) in enumerate(sorted(by_signature.items()), start=1):
        kind, check, detail = signature
        gap = failures[0].gap
        shrunk: list[tuple[fz.Case, fz.Failure]] = []
        for failure in failures[: args.shrink]:
            shrunk += fz.shrink(failure, workdir / "shrink", args.timeout)
            if shrunk:
                break
        records = []
        smallest = sorted(shrunk, key=lambda cf: (len(cf[0].records), sum(len(r.text) for r in cf[0].records)))
        for i, (case, single) in enumerate(smallest[:3]):
            path = fz.reproducer(case, single, args.out, f"{n:03d}-{kind}-{check}-{i}")
            ops = sorted({op for r in case.records for op in r.ops})
            shown = _shown(case.records[0].text) + (
                f" (+{len(case.records) - 1} more records)" if len(case.records) > 1 else ""
            )
            records.append({"ops": ops, "record": shown, "records": len(case.records),
                            "what": single.detail, "input": str(path), "timezone": case.timezone})  # fmt: skip
        mark = f" [known gap: {gap.reason}]" if gap else ""
        print(f"{n:3d}. {kind} {check} x{len(failures)}: {failures[0].detail[:300]}{mark}")
        for r in records:
            print(f"       {', '.join(r['ops'])} ({r['timezone']}): {r['record']} -> {r['what'][:200]}")
        if not records:
            print(
                f"       (not reproduced by a single record; mutations in the input: {', '.join(failures[0].ops[:12])})"
            )
        findings.append({"kind": kind, "check": check, "what": failures[0].detail, "count": len(failures),
                         "known_gap": gap.reason if gap else "", "reproducers": records})  # fmt: skip
    return findings


def _shown(text: bytes, limit: int = 160) -> str:
    """A record as a Python bytes literal, long runs shortened (400,000 spaces as ' '*400000)."""
    runs = re.sub(rb"(.)\1{40,}", lambda m: b"<" + m.group(1) + b" x" + str(len(m.group())).encode() + b">", text)
    shown = repr(runs)
    return shown if len(shown) <= limit else shown[:limit] + "...'"


if __name__ == "__main__":
    sys.exit(main())
