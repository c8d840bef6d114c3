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
from flows.ingest.sources.sql import create_temp_table

NO_NODES = ("", "None assigned", "(null)")
# More nodes than any cluster has (the largest, Fugaku, has 158,976): a longer list is corrupt.
MAX_HOST_LIST_NODES = 1_000_000
# A list may name up to this many nodes that no other list of the month names, whatever the rest
# of the fleet (a small dump may hold one large job: the largest training jobs, of tens of thousands
# of GPUs, run on a few thousand nodes); beyond it, no more than the rest of the fleet.
UNCORROBORATED_NODES = 16_384
_HOST_NAME = re.compile(NODE_NAME)  # the one node-name rule (flows/ingest/sources/node_names.py)

# One top-level part of a list: a name, optionally followed by one bracket group.
_PART = r"[^,\[\]]+(?:\[[^\[\]]*\])?"
_SIMPLE_PART = r"^([^,\[\]]*)\[((?:\d+(?:-\d+)?)(?:,\d+(?:-\d+)?)*)\]$"
_PLAIN_PART = r"^[^,\[\]]+$"
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
    _size_lists(con, source)
    refused = {
        node_list: too_many_nodes(size)
        for node_list, size in con.execute(
            f"SELECT node_list, size FROM host_lists WHERE simple AND size > {MAX_HOST_LIST_NODES}"
        ).fetchall()
    }
    _expand_simple_lists(con)
    expanded: dict[str, list] = {"list_id": [], "node": []}
    for list_id, node_list in con.execute("SELECT list_id, node_list FROM host_lists WHERE NOT simple").fetchall():
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
    con.execute("INSERT INTO host_list_members SELECT * FROM complex_host_list_members")
    con.execute(
        """UPDATE host_lists SET size = c.size
           FROM (SELECT list_id, count(*) AS size FROM complex_host_list_members GROUP BY list_id) c
           WHERE host_lists.list_id = c.list_id"""
    )
    refused.update(_refused_members(con))
    return refused


def _size_lists(con: duckdb.DuckDBPyConnection, source: str) -> None:
    """Temp table `host_lists(list_id, node_list, simple, size)` of the distinct lists of `source`;
    `size` counted from the ranges of the simple ones (NULL for the others: ClusterShell's)."""
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE host_lists AS
        SELECT list_id, node_list, simple, CASE WHEN simple THEN size END AS size
        FROM (
            SELECT row_number() OVER () AS list_id, node_list,
                   -- simple when the parts cover the whole list and each is plain or one ascending bracket
                   -- (a number too long for BIGINT is not: ClusterShell's sizing takes it)
                   coalesce(array_to_string(parts, ',') = node_list
                     AND list_bool_and(list_transform(parts, lambda p:
                           regexp_matches(p, '{_PLAIN_PART}') OR (regexp_matches(p, '{_SIMPLE_PART}') AND
                           list_bool_and(list_transform(string_split(regexp_extract(p, '{_SIMPLE_PART}', 2), ','),
                             lambda r: TRY_CAST(split_part(r, '-', 1) AS BIGINT)
                                       <= TRY_CAST(coalesce(nullif(split_part(r, '-', 2), ''), split_part(r, '-', 1))
                                                   AS BIGINT)))))), false)
                     AS simple,
                   list_sum(list_transform(parts, lambda p: CASE WHEN NOT contains(p, '[') THEN 1 ELSE
                     list_sum(list_transform(string_split(regexp_extract(p, '{_SIMPLE_PART}', 2), ','),
                       lambda r: TRY_CAST(coalesce(nullif(split_part(r, '-', 2), ''), split_part(r, '-', 1)) AS BIGINT)
                                 - TRY_CAST(split_part(r, '-', 1) AS BIGINT) + 1)) END)) AS size
            FROM (SELECT node_list, regexp_extract_all(node_list, '{_PART}') AS parts
                  FROM (SELECT DISTINCT node_list FROM {source}
                        WHERE node_list IS NOT NULL AND node_list NOT IN {NO_NODES}))
        )
        """
    )


def _expand_simple_lists(con: duckdb.DuckDBPyConnection) -> None:
    """Temp table `host_list_members(list_id, node)` of the simple lists of at most MAX_HOST_LIST_NODES."""
    # Slurm prints each node of a list once, so members are not deduplicated.
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE host_list_members AS
        WITH parts AS (
            SELECT list_id, unnest(regexp_extract_all(node_list, '{_PART}')) AS part
            FROM host_lists WHERE simple AND size <= {MAX_HOST_LIST_NODES}
        ), ranges AS (
            SELECT list_id, r.prefix, unnest(string_split(r.ranges, ',')) AS item
            FROM (SELECT list_id, regexp_extract(part, '{_SIMPLE_PART}', ['prefix', 'ranges']) AS r
                  FROM parts WHERE contains(part, '['))
        ), numbers AS (
            SELECT list_id, prefix, split_part(item, '-', 1) AS low,
                   CAST(unnest(generate_series(CAST(split_part(item, '-', 1) AS BIGINT),
                        CAST(coalesce(nullif(split_part(item, '-', 2), ''), split_part(item, '-', 1)) AS BIGINT)))
                        AS VARCHAR) AS number
            FROM ranges
        )
        SELECT list_id, part AS node FROM parts WHERE NOT contains(part, '[')
        UNION ALL
        -- zero padding follows the low bound: gpu[008-010] gives gpu008 .. gpu010
        SELECT list_id, prefix || lpad(number, CAST(greatest(length(number), length(low)) AS INTEGER), '0')
        FROM numbers
        """
    )


