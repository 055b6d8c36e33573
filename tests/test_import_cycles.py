"""No import cycles inside the project, hidden or not.

Walks every `import` statement of the repository's packages (estimator, config and every web app),
at module level and inside functions (a function-level import is how a
cycle usually hides), resolves relative imports, and fails on any strongly connected component of
more than one module. A package's `__init__` importing its own submodules is not counted as a cycle
(Python imports the parent first).

The same graph, read by package, must have no cycle either: the web apps (each top-level package)
and estimator's stage packages (estimator.model, estimator.layout, ...; each foundation module
counts as its own package) import each other one way only, the lower app never reaching up, even
when no single module closes a loop. A failure names the cycle and the imports that close it.
"""

from __future__ import annotations

import ast
import functools
import itertools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Every top-level package of the repository (the core, config and each web app), found, so that
# a new app is checked the day it appears.
PACKAGES = tuple(sorted(p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name != "tests"))


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


@functools.cache  # parsed once per run: several tests (and tests/test_layers.py) read it, none writes
def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its body."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = package.split(".")
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                while target and target not in modules:  # `import a.b.c` of a non-module tail
                    target = target.rpartition(".")[0]
                if not target or target == name:
                    continue
                if is_package and target.startswith(name + "."):
                    continue  # a package importing its own submodule
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def package_of(module: str) -> str:
    """The package a module counts in: a web app's top-level package, or the stage (or foundation
    module) of estimator it is in."""
    parts = module.split(".")
    depth = 2 if parts[0] == "estimator" else 1
    return ".".join(parts[:depth])


def package_edges(graph: dict[str, set[str]]) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """Package -> each package it imports -> the module imports that make that edge."""
    edges: dict[str, dict[str, list[tuple[str, str]]]] = {package_of(m): {} for m in graph}
    for module, targets in graph.items():
        for target in sorted(targets):
            source, dest = package_of(module), package_of(target)
            if source != dest:
                edges[source].setdefault(dest, []).append((module, target))
    return edges


def cycle_path(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle through a strongly connected component, from its first member back to it."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:  # breadth first: the shortest way round
        node = frontier.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                return [*paths[node], start]
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                frontier.append(nxt)
    raise ValueError(f"{component} is not a cycle")


def describe_package_cycles(edges: dict[str, dict[str, list[tuple[str, str]]]]) -> list[str]:
    """Each package-level cycle as `a -> b -> a`, with the module imports that close it."""
    graph = {package: set(targets) for package, targets in edges.items()}
    out = []
    for component in cycles(graph):
        path = cycle_path(component, graph)
        why = "; ".join(
            f"{a} -> {b}: " + ", ".join(f"{m} imports {t}" for m, t in edges[a][b][:3])
            for a, b in itertools.pairwise(path)
        )
        out.append(f"package-level import cycle {' -> '.join(path)} ({why})")
    return out


def test_detector_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_package_detector_names_a_cycle_no_module_closes():
    # reports.a -> sweeps.b and sweeps.c -> reports.d: no module cycle, but the apps import each other
    graph = {"reports.a": {"sweeps.b"}, "sweeps.b": set(), "sweeps.c": {"reports.d"}, "reports.d": set()}
    assert cycles(graph) == []
    assert describe_package_cycles(package_edges(graph)) == [
        "package-level import cycle reports -> sweeps -> reports "
        "(reports -> sweeps: reports.a imports sweeps.b; sweeps -> reports: sweeps.c imports reports.d)"
    ]
    # estimator's stages count separately; the foundations' modules each on their own
    assert package_of("estimator.layout.steptime.step") == "estimator.layout"
    assert package_of("estimator.errors") == "estimator.errors"
    assert package_of("sweeps.api.views") == "sweeps"
    assert (
        describe_package_cycles(
            package_edges({"estimator.plan.x": {"estimator.layout.y"}, "estimator.layout.y": set()})
        )
        == []
    )


def test_every_package_is_walked():
    assert {"estimator", "config", "api", "reports", "sweeps", "teams", "integrations"} <= set(PACKAGES)


def test_graph_sees_function_level_and_relative_imports():
    graph = import_graph()
    assert "estimator.contract.resolve" in graph["estimator.plan.compose"]  # module level, relative
    assert "estimator.plan.compose" in graph["estimator.__main__"]  # inside a function


# Cycles that exist today; the list may only shrink (the budget sizing's cycle went when the
# pricing moved below plan, into estimator.money.pricing).
KNOWN_CYCLES: list[set[str]] = []


def test_no_new_import_cycles():
    """Every cycle is one of KNOWN_CYCLES (or part of one); any other fails."""
    new = [c for c in cycles(import_graph()) if not any(set(c) <= known for known in KNOWN_CYCLES)]
    assert new == []


def test_no_import_cycles_at_all():
    assert cycles(import_graph()) == []


def test_no_package_level_cycles():
    """Web apps, and estimator's stage packages, import each other one way only."""
    found = describe_package_cycles(package_edges(import_graph()))
    assert not found, "\n".join(found)
