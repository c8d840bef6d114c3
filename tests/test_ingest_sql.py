"""The readers' SQL is in files: flows/ingest/sources/sql/<module>__<what>.sql, linted by sqlfluff
(`make lint`) and run by name (flows/ingest/sources/sql.py). Computed from the code: no Python module
of the ingest stage holds a statement, every statement file is run, and every name run has its file."""

import ast
import re
from pathlib import Path

from flows.ingest.sources.sql import SQL_DIR

FLOWS = Path(__file__).resolve().parents[1] / "flows"
# A SQL statement in a string (the constant parts of an f-string joined): a query, or a statement
# that makes or fills a table or view, or writes one out.
STATEMENT = re.compile(
    r"\bselect\b.*\bfrom\b"
    r"|\bcreate\s+(?:or\s+replace\s+)?(?:temp\s+|temporary\s+)?(?:table|view|schema)\b"
    r"|\binsert\s+into\b|\bdelete\s+from\b|\bupdate\b.*\bset\b|\bcopy\b.*\bto\b",
    re.IGNORECASE | re.DOTALL,
)
# Stages whose queries of the marts are still strings in Python (issue 36 item 5 moved the ingest
# stage's; these are the figures', the quality checks' and the warehouse's own, to move next).
NOT_YET_IN_FILES = ("figures", "quality", "warehouse", "study.py")
RUNNERS = ("run_sql", "sql_relation")


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of the module's string literals and f-strings, less its docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            found.append((node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
    return found


def _statements_in_python() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted(FLOWS.rglob("*.py")):
        lines = [line for line, text in _strings(ast.parse(path.read_text())) if STATEMENT.search(text)]
        if lines:
            found[str(path.relative_to(FLOWS))] = sorted(set(lines))
    return found


def test_no_module_of_the_ingest_stage_holds_a_sql_statement():
    found = _statements_in_python()
    assert not {module: lines for module, lines in found.items() if module.startswith("ingest/")}
    # and no other stage starts writing SQL in Python
    assert not {module: lines for module, lines in found.items() if not module.startswith(NOT_YET_IN_FILES)}


def test_the_pattern_finds_what_the_readers_used_to_write():
    for sql in (
        "SELECT node_list, size FROM host_lists WHERE simple",
        "CREATE OR REPLACE TEMP TABLE {} AS SELECT * FROM {}_arrow",
        "COPY host_list_members TO {} (FORMAT parquet)",
        "INSERT INTO sacct_lines {}",
    ):
        assert STATEMENT.search(sql), sql
    assert not STATEMENT.search("the records selected from a dump are copied")


def test_every_statement_file_is_run_and_every_statement_run_has_its_file():
    named = set()
    for path in (FLOWS / "ingest").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in RUNNERS:
                name = node.args[1]
                assert isinstance(name, ast.Constant), f"{path}:{node.lineno}: a statement is named, not computed"
                named.add(name.value)
    files = {path.stem for path in SQL_DIR.glob("*.sql")}
    assert named == files, f"run, no file: {sorted(named - files)}; file, never run: {sorted(files - named)}"
    for stem in files:
        module = stem.split("__")[0]
        assert list(FLOWS.rglob(f"{module}.py")), f"{stem}.sql: no module {module}.py runs it"
