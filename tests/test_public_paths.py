"""Every import path the contract (`docs/contract.md`) and `docs/api.md` name imports: each is a
plain module (or a package's public name) at that path."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.dotted_names import resolve_dotted

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "docs" / "contract.md", ROOT / "docs" / "api.md")
PACKAGES = ("memgraph_plugin", "host", "extension_registry", "sample_plugins")
_PACKAGE = "(?:" + "|".join(PACKAGES) + ")"
_FROM = re.compile(r"^\s*from (" + _PACKAGE + r"[\w.]*) import (\([^)]*\)|[\w, ]+)", re.M)
_DOTTED = re.compile(r"`(" + _PACKAGE + r"(?:\.\w+)+)")


def _texts() -> list[str]:
    """The docs' texts (a missing one fails `test_the_docs_are_there_and_name_paths`, not the
    collection of this module)."""
    return [doc.read_text("utf-8") for doc in DOCS if doc.is_file()]


def _named_imports() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for text in _texts():
        for module, names in _FROM.findall(text):
            for line in names.strip("()").splitlines():
                for name in line.split("#")[0].split(","):
                    if name.strip():
                        found.add((module, name.strip().split(" as ")[0]))
    return found


def _named_dotted() -> set[str]:
    return {m for text in _texts() for m in _DOTTED.findall(text)}


def test_the_docs_are_there_and_name_paths() -> None:
    assert all(doc.is_file() for doc in DOCS), DOCS
    assert ("memgraph_plugin.external_api", "get_currently_injected_node_ids") in _named_imports()
    assert len(_named_dotted()) > 20


@pytest.mark.parametrize(("module", "name"), sorted(_named_imports()))
def test_every_named_import_works(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name), f"from {module} import {name}"


@pytest.mark.parametrize("dotted", sorted(_named_dotted()))
def test_every_named_module_path_resolves(dotted: str) -> None:
    # `host.anotify`, `host.registry.get`: a `Host` instance's attribute, as the docs use `host`
    from host import Host

    first = dotted.split(".")[1]
    if dotted.startswith("host.") and (hasattr(Host, first) or first == "registry"):
        return
    resolve_dotted(dotted)


def _packages_with_all() -> list[str]:
    """Every package of the product whose ``__init__`` states an ``__all__``."""
    roots = ("memgraph_plugin", "host", "extension_registry", "sample_plugins")
    return sorted(
        ".".join(init.parent.relative_to(ROOT).parts)
        for root in roots
        for init in (ROOT / root).rglob("__init__.py")
        if "__all__" in init.read_text("utf-8")
    )


@pytest.mark.parametrize("package", _packages_with_all())
def test_every_name_a_package_exports_resolves(package: str) -> None:
    # a lazily exported name points at its module by a string, which a move can leave stale
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names what it cannot give: {missing}"
