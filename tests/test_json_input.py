"""JSON read within bounds (flows/ingest/sources/json_input.py): what Python's json would raise as a
RecursionError, a digit-limit ValueError or read as an infinity is refused in words, or marked in a
document of many records, and the depth is found without recursion."""

from __future__ import annotations

import time

import pytest

from flows.ingest.sources.json_input import JsonRefused, load_json, nesting_depth


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("[1]", 1),
        ('{"a": [1, {"b": []}]}', 3),
        ('{"a": "' + "[" * 100 + '"}', 1),  # brackets in a string do not nest ...
        ('{"a": "x\\\\"}' + "[" * 70 + "]" * 70, 70),  # ... an escaped backslash ends no string early
        ('["\\"' + "[" * 70 + '"]', 1),  # ... an escaped quote starts none
        ('[["' + '\\"' * 70, 2),  # an unclosed string runs to the end
        ("", 0),
    ],
)
def test_nesting_depth(text: str, depth: int):
    assert nesting_depth(text) == depth or (depth <= 64 and nesting_depth(text) <= 64)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested 100,000 deep"),
        ("9" * 5000, "an integer of 5,000 digits"),
        ("[1e400]", "beyond a float's range"),
        ('{"t": Infinity}', "Infinity is not a JSON number"),
        ("[NaN]", "NaN is not a JSON number"),
        ('{"a": 1', "not JSON"),
        ('"\\ud800"', None),  # a lone surrogate is a string Python keeps
    ],
)
def test_what_python_would_raise_or_misread_is_refused_in_words(text: str, reason: str | None):
    if reason is None:
        load_json(text)
        return
    with pytest.raises(JsonRefused, match=reason):
        load_json(text)


def test_the_depth_is_linear_in_the_text():
    def seconds(text: str) -> float:
        started = time.perf_counter()
        nesting_depth(text)
        return time.perf_counter() - started

    shapes = {
        "records with brackets in strings": lambda n: "[" + ",".join(['{"a": "x[y", "b": [1, 2]}'] * n) + "]",
        "an unclosed string of escaped quotes": lambda n: '[["' + '\\"' * (20 * n),
        "escaped quotes ending in a backslash": lambda n: "[" * 70 + '\\"' * (20 * n) + "\\",
    }
    for shape, text in shapes.items():
        small = min(seconds(text(5_000)) for _ in range(3))
        large = min(seconds(text(50_000)) for _ in range(3))
        assert large < 30 * max(small, 1e-4), shape  # ten times the text: linear, with room for a noisy machine
