"""JSON read within bounds (flows/ingest/sources/json_input.py): what Python's json would raise as a
RecursionError, a digit-limit ValueError or read as an infinity is refused in words, or marked in a
document of many records, and the depth is found without recursion."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hostile import Outcome, hostile

from flows.cli import main
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


def test_a_lone_surrogate_escape_is_a_replacement_character_and_a_pair_its_character():
    value = load_json('{"a": "x\\ud800y", "\\udc00": ["\\ud83d\\ude00"]}')
    assert value == {"a": "x\ufffdy", "\ufffd": ["\U0001f600"]}
    assert json.dumps(value, ensure_ascii=False).encode("utf-8")  # UTF-8 holds it (Arrow, Parquet, the report)


@hostile(Outcome.FIGURE)
@pytest.mark.parametrize("kind", ["gcm_health_dir", "sacct_json"])
def test_a_lone_surrogate_in_a_readers_json_lands_its_record(kind: str, tmp_path: Path, slurm_fixtures: Path, capsys):
    """The fuzzer's finding: `\\ud800` in a GCM message or a job's name stopped the file with a
    UnicodeEncodeError from Arrow, "(a bug?)"."""
    if kind == "gcm_health_dir":
        path = tmp_path / "gcm"
        path.mkdir()
        record = (
            '[{"node": "gpu1", "health_check": "xid errors", "result": 2, "_msg": "\\ud800", "end_time": 1795404124}]'
        )
        (path / "h.log").write_text(record + "\n")
    else:
        document = json.loads((slurm_fixtures / "sacct.json").read_text())
        document["jobs"][0]["name"] = "PLACEHOLDER"
        path = tmp_path / "jobs.json"
        path.write_text(json.dumps(document).replace("PLACEHOLDER", "\\ud800"))
    assert main(["parse", "--json", "--kind", kind, str(path)]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out.splitlines()[-1])["summary"]
    assert err == "" and summary["rows"] >= 1 and summary["quarantined"] == 0
    assert "\ufffd" in out or "\\ufffd" in out
