"""Rules of the code's shape that a reviewer would otherwise check by hand (issue 20): every figure
is computed in the dbt DAG, so nothing outside it reads a staging or intermediate model, and no
function in flows/ is longer than 80 lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 80
# a staging or intermediate model named in a query: `stg_<source>__<table>` or `int_<name>`
INNER_MODEL = re.compile(r"\b(stg_[a-z0-9]+__[a-z0-9_]+|int_[a-z0-9]+_[a-z0-9_]+)\b")


def python_files() -> list[Path]:
    return sorted((REPO_ROOT / "flows").rglob("*.py"))


def test_no_function_in_flows_is_longer_than_80_lines() -> None:
    long = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long


def test_nothing_outside_dbt_reads_a_staging_or_intermediate_model() -> None:
    """The Python code and the data-quality suites read marts only."""
    readers = [*python_files(), *(REPO_ROOT / "expectations").glob("*.json"), *(REPO_ROOT / "templates").rglob("*")]
    found = [
        f"{path.relative_to(REPO_ROOT)}: {match}"
        for path in readers
        if path.is_file()
        for match in INNER_MODEL.findall(path.read_text())
    ]
    assert not found