def _refused_members(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The expanded lists that name a node that is not a host name, a node twice, or more nodes no
    other list names than the rest of the fleet holds; their members are removed. (An attempt's
    nodes are then distinct: the marts count an attempt's node-days without a distinct count.)"""
    refused = dict(
        con.execute(
            f"""SELECT l.node_list, format('{not_a_host_name("{}")}', any_value(m.node))
                FROM host_list_members m JOIN host_lists l USING (list_id)
                WHERE NOT regexp_full_match(m.node, '{NODE_NAME}') GROUP BY l.node_list"""
        ).fetchall()
    )
    # ClusterShell's NodeSet (the lists that are not simple) is a set already
    refused.update(
        con.execute(
            """SELECT l.node_list, format('names node {} twice', any_value(m.node))
               FROM (SELECT list_id, node FROM host_list_members GROUP BY list_id, node HAVING count(*) > 1) m
               JOIN host_lists l USING (list_id) GROUP BY l.node_list"""
        ).fetchall()
    )
    refused.update(
        con.execute(
            f"""WITH named AS (SELECT node, count(*) AS lists FROM host_list_members GROUP BY node),
                     fleet AS (SELECT count(*) AS nodes FROM named),
                     alone AS (SELECT m.list_id, count(*) AS nodes FROM host_list_members m JOIN named USING (node)
                               WHERE named.lists = 1 GROUP BY m.list_id)
                SELECT l.node_list, format('names {{:,}} nodes that no other record names, more than the {{:,}} '
                                           || 'other nodes of the month''s fleet', alone.nodes, fleet.nodes - alone.nodes)
                FROM alone JOIN host_lists l USING (list_id), fleet
                WHERE alone.nodes > {UNCORROBORATED_NODES} AND alone.nodes > fleet.nodes - alone.nodes"""
        ).fetchall()
    )
    if refused:
        names = pa.table({"node_list": pa.array(list(refused), pa.string())})
        create_temp_table(con, "refused_host_lists", names)
        con.execute(
            """DELETE FROM host_list_members WHERE list_id IN
               (SELECT list_id FROM host_lists JOIN refused_host_lists USING (node_list))"""
        )
    return refused
