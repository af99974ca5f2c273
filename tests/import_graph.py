"""The project's import graph, read with `ast`: every import counts (top-level, deferred inside a
function, or under ``TYPE_CHECKING``), resolved to the project module it names."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

PACKAGES = ("extension_registry", "host", "memgraph_plugin", "sample_plugins")


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file of ``packages`` under ``root``."""
    return {
        module_name(root, path): path
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
    }


def _known(name: str, known: dict[str, Path]) -> str | None:
    """``name`` or its nearest enclosing project module (``a.b.c`` -> ``a.b`` -> ``a``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports anywhere in its source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(t for a in node.names if (t := _known(a.name, known)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                hit = submodule if submodule in known else _known(target, known)
                if hit:
                    found.add(hit)
    found.discard(name)
    return found


def import_graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    known = modules(root, packages)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (each sorted), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative Tarjan: no recursion limit on deep graphs
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def package_graph(graph: dict[str, set[str]], depth: int = 2) -> dict[str, set[str]]:
    """The same graph with modules collapsed to their first ``depth`` name parts."""
    collapsed: dict[str, set[str]] = {}
    for source, targets in graph.items():
        unit = ".".join(source.split(".")[:depth])
        edges = collapsed.setdefault(unit, set())
        edges.update(t for t in (".".join(t.split(".")[:depth]) for t in targets) if t != unit)
    return collapsed
