"""The lemon candidates as a Slurm host list and a drain script that is written, never run."""

import os
import shlex
import stat
import subprocess
from pathlib import Path

from ClusterShell.NodeSet import NodeSet

from flows.report.lemon_export import drain_script, lemon_hostlist, write_lemon_exports


def candidate(node: str, rules: list[str], failures: int = 2) -> dict:
    return {
        "node": node,
        "rules": rules,
        "p_value": 1.234e-7,
        "incident_hours": 6,
        "failures": ["2026-10-03T01:00:00"] * failures,
    }


LEMONS = {
    "window_start": "2026-10-04T00:00:00",
    "window_end": "2026-11-01T00:00:00",
    "candidates": [
        candidate("gpu017", ["outlier"]),
        candidate("gpu002", ["outlier", "repeat_offender"]),
        candidate("gpu001", ["repeat_offender"]),
        candidate("gpu003", ["outlier"]),
        candidate("cpu7", ["outlier"]),
    ],
}


def test_the_hostlist_is_folded_slurm_style():
    hostlist = lemon_hostlist(LEMONS)
    assert hostlist == "cpu7,gpu[001-003,017]"
    assert set(NodeSet(hostlist)) == {c["node"] for c in LEMONS["candidates"]}
    assert lemon_hostlist({"candidates": []}) == ""


def test_the_drain_script_quotes_each_reason_and_is_never_executable(tmp_path: Path):
    """Each line is `scontrol update nodename=N state=drain reason=R` whose words, as sh splits
    them, are exactly those (a reason with quotes, $ and ; stays one word); the files are not
    executable; running the script with a stub scontrol drains each candidate once."""
    hostile = dict(LEMONS, candidates=[*LEMONS["candidates"], candidate("gpu004", ["it's $(rm -rf /); `x`"])])
    script = drain_script(hostile, "2026-10")
    commands = [line for line in script.splitlines() if line.startswith("scontrol")]
    assert len(commands) == len(hostile["candidates"])
    for line, c in zip(commands, hostile["candidates"], strict=True):
        words = shlex.split(line)
        assert words[:4] == ["scontrol", "update", f"nodename={c['node']}", "state=drain"]
        assert len(words) == 5 and words[4].startswith(
            f"reason=lemon candidate 2026-10: {c['rules'][0].replace('_', ' ')}"
        )
    paths = write_lemon_exports(tmp_path, {"lemon_nodes": hostile, "month": "2026-10"})
    for path in paths.values():
        assert not os.stat(path).st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    # a dry run against a stub scontrol that records its arguments (the tool itself never runs it)
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "scontrol").write_text('#!/bin/sh\nprintf "%s|" "$@" >> "$LOG"; echo >> "$LOG"\n')
    (stub / "scontrol").chmod(0o755)
    log = tmp_path / "calls.log"
    env = {"PATH": f"{stub}:/usr/bin:/bin", "LOG": str(log)}
    subprocess.run(["sh", str(paths["lemon_drain_script"])], check=True, env=env, cwd=tmp_path)
    calls = log.read_text().splitlines()
    assert [call.split("|")[1] for call in calls] == [f"nodename={c['node']}" for c in hostile["candidates"]]
    assert "reason=lemon candidate 2026-10: it's $(rm -rf /); `x`" in calls[-1]


def test_the_trailing_windows_candidates_are_listed_once_beside_the_months():
    """A node only the trailing window lists (issue 35) is in the host list and the drain script,
    its reason naming the window; one both windows list appears once."""
    trailing = {
        "window_start": "2026-08-01T00:00:00",
        "window_end": "2026-11-01T00:00:00",
        "window_days": 92,
        "candidates": [candidate("gpu007", ["outlier"]), candidate("gpu017", ["outlier"])],
    }
    lemons = dict(LEMONS, trailing=trailing)
    assert set(NodeSet(lemon_hostlist(lemons))) == {c["node"] for c in LEMONS["candidates"]} | {"gpu007"}
    script = drain_script(lemons, "2026-10")
    commands = [shlex.split(line) for line in script.splitlines() if line.startswith("scontrol")]
    assert [words[2] for words in commands].count("nodename=gpu017") == 1
    assert commands[-1][2:] == ["nodename=gpu007", "state=drain", commands[-1][4]]
    assert commands[-1][4].startswith("reason=lemon candidate 2026-10 over 92 days: outlier")
    assert "trailing window from 2026-08-01T00:00:00" in script
