"""The hostile-input corpus of node names and host lists (issue 50): what a node name or a Slurm host
list may hold is what Slurm writes (flows/ingest/sources/hostlists.py, node_names.py).

A crafted name (`@x';touch <sentinel>;'`: ClusterShell's default group resolver ran it through
/bin/sh) goes through every Slurm-side reader that takes a node: it runs nothing, prints nothing and
its record is quarantined naming the field. Group and pattern syntax (`*`, `@all`, `!`, `&`) no
longer invents or drops records; host lists, reasons and long fields cost time linear in their
length. Readers only, in-process (no month is built).
"""

from __future__ import annotations

import json
import random
import re
import time
from datetime import UTC as UTC_TZ
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pytest
from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet
from hostile import Outcome, hostile
from job_records import (
    T_OK,
    XDMOD_FILLER,
    assert_quarantined,
    changed,
    json_attempts,
    sacct_attempts,
    without_line,
    xdmod_attempts,
)
from job_records import dump_clock as clock

from flows.ingest.sources.hostlists import HostListError, expand_host_lists, host_list_nodes, parse_host_list
from flows.ingest.sources.limits import MAX_FIELD_CHARS, InputLimits
from flows.ingest.sources.node_names import NODE_NAME
from flows.ingest.sources.quarantine import Quarantine
from flows.ingest.sources.sacct import XDMOD_FIELDS, SacctReadStats
from flows.ingest.sources.sacctmgr_events import SacctmgrReadStats, read_sacctmgr_events
from flows.ingest.sources.scontrol_nodes import read_scontrol_nodes

UTC = ZoneInfo("UTC")
EVENTS = "sacctmgr_event.final.psv"
NODE3_EVENT = 4  # line 4: node3 DOWN, "xid 79 gpu fell off bus"
SNAPSHOT = "scontrol_show_node.down.txt"
JOB_3 = 4  # jobs[4] of sacct.json is job 3
NODE = re.compile(NODE_NAME)


def psv(path: Path, columns: list[str], rows: list[dict[str, str]], end: str = "\n") -> Path:
    lines = ["|".join(columns)] + ["|".join(row[c] for c in columns) for row in rows]
    path.write_bytes("".join(line + end for line in lines).encode())
    return path


def events_file(slurm_fixtures: Path, out: Path, node_name: str) -> Path:
    lines = (slurm_fixtures / EVENTS).read_text().splitlines()
    fields = lines[NODE3_EVENT - 1].split("|")
    fields[6] = node_name
    lines[NODE3_EVENT - 1] = "|".join(fields)
    out.write_text("\n".join(lines) + "\n")
    return out


# ---- 1. no input executes anything ----------------------------------------------------------------------------------


def crafted(sentinel: Path) -> str:
    """A node name that, expanded by ClusterShell's default group resolver, runs `touch sentinel` in /bin/sh."""
    return f"@x';touch {sentinel};'"


@hostile(Outcome.QUARANTINE)
def test_a_crafted_node_name_runs_nothing_through_sacctmgr_events(slurm_fixtures, tmp_path, capfd):
    sentinel = tmp_path / "pwned"
    path = events_file(slurm_fixtures, tmp_path / "events.psv", crafted(sentinel))
    whole = list(read_sacctmgr_events(slurm_fixtures / EVENTS, clock()))
    quarantine = Quarantine(strict=False)
    events = list(read_sacctmgr_events(path, clock(), quarantine=quarantine))
    assert not sentinel.exists()
    assert capfd.readouterr() == ("", "")  # no sed or /bin/sh message reached the terminal
    assert_quarantined(quarantine.errors, path, NODE3_EVENT, "NodeName", "holds '@' at character 1")
    assert events == [e for e in whole if e.source_line != NODE3_EVENT]


