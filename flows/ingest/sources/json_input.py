"""JSON from an input file, read within bounds: the one way every reader parses JSON.

Python's `json` accepts what no tool of ours writes and fails on what a hostile file can hold:
`NaN` and `Infinity`, a float that overflows to infinity (`1e400`), an integer of thousands of
digits (Python refuses past 4,300 with a ValueError that names no field), nesting a hundred thousand
deep (a RecursionError). `load_json` refuses each with a `JsonRefused` (a ValueError) that says
why in words, for the reader to quarantine with its file, line and field. (A document of many
records, sacct --json's, is read job by job when it is refused: flows/ingest/sources/sacct_json.py.)

A `\ud800` escape is valid JSON that Python decodes to a lone surrogate, a string no UTF-8 output
(Arrow, Parquet, the report) can hold: it becomes U+FFFD, as an undecodable byte of a text file does
(flows/ingest/sources/files.py).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from flows.ingest.sources.limits import DEFAULT_LIMITS, MAX_INTEGER_DIGITS, MAX_JSON_DEPTH, InputLimits


class JsonRefused(ValueError):
    """A JSON text that is not read: not JSON, or a value or nesting beyond what the formats hold."""


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise JsonRefused(f"an integer of {len(text):,} digits, more than any count or time holds")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonRefused(f"the number {text[:40]} is beyond a float's range")
    return value


def _constant(name: str) -> float:
    raise JsonRefused(f"{name} is not a JSON number")


# a string, or (unclosed) the rest of the text; possessive, so no run is scanned twice or stacked
_STRING = re.compile(rb'"(?:[^"\\]++|\\(?:.|\Z))*+(?:"|\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(code for code in range(256) if chr(code) not in "[]{}")


def _bracket_depth(text: bytes) -> int:
    steps = np.frombuffer(text.translate(None, _NOT_BRACKETS), dtype=np.uint8)
    if steps.size == 0:
        return 0
    # '[' 91 and '{' 123 open, ']' 93 and '}' 125 close: bit 1 tells them apart
    return int(np.cumsum((steps & 2).astype(np.int32) - 1).max(initial=0))


def nesting_depth(text: str | bytes, bound: int = MAX_JSON_DEPTH) -> int:
    """How deep `text`'s arrays and objects nest, brackets inside strings left out; linear, without
    recursion. Counting every bracket is an upper bound, exact unless strings hold brackets: only a
    text over `bound` by that count has its strings taken out and is counted again."""
    raw = text.encode("utf-8", errors="replace") if isinstance(text, str) else text
    upper = _bracket_depth(raw)
    return upper if upper <= bound else _bracket_depth(_STRING.sub(b"", raw))


# a UTF-16 surrogate written as an escape: a text without one cannot decode to a lone surrogate
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate in its strings (keys too) as U+FFFD; nests at most the depth bound."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)  # json.loads joins a pair into one character
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(key): _without_lone_surrogates(item) for key, item in value.items()}
    return value


def load_json(text: str | bytes, limits: InputLimits = DEFAULT_LIMITS) -> Any:
    """The JSON value of `text`, or JsonRefused saying why it is not read (see the module docstring)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if (depth := nesting_depth(text, limits.max_json_depth)) > limits.max_json_depth:
        raise JsonRefused(f"nested {depth:,} deep, deeper than any document of this format ({limits.max_json_depth})")
    try:
        value = json.loads(text, parse_int=_integer, parse_float=_float, parse_constant=_constant)
    except JsonRefused:
        raise
    except RecursionError:
        raise JsonRefused("nested too deep to read") from None
    except (json.JSONDecodeError, ValueError) as exc:  # ValueError: a \ud800 escape, an over-long number
        raise JsonRefused(f"not JSON: {exc}") from None
    return _without_lone_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value
