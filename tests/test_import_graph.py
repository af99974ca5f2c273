"""The import rules between rooms (import-linter contracts in pyproject.toml, run here), module
names that mean one thing, long modules that say why, and no function looking the service up.

Every import counts for the contracts, deferred and ``TYPE_CHECKING`` ones included: a cycle
hidden behind a function-level import is still two modules that cannot be understood one without
the other.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

#: Module names several packages use, each for the same role in its own package. Any other name
#: must be unique across host/ and memgraph_plugin/, so a name says what a module holds.
ROLE_NAMES = {
    "__init__": "a package's public names",
    "errors": "the exception types a package raises",
    "hookspecs": "the hook specs a package adds to the host",
    "plugin": "the pluggy plugin object of a package (its hook implementations)",
    "settings": "a package's settings read from the host settings (host/: loading them)",
    "trace": "the JSON-lines trace files a package writes (recall traces, LLM call traces)",
}


def _lint_imports(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`lint-imports` run in ``cwd`` (no cache files left behind): its output; fails the test
    if it did not run to a verdict (0 kept, 1 broken)."""
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout + ("" if done.returncode == 0 else "\nBROKEN")


def test_the_import_contracts_are_kept() -> None:
    """No cycles, storage and loaded chats below the rooms built on them, the engine at the
    bottom, sample plugins on public names (the contracts in pyproject.toml)."""
    output = _lint_imports(ROOT)
    assert "BROKEN" not in output, output
    assert "0 broken" in output, output


def test_the_contracts_see_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    """A cycle through a ``TYPE_CHECKING`` import and a function-level one, and a deferred
    import against a forbidden direction, both break their contracts."""
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\n",
        "pkg/b.py": "def f():\n    from .c import g\n",
        "pkg/c.py": "from . import a\n",
        "pkg/low/__init__.py": "",
        "pkg/low/journal.py": "def f():\n    from pkg.high import x\n",
        "pkg/high.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / ".importlinter").write_text(
        textwrap.dedent(
            """\
            [importlinter]
            root_package = pkg

            [importlinter:contract:cycles]
            name = cycles
            type = acyclic_siblings
            ancestors = pkg

            [importlinter:contract:direction]
            name = direction
            type = forbidden
            source_modules = pkg.low
            forbidden_modules = pkg.high
            allow_indirect_imports = true
            """
        )
    )
    output = _lint_imports(tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert "cycles BROKEN" in output and "direction BROKEN" in output, output
    assert "pkg.low.journal -> pkg.high" in output, output


def test_a_module_name_means_one_thing() -> None:
    seen: dict[str, list[str]] = {}
    for package in ("host", "memgraph_plugin"):
        for path in sorted((ROOT / package).rglob("*.py")):
            seen.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert {name: paths for name, paths in shared.items() if name not in ROLE_NAMES} == {}


#: Modules still over the size limit, to be cut apart. The list may only shrink.
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
