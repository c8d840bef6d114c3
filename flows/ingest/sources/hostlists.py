"""Slurm host lists (`gpu[001-004,010],cpu7`) checked, sized and expanded to node names.

What a host list may hold is what Slurm writes, read by one scanner here (`parse_host_list`) in one
linear pass before anything else looks at the text: comma-separated parts, a part being name
characters (letters, digits, '.', '-', '_') with zero or more bracket groups of numbers `N` and
ranges `N-M` (`n[1-2]m[3-4]`, `gpu[008-010]`: leading zeros kept, the low bound's width). Nothing
else: no ClusterShell `@group`, `*`, `!`, `&`, `^` (group resolution would run a shell command on a
name from the logs), no whitespace, shell or control characters. A list is sized from its ranges
(bracket groups multiply) before one node is generated: more than `[ingest] max_host_list_nodes`
(limits.py) is refused in milliseconds, never expanded. A list that breaks the grammar, names a node
twice or a name that is no host name (flows/ingest/sources/node_names.py) is refused with why.

A month holds millions of job records but only tens of thousands of distinct host lists. The
lists whose parts are all `prefix[ranges]` or plain names (what Slurm prints for one-dimensional
node names, nearly every list) are sized and expanded in SQL by RE2 patterns that accept only a
subset of the grammar, and expand it exactly as the scanner does (tests/test_sources.py compares
them); every other list (two bracket groups, a suffix, anything malformed) goes to the scanner.
Expanded lists are also refused when they name more nodes that no other list of the month names
than the rest of the month's fleet holds (a 100,000-node list in a 64-node cluster's month): the
fleet is the nodes the month's records name, and a job cannot be larger than its cluster.
"""

from __future__ import annotations

import itertools
import re

import duckdb
import pyarrow as pa

from flows.ingest.sources.limits import DEFAULT_LIMITS, InputLimits, too_long
from flows.ingest.sources.node_names import HOST_NAME_CHARS, MAX_NODE_NAME_CHARS, NODE_NAME
from flows.ingest.sources.sql import create_temp_table, run_sql

# A list may name up to this many nodes that no other list of the month names, whatever the rest
# of the fleet (a small dump may hold one large job: the largest training jobs, of tens of thousands
# of GPUs, run on a few thousand nodes); beyond it, no more than the rest of the fleet.
UNCORROBORATED_NODES = 16_384
# A size above this is shown as "more than" it (bracket groups multiply: sizes are capped, never huge integers)
SHOWN_SIZE = 10**18

HOST_LIST_RULE = (
    "a host list is comma-separated names of letters, digits, '.', '-' and '_' with [N,N-M] ranges, "
    "as Slurm writes it (no groups, patterns, spaces or shell characters)"
)
_OUTSIDE = re.compile(rf"[^{HOST_NAME_CHARS}\[\],]")  # the first character no host list holds
_TOKEN = re.compile(rf"[{HOST_NAME_CHARS}]+|[\[\],]")  # a run of name characters, or one of [ ] ,
_RANGE = re.compile(r"(\d+)(?:-(\d+))?")

# RE2 patterns of the SQL (sql/hostlists__*.sql), the subset it expands itself: a part is a name
# followed by at most one bracket group; a simple part, `prefix[ranges]` (a plain part is a name alone).
_PART = rf"[{HOST_NAME_CHARS}]+(?:\[[0-9,-]*\])?"
_SIMPLE_PART = rf"^([{HOST_NAME_CHARS}]{{1,200}})\[((?:\d+(?:-\d+)?)(?:,\d+(?:-\d+)?)*)\]$"
_PLAIN_PART = rf"^[{HOST_NAME_CHARS}]+$"

Segment = str | tuple[tuple[str, str], ...]  # literal name characters, or a bracket group's (low, high) ranges


class HostListError(ValueError):
    """A host list that is refused: why, in words."""


