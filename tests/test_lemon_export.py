"""The lemon candidates as a Slurm host list and a drain script that is written, never run."""

import os
import shlex
import stat
import subprocess
from pathlib import Path

from ClusterShell.NodeSet import NodeSet
from saved_month import saved_metrics

from flows.figures.document import MonthDocument
from flows.figures.figure_types import LemonNodes
from flows.report.lemon_export import drain_script, lemon_hostlist, write_lemon_exports

# a candidate's evidence besides its rules and failures, and a window's fleet fits: not in the exports
EVIDENCE = {
    "incident_p_value": None,
    "repeat_p_value": None,
    "failure_incidents": 2,
    "most_incidents_within_repeat_days": 1,
    "xid_cnt": 0,
    "out_count": 1,
    "tickets": 0,
    "multi_node_node_fails": 0,
    "single_node_node_fails": 2,
    "single_node_node_failure_rate": None,
}
FLEET = {
    "window_days": 28,
    "fleet_nodes": 64,
    "fleet_mean_incident_hours": None,
    "fleet_incident_dispersion": None,
    "fleet_mean_failure_incidents": None,
    "fleet_failure_dispersion": None,
    "repeat_threshold": 3,
    "signal_distribution": {},
}


def candidate(node: str, rules: list[str], failures: int = 2) -> dict:
    return {
        "node": node,
        "rules": rules,
        "p_value": 1.234e-7,
        "incident_hours": 6,
        "failures": ["2026-10-03T01:00:00"] * failures,
        **EVIDENCE,
    }


def lemon_nodes(lemons: dict) -> LemonNodes:
    """The figure of `lemons` (a window's, with a trailing window's if any), with the fleet's fits."""
    trailing = lemons.get("trailing")
    return LemonNodes.model_validate({**FLEET, **lemons, **({"trailing": {**FLEET, **trailing}} if trailing else {})})


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
    hostlist = lemon_hostlist(lemon_nodes(LEMONS))
    assert hostlist == "cpu7,gpu[001-003,017]"
    assert set(NodeSet(hostlist)) == {c["node"] for c in LEMONS["candidates"]}
    assert lemon_hostlist(lemon_nodes(dict(LEMONS, candidates=[]))) == ""


def test_the_drain_script_quotes_each_reason_and_is_never_executable(tmp_path: Path):
    """Each line is `scontrol update nodename=N state=drain reason=R` whose words, as sh splits
    them, are exactly those (a reason with quotes, $ and ; stays one word); the files are not
    executable; running the script with a stub scontrol drains each candidate once."""
    hostile = dict(LEMONS, candidates=[*LEMONS["candidates"], candidate("gpu004", ["it's $(rm -rf /); `x`"])])
    script = drain_script(lemon_nodes(hostile), "2026-10")
    commands = [line for line in script.splitlines() if line.startswith("scontrol")]
    assert len(commands) == len(hostile["candidates"])
    for line, c in zip(commands, hostile["candidates"], strict=True):
        words = shlex.split(line)
        assert words[:4] == ["scontrol", "update", f"nodename={c['node']}", "state=drain"]
        assert len(words) == 5 and words[4].startswith(
            f"reason=lemon candidate 2026-10: {c['rules'][0].replace('_', ' ')}"
        )
    month = MonthDocument.model_validate({**saved_metrics(), "lemon_nodes": lemon_nodes(hostile).model_dump()})
    paths = write_lemon_exports(tmp_path, month)
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
    assert set(NodeSet(lemon_hostlist(lemon_nodes(lemons)))) == {c["node"] for c in LEMONS["candidates"]} | {"gpu007"}
    script = drain_script(lemon_nodes(lemons), "2026-10")
    commands = [shlex.split(line) for line in script.splitlines() if line.startswith("scontrol")]
    assert [words[2] for words in commands].count("nodename=gpu017") == 1
    assert commands[-1][2:] == ["nodename=gpu007", "state=drain", commands[-1][4]]
    assert commands[-1][4].startswith("reason=lemon candidate 2026-10 over 92 days: outlier")
    assert "trailing window from 2026-08-01T00:00:00" in script
