"""The orchestration's shape (issue 53): a command makes a plan and one flow runs it, so no flow
reaches another flow through the functions it calls (no flow re-runs itself for later months, no
study runs a backfill's flow); no run's state is kept in a module-level registry; the layers of
flows/' own modules import downwards only (cli -> commands -> the flow -> the plan -> the stage
packages, docs/architecture.md); and a module keeps to its size cap by its code, not by keeping
the formatter off its lines."""

from __future__ import annotations

import ast
from pathlib import Path

from test_architecture import REPO_ROOT, import_graph, module_name

FLOWS = REPO_ROOT / "flows"


def modules(root: Path = FLOWS) -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text()) for p in sorted(root.rglob("*.py"))}


def is_flow(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated with Prefect's `flow` (bare, called, or as `prefect.flow`)."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (isinstance(target, ast.Name) and target.id == "flow") or (
            isinstance(target, ast.Attribute) and target.attr == "flow"
        ):
            return True
    return False


def names_in_scope(module: str, tree: ast.Module, known: set[str]) -> dict[str, str]:
    """What each name a module uses stands for among the project's functions: its own top-level
    functions and what it imports from the project's modules (anywhere in it, as an import inside a
    function binds the same name)."""
    scope = {f.name: f"{module}.{f.name}" for f in tree.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if f"{node.module}.{alias.name}" in known:
                    scope[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                scope[alias.asname or alias.name] = alias.name
    return scope


def referenced(function: ast.AST, scope: dict[str, str]) -> set[str]:
    """The project's functions a function's body names: called, passed on or submitted, directly or
    as `module.function`. A name counts even when not called here (a flow handed to a runner, or
    `flow.with_options(...)`, is run all the same)."""
    found = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in scope:
            found.add(scope[node.id])
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in scope:
            found.add(f"{scope[node.value.id]}.{node.attr}")
    return found


def call_graph(trees: dict[str, ast.Module]) -> tuple[dict[str, set[str]], set[str]]:
    """(function -> the project's functions it names, the flows): over every top-level function."""
    functions = {
        f"{module}.{f.name}": (module, f)
        for module, tree in trees.items()
        for f in tree.body
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    scopes = {module: names_in_scope(module, tree, set(functions)) for module, tree in trees.items()}
    graph = {}
    for name, (module, function) in functions.items():
        body = ast.Module(body=function.body, type_ignores=[])  # its decorators are not calls of it
        graph[name] = referenced(body, scopes[module]) & set(functions)
    return graph, {name for name, (_, function) in functions.items() if is_flow(function)}


def flows_reaching_flows(trees: dict[str, ast.Module]) -> list[str]:
    """Each path from a flow's body, through the functions it names, to a flow."""
    graph, flows = call_graph(trees)
    found = []
    for start in sorted(flows):
        seen, stack = {start}, [(start, [start])]
        while stack:
            name, path = stack.pop()
            for callee in sorted(graph.get(name, ())):
                if callee in flows:
                    found.append(" -> ".join([*path, callee]))
                elif callee not in seen:
                    seen.add(callee)
                    stack.append((callee, [*path, callee]))
    return found


def test_no_flow_reaches_a_flow_through_calls() -> None:
    trees = modules()
    assert call_graph(trees)[1], "no flow found: the check would check nothing"
    assert flows_reaching_flows(trees) == []


def test_a_flow_calling_a_flow_through_a_helper_is_found() -> None:
    """The check itself: a flow whose helper runs another flow, or hands one to a runner."""
    source = """
from prefect import flow

@flow(name="month")
def month(m): ...

def refresh(m):
    return month(m)

@flow
def backfill(ms):
    for m in ms:
        refresh(m)

@flow
def study(runner):
    runner.submit(month.with_options(name="x"))
"""
    found = flows_reaching_flows({"flows.sample": ast.parse(source)})
    assert found == [
        "flows.sample.backfill -> flows.sample.refresh -> flows.sample.month",
        "flows.sample.study -> flows.sample.month",
    ]


MUTATORS = {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "add", "remove", "discard"}
CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque"}


def module_containers(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level to a mutable container (a dict, list or set display
    or comprehension, or a constructor of one)."""
    found = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = getattr(node, "value", None)
        mutable = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp) or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in CONTAINERS
        )
        if mutable:
            found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


def mutated_registries(module: str, tree: ast.Module, containers: dict[str, set[str]]) -> list[str]:
    """Where a function changes a module-level container (its own module's, or one it imports), as
    `<the container's module>.<name> in <function>`: an item set or deleted, a mutating method
    called, or a module-level name rebound through `global`."""
    names = {name: module for name in containers.get(module, set())}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in containers:
            names |= {a.asname or a.name: node.module for a in node.names if a.name in containers[node.module]}
    found = []
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        for node in ast.walk(function):
            target = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
                target = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                target = node.func.value
            elif isinstance(node, ast.Global):
                found += [f"{module}.{name} in {function.name}" for name in node.names]
            if isinstance(target, ast.Name) and target.id in names:
                found.append(f"{names[target.id]}.{target.id} in {function.name}")
    return found


# A process's own resources, shared by every run in it on purpose, none of them a run's state: the
# old copies its threads are deleting (so that they are not taken for a killed run's leftovers), the
# temporary Prefect server it started, the drawing process its backfills and refreshes share.
PROCESS_RESOURCES = {"flows.core.atomic._removing", "flows.core.prefect_api._server", "flows.report.drawing._pool"}


def test_no_module_level_run_registry() -> None:
    """A run's state goes with the run (its parameters, the plan, its context), never in a
    module-level container that functions fill and empty: two runs in one process would share it,
    and a failed run's entry would outlive it."""
    trees = modules()
    containers = {module: module_containers(tree) for module, tree in trees.items()}
    found = [found for module, tree in trees.items() for found in mutated_registries(module, tree, containers)]
    assert [where for where in found if where.split(" in ")[0] not in PROCESS_RESOURCES] == []
    assert {name for names in containers.values() for name in names if name.endswith("_runs")} == set()


def test_a_registry_filled_by_a_hook_is_found() -> None:
    source = "month_runs: dict = {}\n\ndef hook(run):\n    month_runs[run.id] = run\n\ndef done(run):\n    del month_runs[run.id]\n"
    tree = ast.parse(source)
    assert mutated_registries("flows.m", tree, {"flows.m": module_containers(tree)}) == [
        "flows.m.month_runs in hook",
        "flows.m.month_runs in done",
    ]


# flows/' own modules, top layer first: a module imports from its own layer or one below it, and
# every module of flows/ (outside the stage packages, tests/test_architecture.py's STAGES) has a
# layer. The flow imports the plan's types; a command makes the plan and hands it to the flow.
LAYERS = [
    {"flows.cli"},
    {"flows.commands", "flows.demo", "flows.deployments"},
    {"flows.run_plan", "flows.backfill", "flows.study", "flows.pipeline", "flows.stages"},
    {"flows.plan", "flows.edge"},
]


def layer_of(module: str) -> int:
    """The layer of a module of flows/: the stage packages and the package itself are below every layer."""
    for index, layer in enumerate(LAYERS):
        if module in layer:
            return index
    return len(LAYERS)


def test_every_top_level_module_has_a_layer() -> None:
    top = {module_name(p) for p in FLOWS.glob("*.py")} - {"flows"}
    assert top - set().union(*LAYERS) == set()


def test_no_import_back_up_a_layer() -> None:
    upward = [
        f"{module} -> {imported}"
        for module, imports in import_graph("flows").items()
        for imported in sorted(imports)
        if layer_of(imported) < layer_of(module)
    ]
    assert upward == []


# the modules flat-flow owns (issue 53): formatted throughout. Those of the stage packages other
# branches change are counted in its report, not here.
# the code the caps hold (tests/test_architecture.py): flows/ and the simulator
FORMATTED = [*sorted(FLOWS.rglob("*.py")), *sorted((REPO_ROOT / "simulator").rglob("*.py"))]


def test_no_formatter_switched_off_to_meet_a_cap() -> None:
    """A function or module keeps to its cap (tests/test_architecture.py) by its code, not by lines
    the formatter is told to leave long (`# fmt: skip`, `# fmt: off`)."""
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}"
        for path in FORMATTED
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "# fmt: skip" in line or "# fmt: off" in line
    ]
    assert found == []