def too_many_nodes(size: int, limits: InputLimits = DEFAULT_LIMITS) -> str:
    shown = f"{size:,}" if size <= SHOWN_SIZE else f"more than {SHOWN_SIZE:,}"
    return f"names {shown} nodes, more than any cluster has ([ingest] max_host_list_nodes = {limits.max_host_list_nodes:,})"


def not_a_host_name(node: str) -> str:
    return f"node {node} is not a host name"


def _shown(char: str) -> str:
    return repr(char) if char.isprintable() else f"U+{ord(char):04X}"


def parse_host_list(text: str, limits: InputLimits = DEFAULT_LIMITS) -> tuple[list[list[Segment]], int]:
    """The parts of a host list and how many nodes it names, read in one linear pass (see the module
    docstring); HostListError says why it is refused. Nothing is expanded."""
    if (why := too_long(text, limits)) is not None:
        raise HostListError(why)
    if not text:
        raise HostListError("an empty host list")
    if (bad := _OUTSIDE.search(text)) is not None:
        raise HostListError(f"holds {_shown(bad.group())} at character {bad.start() + 1}: {HOST_LIST_RULE}")
    parts: list[list[Segment]] = []
    segments: list[Segment] = []
    ranges: list[tuple[str, str]] | None = None  # inside a bracket group: its ranges so far
    expect_range = False
    for token in _TOKEN.finditer(text):
        value, at = token.group(), token.start() + 1
        if ranges is not None:
            if value == "[":
                raise HostListError(f"a '[' inside a bracket group at character {at}")
            if value in ",]" and expect_range:
                raise HostListError(f"an empty range before {value!r} at character {at}")
            if value == "]":
                segments.append(tuple(ranges))
                ranges = None
            elif value == ",":
                expect_range = True
            else:
                ranges.append(_range(value, at))
                expect_range = False
        elif value == "[":
            if segments and not isinstance(segments[-1], str):
                raise HostListError(f"a bracket group right after another at character {at}")
            ranges, expect_range = [], True
        elif value == "]":
            raise HostListError(f"a ']' without its '[' at character {at}")
        elif value == ",":
            parts.append(_part(segments, at))
            segments = []
        else:
            segments.append(value)
    if ranges is not None:
        raise HostListError("a '[' that is never closed")
    parts.append(_part(segments, len(text) + 1))
    return parts, _size(parts)


def _range(value: str, at: int) -> tuple[str, str]:
    found = _RANGE.fullmatch(value)
    if found is None:
        raise HostListError(f"{value[:40]!r} at character {at} is not a number or a range N-M")
    low, high = found.group(1), found.group(2) or found.group(1)
    if max(len(low), len(high)) > MAX_NODE_NAME_CHARS:
        raise HostListError(
            f"a number of {max(len(low), len(high)):,} digits at character {at}: no host name is that long"
        )
    if int(high) < int(low):
        raise HostListError(f"the range {value} at character {at} runs backwards")
    return low, high


def _part(segments: list[Segment], at: int) -> list[Segment]:
    """One part, checked: not empty, starting as a host name does, no longer than one."""
    if not segments:
        raise HostListError(f"an empty name before character {at}")
    first = segments[0]
    if isinstance(first, str) and not first[0].isalnum():
        raise HostListError(f"a name starting with {first[0]!r} before character {at}")
    longest = sum(len(s) if isinstance(s, str) else max(max(len(a), len(b)) for a, b in s) for s in segments)
    if longest > MAX_NODE_NAME_CHARS:
        raise HostListError(f"a name of {longest:,} characters before character {at}: no host name is that long")
    return segments


def _size(parts: list[list[Segment]]) -> int:
    """How many nodes the parts name (each part's bracket groups multiply), capped above SHOWN_SIZE."""
    total = 0
    for segments in parts:
        size = 1
        for group in segments:
            if not isinstance(group, str):
                size = min(size * sum(int(high) - int(low) + 1 for low, high in group), SHOWN_SIZE + 1)
        total = min(total + size, SHOWN_SIZE + 1)
    return total


