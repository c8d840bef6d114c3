"""The bounds on what one line, field or document of an input may cost to read.

Logs are written by others: a line may be a megabyte of spaces, a 19-byte host list may name a
million nodes, a JSON document may nest a hundred thousand deep. Each bound is checked before the
costly step, and what is over it is quarantined (naming the file, line and field) in milliseconds,
never read for minutes or allowed to stop the month. The one bound a site may need to raise, the
nodes one host list may name, is a config key (`[ingest] max_host_list_nodes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# More nodes than one job or event of any cluster names (the largest machines have about 160,000
# nodes; GPU training clusters a few thousand); [ingest] max_host_list_nodes sets it for a site.
MAX_HOST_LIST_NODES = 100_000
# A field longer than this is no value Slurm or a health tool writes (a 100,000-node host list of
# scattered nodes is under 1 MB): it is quarantined before any pattern looks at it.
MAX_FIELD_CHARS = 1 << 20
# JSON nests a handful deep in every format read (sacct --json, dcgmi, GCM, Prometheus series);
# deeper is quarantined before a parser recurses into it.
MAX_JSON_DEPTH = 64
# A count, id or epoch time of every format fits in a 64-bit integer (19 digits and a sign).
MAX_INTEGER_DIGITS = 20


@dataclass(frozen=True)
class InputLimits:
    """The bounds in force for one landing (or one `parse`): the config's, else the defaults above."""

    max_host_list_nodes: int = MAX_HOST_LIST_NODES
    max_field_chars: int = MAX_FIELD_CHARS
    max_json_depth: int = MAX_JSON_DEPTH


DEFAULT_LIMITS = InputLimits()


def configured_limits(ingest: Any) -> InputLimits:
    """The bounds a config's `[ingest]` section sets (flows.config.cluster.IngestConfig)."""
    return InputLimits(max_host_list_nodes=ingest.max_host_list_nodes)


def too_long(value: str, limits: InputLimits = DEFAULT_LIMITS) -> str | None:
    """Why `value` is too long to be a field of any input, or None."""
    if len(value) > limits.max_field_chars:
        return f"{len(value):,} characters, longer than any field of this format ({limits.max_field_chars:,})"
    return None
