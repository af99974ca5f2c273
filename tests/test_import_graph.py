"""No import cycles in the project, and sample plugins that use only public names (issue 13).

Every import counts, deferred and ``TYPE_CHECKING`` ones included: a cycle hidden behind a
function-level import is still two modules that cannot be understood one without the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .import_graph import cycles, import_graph, package_graph

ROOT = Path(__file__).resolve().parent.parent

#: Module names several packages use, each for the same role in its own package. Any other name
#: must be unique across host/ and memgraph_plugin/, so a name says what a module holds.
ROLE_NAMES = {
    "__init__": "a package's public names",
    "commands": "the memgraph-host sub-commands of a package (host/: the `Command` type itself)",
    "errors": "the exception types a package raises",
    "hookspecs": "the hook specs a package adds to the host",
    "plugin": "the pluggy plugin object of a package (its hook implementations)",
    "router": "an implementation of the `memgraph_route` hook (built-in hybrid, or the LLM's)",
    "settings": "a package's settings read from the host settings (host/: loading them)",
    "trace": "the JSON-lines trace files a package writes (recall traces, LLM call traces)",
}


@pytest.mark.slow
def test_no_module_imports_itself_back() -> None:
    assert cycles(import_graph(ROOT)) == []


@pytest.mark.slow
def test_no_cycles_between_subpackages() -> None:
    graph = import_graph(ROOT)
    assert cycles(package_graph(graph)) == []
    assert cycles(package_graph(graph, depth=3)) == []


def test_a_module_name_means_one_thing() -> None:
    seen: dict[str, list[str]] = {}
    for package in ("host", "memgraph_plugin"):
        for path in sorted((ROOT / package).rglob("*.py")):
            seen.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert {name: paths for name, paths in shared.items() if name not in ROLE_NAMES} == {}


@pytest.mark.slow
def test_sample_plugins_use_no_memory_graph_internals() -> None:
    graph = import_graph(ROOT)
    reaching_in = {
        source: sorted(t for t in targets if t.startswith("memgraph_plugin."))
        for source, targets in graph.items()
        if source.startswith("sample_plugins")
    }
    assert {s: t for s, t in reaching_in.items() if t} == {}


def test_the_checker_sees_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\n"
    )
    (pkg / "b.py").write_text("def f():\n    from .c import g\n")
    (pkg / "c.py").write_text("from . import a\n")
    (pkg / "d.py").write_text("import pkg.a\n")
    assert cycles(import_graph(tmp_path, ["pkg"])) == [["pkg.a", "pkg.b", "pkg.c"]]


#: Modules still over the size limit, to be cut apart (issue 13). The list may only shrink.
PENDING_SPLITS: set[str] = set()
MAX_LINES = 500


def test_a_long_module_says_why_at_its_top() -> None:
    """A module over `MAX_LINES` lines carries a "Why ..." paragraph in its docstring."""
    too_long = set()
    for package in ("host", "memgraph_plugin", "sample_plugins", "extension_registry"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if text.count("\n") <= MAX_LINES:
                continue
            doc = ast.get_docstring(ast.parse(text)) or ""
            if not any(line.startswith("Why ") for line in doc.splitlines()):
                too_long.add(str(path.relative_to(ROOT)))
    assert too_long == PENDING_SPLITS


# -- the direction between rooms (issue 25) ---------------------------------------------------

#: room -> the modules (and their submodules) it must never import, deferred or not.
FORBIDDEN = {
    "memgraph_plugin.storage": (
        "host",
        "memgraph_plugin.api",
        "memgraph_plugin.service",
        "memgraph_plugin.chats",
        "memgraph_plugin.turn",
        "memgraph_plugin.recall",
        "memgraph_plugin.plugin",
    ),
    "memgraph_plugin.chats": (
        "memgraph_plugin.api",
        "memgraph_plugin.service",
        "memgraph_plugin.turn",
        "memgraph_plugin.recall",
    ),
}


def _inside(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _imports_of_room(room: str) -> dict[str, set[str]]:
    graph = import_graph(ROOT)
    return {source: targets for source, targets in graph.items() if _inside(source, room)}


def test_rooms_import_only_downwards() -> None:
    climbing = {
        source: sorted(t for t in targets if any(_inside(t, f) for f in forbidden))
        for room, forbidden in FORBIDDEN.items()
        for source, targets in _imports_of_room(room).items()
    }
    assert {source: targets for source, targets in climbing.items() if targets} == {}


def test_engine_imports_nothing_of_the_plugin_but_its_errors() -> None:
    outside = {
        source: sorted(
            t
            for t in targets
            if _inside(t, "memgraph_plugin")
            and not _inside(t, "memgraph_plugin.engine")
            and t != "memgraph_plugin.errors"
        )
        for source, targets in _imports_of_room("memgraph_plugin.engine").items()
    }
    assert {source: targets for source, targets in outside.items() if targets} == {}


def test_the_direction_checks_see_a_climbing_import(tmp_path: Path) -> None:
    """The helpers the two tests above use find a deferred import that climbs."""
    for package in ("memgraph_plugin", "memgraph_plugin/storage", "host"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "host" / "chats.py").write_text("")
    (tmp_path / "memgraph_plugin" / "storage" / "journal.py").write_text(
        "def f():\n    from host.chats import x\n"
    )
    graph = import_graph(tmp_path, ["host", "memgraph_plugin"])
    assert graph["memgraph_plugin.storage.journal"] == {"host.chats"}


# -- no function looks the service up from the host --------------------------------------------

#: The plugin's wiring (it makes the service and hands it down) and the service's own module.
SERVICE_LOOKUP_ALLOWED = {"memgraph_plugin/plugin.py", "memgraph_plugin/service.py"}
#: Modules that find the memory graph by its registry name, the way any plugin does, and why.
REGISTRY_LOOKUP_ALLOWED = {
    "memgraph_plugin/plugin.py": "publishes and unpublishes the service",
    "memgraph_plugin/service.py": "memory_graph_for, for code outside the plugin",
    "memgraph_plugin/api/injection.py": "the legacy functions are handed only a context",
    "memgraph_plugin/extraction/plugin.py": "registered by the host apart from the plugin",
    "memgraph_plugin/tools/demo.py": "an application over a host of its own, as API.md shows",
}
#: Names the memory graph's registry name goes by.
_PUBLISHED_NAMES = {"SERVICE_NAME", "PUBLISHED_AS", "MEMORY_GRAPH"}


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _names_the_graph(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value == "memory-graph"
    if isinstance(node, ast.Name):
        return node.id in _PUBLISHED_NAMES
    return isinstance(node, ast.Attribute) and node.attr in _PUBLISHED_NAMES


def service_lookups(root: Path) -> tuple[set[str], set[str]]:
    """(``memory_graph_for(...)`` calls, registry look-ups of the memory graph by name), each as
    ``path:line`` under ``root/memgraph_plugin``."""
    direct: set[str] = set()
    by_name: set[str] = set()
    for path in sorted((root / "memgraph_plugin").rglob("*.py")):
        where = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text("utf-8"), where)):
            if not isinstance(node, ast.Call):
                continue
            name = _called_name(node)
            if name == "memory_graph_for":
                direct.add(f"{where}:{node.lineno}")
            elif name in ("get", "get_extension_api") and node.args[:1]:
                by_name.update(
                    f"{where}:{node.lineno}" for arg in node.args[:1] if _names_the_graph(arg)
                )
    return direct, by_name


def test_no_function_looks_the_service_up_from_the_host() -> None:
    direct, by_name = service_lookups(ROOT)
    assert {w for w in direct if w.rpartition(":")[0] not in SERVICE_LOOKUP_ALLOWED} == set()
    assert {w for w in by_name if w.rpartition(":")[0] not in REGISTRY_LOOKUP_ALLOWED} == set()


def test_the_lookup_check_finds_both_kinds(tmp_path: Path) -> None:
    (tmp_path / "memgraph_plugin" / "ingest").mkdir(parents=True)
    (tmp_path / "memgraph_plugin" / "ingest" / "run.py").write_text(
        "def f(host):\n"
        "    a = memory_graph_for(host)\n"
        "    b = host.registry.get('memory-graph')\n"
        "    c = host.get_extension_api(SERVICE_NAME)\n"
        "    d = host.registry.get('curator')\n"
    )
    direct, by_name = service_lookups(tmp_path)
    assert direct == {"memgraph_plugin/ingest/run.py:2"}
    assert by_name == {"memgraph_plugin/ingest/run.py:3", "memgraph_plugin/ingest/run.py:4"}
