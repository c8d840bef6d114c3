"""JSON read within bounds (flows/ingest/sources/json_input.py): what Python's json would raise as a
RecursionError, a digit-limit ValueError or read as an infinity is refused in words, or marked in a
document of many records, and the depth is found without recursion."""

from __future__ import annotations

import time

import pytest

from flows.ingest.sources.json_input import BadValue, JsonRefused, load_json, nesting_depth


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("[1]", 1),
        ('{"a": [1, {"b": []}]}', 3),
        ('{"a": "' + "[" * 100 + '"}', 1),  # brackets in a string do not nest ...
        ('{"a": "x\\\\"}' + "[" * 70 + "]" * 70, 70),  # ... an escaped backslash ends no string early
        ('["\\"' + "[" * 70 + '"]', 1),  # ... an escaped quote starts none
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


def test_a_document_of_many_records_marks_the_bad_value_and_keeps_the_rest():
    text = '{"jobs": [{"id": 1}, {"id": ' + "9" * 5000 + '}, {"id": 1e400}]}'
    jobs = load_json(text, mark_bad_values=True)["jobs"]
    assert jobs[0] == {"id": 1}
    assert all(isinstance(job["id"], BadValue) for job in jobs[1:])
    assert not isinstance(jobs[1]["id"], int | float | str | bool)


def test_the_depth_is_linear_in_the_text():
    def seconds(records: int) -> float:
        text = "[" + ",".join(['{"a": "x[y", "b": [1, 2]}'] * records) + "]"
        started = time.perf_counter()
        nesting_depth(text)
        return time.perf_counter() - started

    small, large = min(seconds(20_000) for _ in range(3)), min(seconds(200_000) for _ in range(3))
    assert large < 30 * small  # ten times the text: linear, with room for a noisy machine