def _numbers(group: tuple[tuple[str, str], ...]) -> list[str]:
    """A bracket group's numbers as written: zero-padded to the width of each range's low bound."""
    return [str(n).zfill(len(low)) for low, high in group for n in range(int(low), int(high) + 1)]


def host_list_nodes(node_list: str, limits: InputLimits = DEFAULT_LIMITS) -> list[str]:
    """The nodes of one host list in Slurm's order, checked and sized before it is expanded;
    HostListError (a ValueError) says why it is refused (see the module docstring)."""
    parts, size = parse_host_list(node_list, limits)
    if size > limits.max_host_list_nodes:
        raise HostListError(too_many_nodes(size, limits))
    nodes = [
        "".join(names)
        for segments in parts
        for names in itertools.product(*([s] if isinstance(s, str) else _numbers(s) for s in segments))
    ]
    if len(set(nodes)) != len(nodes):
        seen: set[str] = set()
        twice = next(node for node in nodes if node in seen or seen.add(node))  # type: ignore[func-returns-value]
        raise HostListError(f"names node {twice} twice")
    return nodes


def expand_host_lists(
    con: duckdb.DuckDBPyConnection, source: str, limits: InputLimits = DEFAULT_LIMITS
) -> dict[str, str]:
    """Size and expand the distinct `node_list` values of table `source` into two temp tables:
    `host_lists(list_id, node_list, size)` and `host_list_members(list_id, node)`.

    Returns the lists refused (not Slurm's grammar, too long, a name that is not a host name, a node
    twice, more than the fleet), with the reason; they have no members. Members carry the integer
    id, not the list text: copying long lists to every member costs more than the expansion itself.
    """
    parts = {"part": _PART, "simple_part": _SIMPLE_PART}
    sizing = parts | {"plain_part": _PLAIN_PART, "max_chars": limits.max_field_chars}
    run_sql(con, "hostlists__size", sizing, source=source)
    limit = {"max_nodes": limits.max_host_list_nodes}
    refused = {
        node_list: too_many_nodes(size, limits)
        for node_list, size in run_sql(con, "hostlists__too_many_nodes", limit).fetchall()
    }
    run_sql(con, "hostlists__expand_simple", parts | limit)
    expanded: dict[str, list] = {"list_id": [], "node": []}
    for list_id, node_list in run_sql(con, "hostlists__complex_lists").fetchall():
        try:
            nodes = host_list_nodes(node_list, limits)
        except HostListError as exc:
            refused[node_list] = str(exc)
            continue
        expanded["list_id"].extend([list_id] * len(nodes))
        expanded["node"].extend(nodes)
    complex_members = pa.table(expanded, schema=pa.schema([("list_id", pa.int64()), ("node", pa.string())]))
    create_temp_table(con, "complex_host_list_members", complex_members)
    run_sql(con, "hostlists__add_complex_members")
    run_sql(con, "hostlists__size_complex_lists")
    refused.update(_refused_members(con))
    return refused


def _refused_members(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The expanded lists that name a node that is not a host name, a node twice, or more nodes no
    other list names than the rest of the fleet holds; their members are removed. (An attempt's
    nodes are then distinct: the marts count an attempt's node-days without a distinct count.)"""
    names = {"not_a_host_name": not_a_host_name("{}"), "node_name": NODE_NAME}
    refused = dict(run_sql(con, "hostlists__not_host_names", names).fetchall())
    refused.update(run_sql(con, "hostlists__named_twice").fetchall())
    fleet = {"uncorroborated_nodes": UNCORROBORATED_NODES}
    refused.update(run_sql(con, "hostlists__beyond_the_fleet", fleet).fetchall())
    if refused:
        create_temp_table(con, "refused_host_lists", pa.table({"node_list": pa.array(list(refused), pa.string())}))
        run_sql(con, "hostlists__drop_refused_members")
    return refused