@pytest.mark.parametrize("kind", ["sacct_psv", "sacct_xdmod"])
@hostile(Outcome.QUARANTINE)
def test_a_crafted_complex_node_list_runs_nothing_through_the_job_records(real, baseline, tmp_path, capfd, kind):
    """`node[1-2]x[1-2]y` is not simple: it went to ClusterShell with the crafted group after it."""
    columns, rows = real
    sentinel = tmp_path / "pwned"
    fields = {"NodeList": f"node[1-2]x[1-2]y,{crafted(sentinel)}", "NNodes": "5"}
    rows = changed(rows, T_OK, **fields)
    quarantine = Quarantine(strict=False)
    if kind == "sacct_psv":
        dump = psv(tmp_path / "sacct.psv", columns, rows)
        attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    else:
        dump = tmp_path / "xdmod.log"
        dump.write_text("".join("|".join({**XDMOD_FILLER, **row}[f] for f in XDMOD_FIELDS) + "\n" for row in rows))
        attempts = xdmod_attempts(dump, clock(), quarantine=quarantine)
    assert not sentinel.exists()
    assert capfd.readouterr() == ("", "")
    line = T_OK + (2 if kind == "sacct_psv" else 1)
    assert_quarantined(quarantine.errors, dump, line, "NodeList", "holds '@' at character 18")
    assert [a.job_id for a in attempts] == [a.job_id for a in baseline if a.job_id != "3"]


@hostile(Outcome.QUARANTINE)
def test_a_crafted_node_list_runs_nothing_through_sacct_json(slurm_fixtures, tmp_path, capfd):
    document = json.loads((slurm_fixtures / "sacct.json").read_text())
    sentinel = tmp_path / "pwned"
    document["jobs"][JOB_3]["nodes"] = f"node[1-2]x[1-2]y,{crafted(sentinel)}"
    dump = tmp_path / "jobs.json"
    dump.write_text(json.dumps(document))
    quarantine = Quarantine(strict=False)
    attempts = json_attempts(dump, quarantine=quarantine, clock=clock())
    assert not sentinel.exists()
    assert capfd.readouterr() == ("", "")
    assert_quarantined(quarantine.errors, dump, JOB_3 + 1, "NodeList", "holds '@'")
    assert len(attempts) == len(document["jobs"]) - 1


@hostile(Outcome.QUARANTINE)
def test_a_crafted_node_name_runs_nothing_through_scontrol(slurm_fixtures, tmp_path, capfd):
    sentinel = tmp_path / "pwned"
    snapshot = tmp_path / "scontrol.txt"
    text = (slurm_fixtures / SNAPSHOT).read_text()
    snapshot.write_text(text.replace("NodeName=node3 ", f"NodeName={crafted(sentinel).replace(' ', '')} "))
    quarantine = Quarantine(strict=False)
    events = list(read_scontrol_nodes(snapshot, clock(), quarantine=quarantine))
    assert not sentinel.exists()
    assert capfd.readouterr() == ("", "")
    assert_quarantined(quarantine.errors, snapshot, 3, "NodeName", "is not a host name")
    assert events == [e for e in read_scontrol_nodes(slurm_fixtures / SNAPSHOT, clock()) if e.node != "node3"]


@hostile(Outcome.QUARANTINE)
def test_control_characters_in_a_node_name_reach_no_terminal(slurm_fixtures, tmp_path, capfd):
    """`@x';\\a\\x1bc;'` printed a BEL and a terminal reset through sed's stderr; the quarantine shows them escaped."""
    path = events_file(slurm_fixtures, tmp_path / "events.psv", "@x';\a\x1bc;'")
    quarantine = Quarantine(strict=False)
    list(read_sacctmgr_events(path, clock(), quarantine=quarantine))
    assert capfd.readouterr() == ("", "")
    (error,) = quarantine.errors
    assert "\x1b" not in str(error) and "\a" not in str(error) and "\\x1bc" in str(error)


# ---- 1. group and pattern syntax invents or drops no record ----------------------------------------------------------

GROUP_SYNTAX = ["*", "@all", "@compute", "@nosuchgroup", "node3!node3", "gpu[1-3]&gpu[5-6]", "gpu[1-3]^gpu2", "gpu*"]


