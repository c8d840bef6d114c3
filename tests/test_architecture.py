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


MAX_MODULE_LINES = 400
# The stages, lowest first: a module imports from its own stage or a lower one, never a higher one.
# flows' own top-level modules (the Prefect flows and the CLI) are the top.
STAGES = ["core", "ingest", "warehouse", "quality", "figures", "report", "publish", "delivery"]


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The project's modules that `path` imports anywhere in it (top level, in functions, or under
    TYPE_CHECKING: each is a dependency), `from package import module` resolved to the module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name in known}


def import_graph(root: str) -> dict[str, set[str]]:
    paths = sorted((REPO_ROOT / root).rglob("*.py"))
    known = {module_name(p) for p in paths}
    return {module_name(p): imported_modules(p, known) - {module_name(p)} for p in paths}


def stage_of(module: str) -> int:
    if module == "flows":
        return 0  # the package's __init__: the runtime folders' paths, which every stage may read
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else len(STAGES)


def test_no_module_is_longer_than_400_lines() -> None:
    files = [*python_files(), *sorted((REPO_ROOT / "simulator").rglob("*.py"))]
    long = {
        str(p.relative_to(REPO_ROOT)): n for p in files if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long


def test_no_module_imports_from_a_higher_stage() -> None:
    upward = [
        f"{module} -> {imported}"
        for module, imports in import_graph("flows").items()
        for imported in sorted(imports)
        if stage_of(imported) > stage_of(module)
    ]
    assert not upward


def test_there_is_no_import_cycle() -> None:
    graph = import_graph("flows")
    cycles, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append(" -> ".join(path[path.index(module) :] + [module]))
            return
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert not cycles


def test_the_simulator_imports_nothing_from_flows_and_reads_no_dbt_file() -> None:
    """The simulator is the oracle the science is tested against: it shares no definition with the
    code under test."""
    found = []
    for path in sorted((REPO_ROOT / "simulator").rglob("*.py")):
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            found += [f"{path.name}: import {n}" for n in names if n == "flows" or n.startswith("flows.")]
        if "dbt_project" in text or "DBT_PROJECT_DIR" in text:
            found.append(f"{path.name}: reads dbt_project")
    assert not found
