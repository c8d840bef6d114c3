"""Slurm host lists (`gpu[001-004,010],cpu7`) expanded to node names inside DuckDB.

A month holds millions of job records but only tens of thousands of distinct host lists. Lists
whose parts are all `prefix[ranges]` or plain names (what Slurm prints for one-dimensional node
names, nearly every list) are expanded in SQL. Any other list (two bracket groups, a suffix after
the bracket, a reversed range) goes to ClusterShell, the maintained hostlist library, which also
says why a list is malformed.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
from ClusterShell.NodeSet import NodeSet, NodeSetParseError

from flows.sources.sql import create_temp_table

NO_NODES = ("", "None assigned", "(null)")

# One top-level part of a list: a name, optionally followed by one bracket group.
_PART = r"[^,\[\]]+(?:\[[^\[\]]*\])?"
_SIMPLE_PART = r"^([^,\[\]]*)\[((?:\d+(?:-\d+)?)(?:,\d+(?:-\d+)?)*)\]$"
_PLAIN_PART = r"^[^,\[\]]+$"


def expand_host_lists(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, str]:
    """Expand the distinct `node_list` values of table `source` into two temp tables:
    `host_lists(list_id, node_list)` and `host_list_members(list_id, node)`.

    Returns the lists that could not be read, with the reason; they have no members. Members
    carry the integer id, not the list text: copying long lists to every member costs more than
    the expansion itself.
    """
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE host_lists AS
        SELECT row_number() OVER () AS list_id, node_list, parts,
               -- simple when the parts cover the whole list and each is plain or one ascending bracket
               array_to_string(parts, ',') = node_list
                 AND list_bool_and(list_transform(parts, lambda p:
                       regexp_matches(p, '{_PLAIN_PART}') OR (regexp_matches(p, '{_SIMPLE_PART}') AND
                       list_bool_and(list_transform(string_split(regexp_extract(p, '{_SIMPLE_PART}', 2), ','),
                         lambda r: TRY_CAST(split_part(r, '-', 1) AS BIGINT)
                                   <= TRY_CAST(coalesce(nullif(split_part(r, '-', 2), ''), split_part(r, '-', 1))
                                               AS BIGINT))))))
                 AS simple
        FROM (SELECT node_list, regexp_extract_all(node_list, '{_PART}') AS parts
              FROM (SELECT DISTINCT node_list FROM {source}
                    WHERE node_list IS NOT NULL AND node_list NOT IN {NO_NODES}))
        """
    )
    # Slurm prints each node of a list once, so members are not deduplicated.
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE host_list_members AS
        WITH parts AS (
            SELECT list_id, unnest(parts) AS part FROM host_lists WHERE simple
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
    expanded: dict[str, list] = {"list_id": [], "node": []}
    unreadable = {}
    for list_id, node_list in con.execute("SELECT list_id, node_list FROM host_lists WHERE NOT simple").fetchall():
        try:
            nodes = list(NodeSet(node_list))
        except NodeSetParseError as exc:
            unreadable[node_list] = str(exc) or "not a Slurm host list"
            continue
        expanded["list_id"].extend([list_id] * len(nodes))
        expanded["node"].extend(nodes)
    complex_members = pa.table(expanded, schema=pa.schema([("list_id", pa.int64()), ("node", pa.string())]))
    create_temp_table(con, "complex_host_list_members", complex_members)
    con.execute("INSERT INTO host_list_members SELECT * FROM complex_host_list_members")
    return unreadable