@pytest.mark.parametrize("node_name", GROUP_SYNTAX)
@hostile(Outcome.QUARANTINE)
def test_group_and_pattern_syntax_in_a_node_event_is_quarantined(slurm_fixtures, tmp_path, capfd, node_name):
    """`*` and `@all` landed 131 events on ClusterShell's example nodes; `!`, `&`, `@nosuchgroup`,
    `gpu*` gave no event and no quarantine."""
    path = events_file(slurm_fixtures, tmp_path / "events.psv", node_name)
    whole = list(read_sacctmgr_events(slurm_fixtures / EVENTS, clock()))
    quarantine, stats = Quarantine(strict=False), SacctmgrReadStats()
    events = list(read_sacctmgr_events(path, clock(), quarantine=quarantine, stats=stats))
    assert_quarantined(quarantine.errors, path, NODE3_EVENT, "NodeName", "a host list is comma-separated names")
    assert events == [e for e in whole if e.source_line != NODE3_EVENT]
    assert stats.events == len(events) and capfd.readouterr() == ("", "")


@hostile(Outcome.QUARANTINE)
def test_a_node_list_ending_in_a_star_does_not_land_on_every_example_node(real, baseline, tmp_path):
    """`gpu[1-2]x,*` with NNodes 0 landed with 133 nodes (the star expanded to ClusterShell's groups)."""
    columns, rows = real
    dump = psv(tmp_path / "sacct.psv", columns, changed(rows, T_OK, NodeList="gpu[1-2]x,*", NNodes="0"))
    quarantine, stats = Quarantine(strict=False), SacctReadStats()
    attempts = sacct_attempts(dump, clock(), stats, quarantine)
    assert_quarantined(quarantine.errors, dump, T_OK + 2, "NodeList", "holds '*' at character 11")
    assert attempts == without_line(baseline, T_OK + 2) and stats.node_counts_from_node_list == 0


@hostile(Outcome.QUARANTINE)
def test_a_range_bound_no_bigint_holds_in_a_list_of_several_parts_is_quarantined(real, baseline, tmp_path):
    """The fuzzer's finding: `a[1-2],b[1-99999999999999999999]` took the SQL's simple path and
    stopped the file with DuckDB's ConversionException and its SQL (alone, the part was refused)."""
    columns, rows = real
    node_list = "a[1-2],b[1-99999999999999999999]"
    dump = psv(tmp_path / "sacct.psv", columns, changed(rows, T_OK, NodeList=node_list, NNodes="2"))
    quarantine, stats = Quarantine(strict=False), SacctReadStats()
    attempts = sacct_attempts(dump, clock(), stats, quarantine)
    assert_quarantined(quarantine.errors, dump, T_OK + 2, "NodeList", "more than any cluster has")
    assert attempts == without_line(baseline, T_OK + 2)


@hostile(Outcome.FIGURE)
def test_a_node_event_without_a_node_is_counted(slurm_fixtures, tmp_path):
    """An sacctmgr Node event with an empty NodeName was skipped with no count; the cluster row is counted apart."""
    path = events_file(slurm_fixtures, tmp_path / "events.psv", "")
    quarantine, stats = Quarantine(strict=False), SacctmgrReadStats()
    events = list(read_sacctmgr_events(path, clock(), quarantine=quarantine, stats=stats))
    assert quarantine.errors == []
    assert (stats.rows, stats.events, stats.cluster_records, stats.without_node) == (5, 3, 1, 1)
    assert len(events) == 3 and NODE3_EVENT not in [e.source_line for e in events]


# ---- the grammar: what Slurm writes is read, the rest refused with why ---------------------------------------------

EXPANDED = [
    ("gpu[001-004,010],cpu7", ["gpu001", "gpu002", "gpu003", "gpu004", "gpu010", "cpu7"]),
    ("n[1-2]m[3-4]", ["n1m3", "n1m4", "n2m3", "n2m4"]),
    ("rack1-[08-10]", ["rack1-08", "rack1-09", "rack1-10"]),
    ("a[8-10]", ["a8", "a9", "a10"]),
    ("x[1-2]y.ib", ["x1y.ib", "x2y.ib"]),
    ("node1", ["node1"]),
    ("[1-2]gpu", ["1gpu", "2gpu"]),
]
# Slurm's reading where ClusterShell's differs: the digits before a bracket are the name's, not the range's
SLURM_ONLY = [("a5[8-10]", ["a58", "a59", "a510"]), ("n[01-03,008]", ["n01", "n02", "n03", "n008"])]


