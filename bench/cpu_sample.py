"""The CPU time of a command and of every process it starts, orphans included, by program.

`/usr/bin/time` counts only the children a process waited for: a JVM whose launching script is
ended first (tests/spark_connect.py stops the Spark Connect server's process group) is re-parented
to init and its CPU is lost (test_spark: 56 CPU-s by /usr/bin/time, 239 s here). This samples
/proc every `--every` seconds instead: each descendant's user + system time as last seen (a
process that lives less than one interval may be missed; its parent's own time is still counted).
Python processes are named by what they run (pytest, uvicorn: a Prefect server, ...); with
`--threads`, the JVMs' threads by name (SparkConnectExecuteThread, C1 CompilerThread, ...).

    .venv/bin/python bench/cpu_sample.py -- .venv/bin/python -m pytest -q tests/test_spark.py
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def stat(path: Path) -> tuple[str, int, float, str] | None:
    """(program name, parent pid, CPU seconds, start time) of /proc/<pid> or /proc/<pid>/task/<tid>."""
    try:
        text = (path / "stat").read_text()
    except OSError:  # gone meanwhile
        return None
    name, fields = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS, fields[19]


def python_label(pid: int) -> str:
    """What a Python process runs, from its command line."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    except OSError:
        return "python"
    for marker in ("pytest", "uvicorn", "reliability-report", "prefect"):
        if any(marker in arg for arg in argv[:4]):
            return f"python {marker}"
    return "python " + " ".join(" ".join(argv[1:3]).split())[:40]


def sample(command: list[str], every: float, threads: bool) -> tuple[int, float, Counter, Counter]:
    """Run `command`; its exit code, wall seconds, CPU seconds by program and by JVM thread name."""
    start = time.monotonic()
    root = subprocess.Popen(command)
    started: dict[int, str | None] = {root.pid: None}  # descendants seen: pid -> start time
    last: dict[tuple[int, str], tuple[str, float]] = {}  # (pid, start time) -> (label, CPU seconds)
    jvm_threads: dict[tuple[int, str], tuple[str, float]] = {}
    labels: dict[tuple[int, str], str] = {}
    ended = start
    while True:
        live = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := stat(Path("/proc", p)))}
        grown = True
        while grown:  # descendants of descendants found in the same pass
            grown = False
            for pid, (_, parent, _, since) in live.items():
                if pid not in started and parent in started:
                    started[pid], grown = since, True
        for pid, since in list(started.items()):
            if pid not in live:
                continue
            name, _, cpu, now_since = live[pid]
            if since is None:
                started[pid] = since = now_since
            if now_since != since:  # the pid was reused by an unrelated process
                continue
            if name.startswith("python"):
                name = labels.setdefault((pid, since), python_label(pid))
            last[(pid, since)] = (name, cpu)
            if threads and name == "java":
                for task in Path(f"/proc/{pid}/task").glob("*"):
                    if found := stat(task):
                        thread = re.sub(r"[\d#-]+$", "", found[0]).strip()
                        jvm_threads[(pid, task.name)] = (f"{pid} {thread}", found[2])
        if root.poll() is None:
            ended = time.monotonic()
        elif not any(pid in live and live[pid][3] == since for pid, since in started.items() if pid != root.pid):
            break  # every orphan has ended too
        elif time.monotonic() - ended > 120:
            break
        time.sleep(every)
    by_program, by_thread = Counter(), Counter()
    for name, cpu in last.values():
        by_program[name] += cpu
    for name, cpu in jvm_threads.values():
        by_thread[name] += cpu
    return root.returncode, time.monotonic() - start, by_program, by_thread


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.3, help="seconds between samples (default 0.3)")
    parser.add_argument("--threads", action="store_true", help="also the JVMs' CPU by thread name")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    code, wall, by_program, by_thread = sample(command, args.every, args.threads)
    print(f"cpu_sample: wall {wall:.1f} s, CPU {sum(by_program.values()):.1f} s, exit {code}", file=sys.stderr)
    for name, cpu in by_program.most_common(10):
        if cpu >= 0.05:
            print(f"cpu_sample:   {name:40s} {cpu:7.1f}", file=sys.stderr)
    for name, cpu in by_thread.most_common(15):  # (Linux keeps a thread's first 15 characters)
        if cpu >= 0.05:
            print(f"cpu_sample:   java {name:35s} {cpu:7.1f}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
