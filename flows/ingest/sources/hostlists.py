"""Slurm host lists (`gpu[001-004,010],cpu7`) sized, expanded to node names and checked, inside DuckDB.

A month holds millions of job records but only tens of thousands of distinct host lists. Lists
whose parts are all `prefix[ranges]` or plain names (what Slurm prints for one-dimensional node
names, nearly every list) are expanded in SQL. Any other list (two bracket groups, a suffix after
the bracket, a reversed range) goes to ClusterShell, the maintained hostlist library, which also
says why a list is malformed.

Every list is sized from its ranges before it is expanded, so a corrupt `gpu[1-20000000]` is
refused at once instead of being generated. Expanded lists are refused when a node name is not a
host name, or when a list names more nodes that no other list of the month names than the rest of
the month's fleet holds (a 100,000-node list in a 64-node cluster's month): the fleet is the nodes
the month's records name, and a job cannot be larger than its cluster.
"""

from __future__ import annotations

import re

import duckdb
import pyarrow as pa
from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from flows.ingest.sources.node_names import NODE_NAME
from flows.ingest.sources.sql import create_temp_table, run_sql

# More nodes than any cluster has (the largest, Fugaku, has 158,976): a longer list is corrupt.
MAX_HOST_LIST_NODES = 1_000_000
# A list may name up to this many nodes that no other list of the month names, whatever the rest
# of the fleet (a small dump may hold one large job: the largest training jobs, of tens of thousands
# of GPUs, run on a few thousand nodes); beyond it, no more than the rest of the fleet.
UNCORROBORATED_NODES = 16_384
_HOST_NAME = re.compile(NODE_NAME)  # the one node-name rule (flows/ingest/sources/node_names.py)

# RE2 patterns of the SQL (sql/hostlists__*.sql): one top-level part of a list, a name optionally
# followed by one bracket group; a simple part, `prefix[ranges]` (a plain part is a name alone).
_PART = r"[^,\[\]]+(?:\[[^\[\]]*\])?"
_SIMPLE_PART = r"^([^,\[\]]*)\[((?:\d+(?:-\d+)?)(?:,\d+(?:-\d+)?)*)\]$"
# ClusterShell's syntax, for sizing: a top-level part (brackets may hold commas), a bracket group, a range
_ANY_PART = re.compile(r"(?:[^,\[]|\[[^\]]*\])+")
_GROUP = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(r"(\d+)(?:-(\d+))?(?:/(\d+))?")


def host_list_size(node_list: str) -> int | None:
    """How many nodes a host list names, counted from its ranges without expanding them (a part's
    bracket groups multiply); None when a range cannot be read (ClusterShell then says why)."""
    total = 0
    for part in _ANY_PART.findall(node_list):
        size = 1
        for group in _GROUP.findall(part):
            count = 0
            for item in group.split(","):
                found = _RANGE.fullmatch(item.strip())
                if not found or int(found[3] or 1) == 0:
                    return None
                low, high = int(found[1]), int(found[2] or found[1])
                count += max(high - low, 0) // int(found[3] or 1) + 1
            size *= count
        total += size
    return total


def too_many_nodes(size: int) -> str:
    return f"names {size:,} nodes, more than any cluster has ({MAX_HOST_LIST_NODES:,})"


def not_a_host_name(node: str) -> str:
    return f"node {node} is not a host name"


def host_list_nodes(node_list: str) -> list[str]:
    """The nodes of one host list (a node event's), sized before it is expanded; ValueError says
    why it is refused (too long, unreadable, a name that is not a host name)."""
    size = host_list_size(node_list)
    if size is not None and size > MAX_HOST_LIST_NODES:
        raise ValueError(too_many_nodes(size))
    try:
        nodes = list(NodeSet(node_list))
    except NodeSetParseError as exc:
        raise ValueError(str(exc) or "not a Slurm host list") from None
    bad = next((node for node in nodes if not _HOST_NAME.fullmatch(node)), None)
    if bad is not None:
        raise ValueError(not_a_host_name(bad))
    return nodes


def expand_host_lists(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, str]:
    """Size and expand the distinct `node_list` values of table `source` into two temp tables:
    `host_lists(list_id, node_list, size)` and `host_list_members(list_id, node)`.

    Returns the lists refused (unreadable, too long, a name that is not a host name, more than
    the fleet), with the reason; they have no members. Members carry the integer id, not the list
    text: copying long lists to every member costs more than the expansion itself.
    """
    parts = {"part": _PART, "simple_part": _SIMPLE_PART}
    run_sql(con, "hostlists__size", parts, source=source)
    limit = {"max_nodes": MAX_HOST_LIST_NODES}
    refused = {
        node_list: too_many_nodes(size)
        for node_list, size in run_sql(con, "hostlists__too_many_nodes", limit).fetchall()
    }
    run_sql(con, "hostlists__expand_simple", parts | limit)
    expanded: dict[str, list] = {"list_id": [], "node": []}
    for list_id, node_list in run_sql(con, "hostlists__complex_lists").fetchall():
        size = host_list_size(node_list)
        if size is not None and size > MAX_HOST_LIST_NODES:
            refused[node_list] = too_many_nodes(size)
            continue
        try:
            nodes = list(NodeSet(node_list))
        except NodeSetParseError as exc:
            refused[node_list] = str(exc) or "not a Slurm host list"
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