@pytest.mark.parametrize(("node_list", "nodes"), EXPANDED)
@hostile(Outcome.FIGURE)
def test_slurm_host_lists_expand_as_slurm_and_clustershell_without_groups_do(node_list, nodes):
    assert host_list_nodes(node_list) == nodes
    assert set(nodes) == set(NodeSet(node_list, resolver=RESOLVER_NOGROUP))


@pytest.mark.parametrize(("node_list", "nodes"), SLURM_ONLY)
@hostile(Outcome.FIGURE)
def test_slurm_host_lists_expand_as_slurm_does_where_clustershell_differs(node_list, nodes):
    assert host_list_nodes(node_list) == nodes


REFUSED = [
    ("gpu[1-3", "never closed"),
    ("gpu1-3]", "without its '['"),
    ("gpu[[1-3]]", "inside a bracket group"),
    ("gpu[1-2][3-4]", "a bracket group right after another"),
    ("gpu[]", "an empty range"),
    ("gpu[1,]", "an empty range"),
    ("gpu[3-1]", "runs backwards"),
    ("gpu[1-3/2]", "holds '/'"),
    ("gpu[a-c]", "is not a number or a range"),
    ("gpu1,,gpu2", "an empty name"),
    ("gpu1,", "an empty name"),
    ("-gpu1", "a name starting with '-'"),
    ("gpu 1", "holds ' '"),
    ("gpu\t1", "holds U+0009"),
    ("gpu1;reboot", "holds ';'"),
    ("gpu$(id)", "holds '$'"),
    ("gpu1|gpu2", "holds '|'"),
    ("gpu\x1b[2J", "holds U+001B"),
    ("gp\u00fc1", "holds 'ü'"),
    ("gpu[1-2],gpu2", "names node gpu2 twice"),
    ("a" * 300, "a name of 300 characters"),
    ("n[1-1000]m[1-1000]", "names 1,000,000 nodes, more than any cluster has"),
    ("n[1-99999999999999999999999]", "names more than 1,000,000,000,000,000,000 nodes"),
    ("n" + "[1-1000]x" * 30, "names more than 1,000,000,000,000,000,000 nodes"),
    ("", "an empty host list"),
]


@pytest.mark.parametrize(("node_list", "reason"), REFUSED, ids=[repr(n)[:30] for n, _ in REFUSED])
@hostile(Outcome.QUARANTINE)
def test_what_slurm_does_not_write_is_refused_with_why(node_list, reason):
    with pytest.raises(HostListError) as refused:
        host_list_nodes(node_list)
    assert reason in str(refused.value)


@hostile(Outcome.FIGURE)
def test_the_node_bound_is_the_config_key():
    """`[ingest] max_host_list_nodes` (InputLimits) moves the bound; sizing is exact without expanding."""
    assert parse_host_list("n[1-1000]m[1-1000]")[1] == 1_000_000
    assert len(host_list_nodes("n[1-1000]m[1-1000]", InputLimits(max_host_list_nodes=1_000_000))) == 1_000_000
    with pytest.raises(HostListError, match="max_host_list_nodes = 999"):
        host_list_nodes("gpu[1-1000]", InputLimits(max_host_list_nodes=999))


# ---- 2. bounded work per line ---------------------------------------------------------------------------------------


def elapsed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def refused(node_list: str) -> None:
    with pytest.raises(HostListError):
        host_list_nodes(node_list)


@pytest.mark.parametrize(
    "make",
    [lambda n: "[" * n, lambda n: "a[" * n, lambda n: "a[1" * n, lambda n: "a," * n + "@", lambda n: "a[1-2]b" * n],
    ids=["brackets", "name-bracket", "open-ranges", "many-parts", "multiplying-groups"],
)
@hostile(Outcome.QUARANTINE)
def test_a_host_list_is_checked_in_linear_time(make):
    """Sizing was quadratic in `[` (400,000 `[` never answered): ten times the input costs about ten times the time."""
    small, large = elapsed(lambda: refused(make(40_000))), elapsed(lambda: refused(make(400_000)))
    assert large < 2.0
    assert large < 40 * max(small, 0.002)  # linear (with room for noise), never 100x


