"""The one rule for a node's name, which every health source applies to the node it reads.

A node is one host name (or address): letters, digits, '.', '-' and '_', starting with a letter or
digit. A list, a host list (`gpu[1-2]`) or a name with a space is not one node: the row is
quarantined, never attributed to a node named by its first word or by the list's text.
"""

from __future__ import annotations

import re
from pathlib import Path

from flows.ingest.sources.errors import InputFormatError

HOST_NAME_CHARS = r"A-Za-z0-9._\-"  # the characters of a node's name, as a character class's body
MAX_NODE_NAME_CHARS = 253  # a DNS name's longest
# Python's re and RE2 (DuckDB) read it alike
NODE_NAME = rf"[A-Za-z0-9][{HOST_NAME_CHARS}]{{0,{MAX_NODE_NAME_CHARS - 1}}}"
NODE_NAME_RULE = "a node is one host name: letters, digits, '.', '-' and '_'"
_NODE_NAME = re.compile(NODE_NAME)


def node_name(value: object, path: Path | str, line: int, field: str = "node") -> str:
    """`value` as a node name, or the error naming the file, line and field it came from."""
    if not isinstance(value, str):
        shown = repr(value)
        raise InputFormatError(path, line, field, shown, f"expected one node name, not a {type(value).__name__}")
    if not _NODE_NAME.fullmatch(value):
        raise InputFormatError(path, line, field, value, NODE_NAME_RULE)
    return value
