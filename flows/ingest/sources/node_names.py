"""The one rule for a node's name, which every health source applies to the node it reads, and
how a source's names map to the scheduler's.

A node is one host name (or address): letters, digits, '.', '-' and '_', starting with a letter or
digit. A list, a host list (`gpu[1-2]`) or a name with a space is not one node: the row is
quarantined, never attributed to a node named by its first word or by the list's text.

A source may name a node otherwise than the job records do (a fully qualified name, upper case, a
prefix): its `node_names` steps map its names at landing, and data quality counts, per source, the
nodes it names that no job record or Slurm node event names, with the step that would map them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Container, Iterable, Sequence
from pathlib import Path
from typing import Annotated

import pyarrow as pa
from pydantic import AfterValidator, BeforeValidator, Strict

from flows.core.words import counted
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


# ---- a source's names mapped to the scheduler's (`node_names` on its [[sources]] table) --------------------------
# The one place the mappings are defined: the config checks a source's `node_names` against them, the
# landing applies them (`map_nodes`) and the data-quality check suggests them (`node_name_check`).
# Each is a step; a source's steps are applied in order.
STRIP_PREFIX = "strip_prefix:"
NODE_NAME_STEPS = {
    "strip_domain": "node7.cluster.local is node7 (an IPv4 address is kept whole)",
    "lowercase": "NODE7 is node7",
    f"{STRIP_PREFIX}<text>": "gpu-node7 is node7 with strip_prefix:gpu- (a name that is only the prefix is kept)",
}
_IPV4 = re.compile(r"[0-9]+(\.[0-9]+){3}")
_PREFIX = re.compile(rf"{re.escape(STRIP_PREFIX)}[{HOST_NAME_CHARS}]+")


def _node_name_step(step: str) -> str:
    if step not in NODE_NAME_STEPS and not _PREFIX.fullmatch(step):
        known = ", ".join(f'"{name}"' for name in NODE_NAME_STEPS)
        raise ValueError(f"must be one of {known} (a list of them applies each in turn), not {step!r}")
    return step


NodeNameStep = Annotated[str, Strict(), AfterValidator(_node_name_step)]
# one step, or a list of them, as the config gives it
NodeNameSteps = Annotated[
    tuple[NodeNameStep, ...], BeforeValidator(lambda value: (value,) if isinstance(value, str) else value)
]


def map_node(name: str, steps: Sequence[str]) -> str:
    """`name` as the scheduler names it, by the source's `steps` (NODE_NAME_STEPS) in order."""
    for step in steps:
        if step == "strip_domain" and not _IPV4.fullmatch(name):
            name = name.split(".", 1)[0]
        elif step == "lowercase":
            name = name.lower()
        elif step.startswith(STRIP_PREFIX):
            name = name.removeprefix(step.removeprefix(STRIP_PREFIX)) or name
    return name


def map_nodes(table: pa.Table, steps: Sequence[str]) -> pa.Table:
    """`table` with its `node` column mapped by `steps` (each distinct name once)."""
    if not steps or "node" not in table.column_names or not table.num_rows:
        return table
    encoded = table["node"].combine_chunks().dictionary_encode()
    names = pa.array([map_node(name, steps) for name in encoded.dictionary.to_pylist()], pa.string())
    mapped = pa.DictionaryArray.from_arrays(encoded.indices, names).cast(pa.string())
    return table.set_column(table.schema.get_field_index("node"), "node", mapped)


def first_rows(tables: Iterable[pa.Table]) -> dict[str, str]:
    """Each node the tables name, with `file:line` of its first row there."""
    found: dict[str, str] = {}
    for table in tables:
        if not table.num_rows:
            continue
        firsts = (
            table.select(["node", "source_file", "source_line"])
            .group_by("node", use_threads=False)
            .aggregate([("source_file", "first"), ("source_line", "first")])
        )
        columns = (firsts[name].to_pylist() for name in ("node", "source_file_first", "source_line_first"))
        for node, file, line in zip(*columns, strict=True):
            found.setdefault(node, f"{file}:{line}")
    return found


def _prefix(name: str, scheduler: Container[str]) -> str | None:
    """The shortest prefix of `name` whose rest the scheduler names."""
    return next((name[:i] for i in range(1, len(name)) if name[i:] in scheduler), None)


def _likely_cause(unmatched: list[str], scheduler: Container[str]) -> tuple[str, tuple[str, ...], int] | None:
    """The simple rule that maps most of `unmatched` to the scheduler's names (its cause, its steps,
    how many it maps), or None when none maps at least half of them."""
    candidates = [
        ("a domain suffix", ("strip_domain",)),
        ("case", ("lowercase",)),
        ("a domain suffix and case", ("strip_domain", "lowercase")),
    ]
    if prefixes := Counter(p for name in unmatched if (p := _prefix(name, scheduler))):
        prefix = prefixes.most_common(1)[0][0]
        candidates.append((f"a prefix {prefix!r}", (STRIP_PREFIX + prefix,)))
    best = max(
        ((cause, steps, sum(map_node(name, steps) in scheduler for name in unmatched)) for cause, steps in candidates),
        key=lambda candidate: candidate[2],
    )
    return best if 2 * best[2] >= len(unmatched) else None


def node_name_check(source: str, named: dict[str, str], scheduler: Container[str], steps: Sequence[str]) -> dict:
    """What data quality says of a source's node names (`named`: each with `file:line` of its first
    row): how many it names, how many of them no job record or Slurm node event names (`scheduler`),
    and, when some, in words: examples, the likely cause and the `node_names` that maps them."""
    unmatched = sorted(name for name in named if name not in scheduler)
    check = {"source": source, "nodes": len(named), "not_in_job_records": len(unmatched), "finding": None}
    if not unmatched:
        return check
    examples = ", ".join(f"{name} ({named[name]})" for name in unmatched[:3])
    are = "is" if len(unmatched) == 1 else "are"
    finding = (
        f"{source}: {len(unmatched):,} of the {counted(len(named), 'node')} it names {are} in no job record or "
        f"Slurm node event (e.g. {examples}), so their events attribute to no job; "
    )
    if cause := _likely_cause(unmatched, scheduler):
        words, suggested, maps = cause
        example = next(name for name in unmatched if map_node(name, suggested) in scheduler)
        shown = [*steps, *suggested]
        setting = json.dumps(shown[0]) if len(shown) == 1 else json.dumps(shown)
        finding += (
            f"likely cause: {words} ({example} is {map_node(example, suggested)} there; it maps {maps:,} of the "
            f"{len(unmatched):,}): set node_names = {setting} on its [[sources]] (docs/sources.md)"
        )
    else:
        finding += (
            "no simple rule (a domain suffix, case, a prefix) maps most of them to the scheduler's names: are they "
            "nodes of this cluster, and is the log's host field read right?"
        )
    return {**check, "finding": finding}