@hostile(Outcome.QUARANTINE)
def test_a_field_longer_than_any_is_refused_before_any_pattern():
    started = time.perf_counter()
    refused("a" * (MAX_FIELD_CHARS + 1))
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    "node_name", ["[" * 400_000, "n[1-1000]m[1-1000]", "a" * (MAX_FIELD_CHARS + 1)], ids=["brackets", "million", "long"]
)
@hostile(Outcome.QUARANTINE)
def test_a_node_event_that_would_hang_or_explode_is_quarantined_in_milliseconds(slurm_fixtures, tmp_path, node_name):
    """Three 19-byte `n[1-1000]m[1-1000]` lines took 80 s and 3.3 GB (a million events each)."""
    path = events_file(slurm_fixtures, tmp_path / "events.psv", node_name)
    quarantine = Quarantine(strict=False)
    started = time.perf_counter()
    events = list(read_sacctmgr_events(path, clock(), quarantine=quarantine))
    assert time.perf_counter() - started < 2
    assert_quarantined(quarantine.errors, path, NODE3_EVENT, "NodeName")
    assert len(events) == 3 and len(quarantine.errors[0].value) <= 203


@pytest.mark.parametrize("node_list", ["[" * 400_000, "n[1-1000]m[1-1000]"], ids=["brackets", "million"])
@hostile(Outcome.QUARANTINE)
def test_a_job_record_whose_host_list_would_hang_or_explode_is_quarantined(real, baseline, tmp_path, node_list):
    columns, rows = real
    dump = psv(tmp_path / "sacct.psv", columns, changed(rows, T_OK, NodeList=node_list, NNodes="1000000"))
    quarantine = Quarantine(strict=False)
    started = time.perf_counter()
    attempts = sacct_attempts(dump, clock(), quarantine=quarantine)
    assert time.perf_counter() - started < 5
    assert_quarantined(quarantine.errors, dump, T_OK + 2, "NodeList")
    assert attempts == without_line(baseline, T_OK + 2)


@hostile(Outcome.FIGURE)
def test_a_scontrol_reason_is_read_in_linear_time(slurm_fixtures, tmp_path):
    """The Reason pattern was quadratic in runs of spaces (400,000 spaces: killed after 30 s)."""
    lines = (slurm_fixtures / SNAPSHOT).read_text().splitlines()

    def read(spaces: int) -> list:
        lines_now = [line.replace("Reason=xid 79", "Reason=xid" + " " * spaces + "79") for line in lines]
        snapshot = tmp_path / f"scontrol{spaces}.txt"
        snapshot.write_text("\n".join(lines_now) + "\n")
        return list(read_scontrol_nodes(snapshot, clock()))

    small = elapsed(lambda: read(40_000))
    started = time.perf_counter()
    events = read(400_000)
    large = time.perf_counter() - started
    assert large < 3 and large < 40 * max(small, 0.005)
    (node3,) = [e for e in events if e.node == "node3"]
    assert node3.reason == "xid" + " " * 400_000 + "79 gpu fell off bus" and node3.user == "root"
    assert node3.started_at == datetime(2026, 11, 22, 3, 22, 4, tzinfo=UTC_TZ)


@pytest.mark.parametrize(
    ("old", "new", "reason", "user", "when"),
    [
        ("[root@2026-11-22T03:22:04]", "[root@2026-11-22T03:22:04]   ", "xid 79 gpu fell off bus", "root", "03:22:04"),
        ("bus [root@", "bus\t[root@", "xid 79 gpu fell off bus", "root", "03:22:04"),
        ("bus [root@", "bus [x] [root@", "xid 79 gpu fell off bus [x]", "root", "03:22:04"),
    ],
    ids=["trailing-spaces", "tab", "brackets-in-reason"],
)
@hostile(Outcome.FIGURE)
def test_a_scontrol_reason_reads_as_before(slurm_fixtures, tmp_path, old, new, reason, user, when):
    snapshot = tmp_path / "scontrol.txt"
    snapshot.write_text((slurm_fixtures / SNAPSHOT).read_text().replace(old, new))
    (node3,) = [e for e in read_scontrol_nodes(snapshot, clock()) if e.node == "node3"]
    assert (node3.reason, node3.user, node3.started_at.strftime("%H:%M:%S")) == (reason, user, when)


