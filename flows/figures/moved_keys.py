"""metrics.json keys that moved in schema version 3 (docs/metrics.md, "What moved in schema version 3").

MOVED_KEYS maps a key's dotted path in a metrics.json of an earlier schema version to its path in
version 3. A dotted path walks the document's objects by key; where the old and the new path share
a list, the move is made in every item of it (e.g. "failures_by_cause.rows.cause_category" ->
"failures_by_cause.rows.category" renames the key of each row). flows/delivery/fingerprint.py reads
an earlier metrics.json through `moved`, so a month sent before the keys moved is compared by its
figures, not by their names.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

MOVED_KEYS: dict[str, str] = {}
MOVED_IN = 3  # the schema version the keys moved in: a document of an earlier version has the old paths


def moved(document: dict) -> dict:
    """`document` with every key of MOVED_KEYS at its new path (a copy) when it is of a schema
    version before MOVED_IN; else `document` itself. The keys are moved in MOVED_KEYS' order."""
    version = document.get("schema_version")
    if not isinstance(version, int) or version >= MOVED_IN:
        return document
    result = copy.deepcopy(document)
    for old, new in MOVED_KEYS.items():
        old_parts, new_parts = old.split("."), new.split(".")
        shared = 0  # the keys both paths begin with, but for their last ones
        while shared < min(len(old_parts), len(new_parts)) - 1 and old_parts[shared] == new_parts[shared]:
            shared += 1
        for node in _objects(result, old_parts[:shared]):
            _move(node, old_parts[shared:], new_parts[shared:])
    return result


def _objects(node: object, path: list[str]) -> Iterator[dict]:
    """The objects at `path` under `node`, going into every item of a list on the way."""
    if isinstance(node, list):
        for item in node:
            yield from _objects(item, path)
    elif isinstance(node, dict):
        if not path:
            yield node
        elif path[0] in node:
            yield from _objects(node[path[0]], path[1:])


def _move(node: dict, old: list[str], new: list[str]) -> None:
    """Move the value at path `old` under `node` (through objects) to path `new` under it, if it is there."""
    parent: object = node
    for key in old[:-1]:
        parent = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(parent, dict) or old[-1] not in parent:
        return
    value = parent.pop(old[-1])
    target = node
    for key in new[:-1]:
        target = target.setdefault(key, {})
    target[new[-1]] = value