@hostile(Outcome.QUARANTINE)
def test_a_scontrol_reason_without_who_and_when_is_quarantined(slurm_fixtures, tmp_path):
    snapshot = tmp_path / "scontrol.txt"
    snapshot.write_text((slurm_fixtures / SNAPSHOT).read_text().replace(" [root@2026-11-22T03:22:04]", " [root]"))
    quarantine = Quarantine(strict=False)
    list(read_scontrol_nodes(snapshot, clock(), quarantine=quarantine))
    assert_quarantined(quarantine.errors, snapshot, 3, "Reason", "no [user@time] after the reason")


# ---- the grammar against two other readings of it, on random lists -------------------------------------------------


def random_list(rng: random.Random) -> str:
    """A host list as Slurm writes one: 1-4 parts, each a name with 0-2 bracket groups (ranges, some zero-padded)."""
    parts = []
    for _ in range(rng.randint(1, 4)):
        # a letter before each bracket: ClusterShell reads `a5[8-10]` as a58..a510 (a range of its own), Slurm as a58, a59, a510
        part = (
            rng.choice("abgnr") + "".join(rng.choices("abcxyz0123456789.-_", k=rng.randint(0, 5))) + rng.choice("abz")
        )
        groups = rng.choice([0, 1, 1, 2])
        for group in range(groups):
            ranges, low, width = [], rng.randint(0, 20), rng.choice([1, 1, 2, 3])  # one width a group (ClusterShell's)
            for _ in range(rng.randint(1, 3)):
                high = low + rng.randint(0, 4)
                ranges.append(f"{low:0{width}d}" + (f"-{high:0{width}d}" if high > low else ""))
                low = high + rng.randint(1, 5)
            part += f"[{','.join(ranges)}]" + rng.choice(["x", "-ib", "y.z"] if group < groups - 1 else ["", "", "x"])
        parts.append(part)
    return ",".join(parts)


@hostile(Outcome.FIGURE)
def test_random_slurm_lists_expand_as_clustershell_without_groups_and_as_the_sql_does():
    """The scanner's nodes are ClusterShell's (group resolution off) for 2,000 random lists, and the SQL's
    fast path (its subset: one bracket group, no suffix) gives the scanner's nodes for each list it takes."""
    rng = random.Random(50)
    lists = sorted({random_list(rng) for _ in range(2_000)})
    expanded = {}
    for node_list in lists:
        try:
            expanded[node_list] = host_list_nodes(node_list)
        except HostListError as refused:  # a name repeated by two parts: ClusterShell's set has fewer nodes
            assert "twice" in str(refused)
            assert len(NodeSet(node_list, resolver=RESOLVER_NOGROUP)) < parse_host_list(node_list)[1]
            continue
        assert set(expanded[node_list]) == set(NodeSet(node_list, resolver=RESOLVER_NOGROUP)), node_list
        assert len(expanded[node_list]) == parse_host_list(node_list)[1]
    with duckdb.connect() as con:
        con.execute("CREATE TABLE lists AS SELECT unnest(?::VARCHAR[]) AS node_list", [lists])
        refused = expand_host_lists(con, "lists")
        members: dict[str, list[str]] = {}
        for node_list, node in con.execute(
            "SELECT node_list, node FROM host_list_members JOIN host_lists USING (list_id) ORDER BY list_id, host_list_members.rowid"
        ).fetchall():
            members.setdefault(node_list, []).append(node)
        simple = con.execute("SELECT count(*) FROM host_lists WHERE simple").fetchone()[0]
    assert simple > 200  # the SQL's subset was exercised
    assert set(refused) == set(lists) - set(expanded)
    assert {k: sorted(v) for k, v in members.items()} == {k: sorted(v) for k, v in expanded.items()}


HOSTILE_ALPHABET = "ab01-_.,[]@*!&^ \t;$`'\"|\\/%\r\n\x1b\x00é\u202e"


@hostile(Outcome.QUARANTINE)
def test_random_bytes_only_ever_give_a_host_list_error():
    """20,000 random strings over Slurm's characters and hostile ones: a list of nodes or HostListError, never another exception."""
    rng = random.Random(51)
    for _ in range(20_000):
        text = "".join(rng.choices(HOSTILE_ALPHABET, k=rng.randint(0, 24)))
        try:
            nodes = host_list_nodes(text)
        except HostListError:
            continue
        assert nodes and all(NODE.fullmatch(node) for node in nodes), text
