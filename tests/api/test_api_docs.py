"""docs/api.md documents every public name: each package's `__all__`, each listed module's public
definitions, and the public methods of `ReadApi`, `WriteApi` and `Session` (in their sections)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"

#: Packages: every name in `__all__` must be documented.
PACKAGES = [
    "extension_registry",
    "host",
    "memgraph_plugin",
    "memgraph_plugin.storage",
    "memgraph_plugin.embedding",
    "memgraph_plugin.recall",
]
#: Modules: `__all__`, or (without one) the classes and functions defined in the module.
MODULES = [
    "memgraph_plugin.api.read",
    "memgraph_plugin.api.write",
    "memgraph_plugin.api.session",
    "memgraph_plugin.api.external",
    "memgraph_plugin.engine.model.views",
    "memgraph_plugin.engine.model.results",
    "memgraph_plugin.errors",
    "memgraph_plugin.engine.model.converter",
    "memgraph_plugin.engine.write.batch",
    "memgraph_plugin.engine.write.ops",
    "memgraph_plugin.engine.write.rollups",
    "memgraph_plugin.engine.write.curation",
    "memgraph_plugin.engine.read.pinned",
    "memgraph_plugin.api.injection",
    "memgraph_plugin.service",
    "memgraph_plugin.plugin",
    "memgraph_plugin.hookspecs",
    "memgraph_plugin.engine.graph.store",
    "memgraph_plugin.engine.model.json_records",
    "memgraph_plugin.engine.model.schema",
    "memgraph_plugin.engine.model.models",
    "memgraph_plugin.engine.model.frozen",
    "memgraph_plugin.engine.read.projection",
    "memgraph_plugin.engine.read.edge_summaries",
    "memgraph_plugin.engine.keyword.keyword_index",
    "memgraph_plugin.engine.index.name_index",
]
#: Classes whose public methods must appear in the doc section headed by the class name.
CLASSES = [
    ("memgraph_plugin.api.read", "ReadApi"),
    ("memgraph_plugin.api.write", "WriteApi"),
    ("memgraph_plugin.api.session", "Session"),
]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE = re.compile(r"`([^`\n]+)`")


def documented_identifiers(text: str) -> set[str]:
    """Every identifier inside a backticked span."""
    found: set[str] = set()
    for span in _CODE.findall(text):
        found.update(_IDENT.findall(span))
    return found


def section(text: str, title: str) -> str | None:
    """The text under the heading that names `title` in backticks, up to the next heading of the
    same or a higher level."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"(#+)\s", line)
        if match and f"`{title}`" in line:
            level = len(match.group(1))
            body = []
            for follow in lines[i + 1 :]:
                other = re.match(r"(#+)\s", follow)
                if other and len(other.group(1)) <= level:
                    break
                body.append(follow)
            return "\n".join(body)
    return None


def public_names(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", None) == module_name
    ]


def public_methods(cls: type) -> list[str]:
    return [
        name
        for name, value in vars(cls).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or isinstance(value, (property, classmethod, staticmethod)))
    ]


@pytest.fixture(scope="module")
def doc_text() -> str:
    assert DOC.is_file(), f"{DOC} is missing"
    return DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize("module_name", PACKAGES + MODULES)
def test_every_public_name_is_documented(doc_text, module_name):
    known = documented_identifiers(doc_text)
    missing = [name for name in public_names(module_name) if name not in known]
    assert not missing, (
        f"docs/api.md does not document {', '.join(f'{module_name}.{n}' for n in missing)} "
        "(write each name in backticks, e.g. in the module's table)"
    )


@pytest.mark.parametrize(("module_name", "class_name"), CLASSES)
def test_every_public_method_is_documented_in_its_class_section(doc_text, module_name, class_name):
    body = section(doc_text, class_name)
    assert body is not None, f"docs/api.md has no heading naming `{class_name}`"
    known = documented_identifiers(body)
    cls = getattr(importlib.import_module(module_name), class_name)
    missing = [name for name in public_methods(cls) if name not in known]
    assert not missing, (
        f"docs/api.md: the `{class_name}` section does not document "
        f"{', '.join(f'{class_name}.{n}' for n in missing)}"
    )


def test_the_checker_notices_a_missing_name():
    text = "## `Thing`\n\n| `present(x)` | y |\n\n## `Other`\n\n`absent_here`\n"
    assert "present" in documented_identifiers(section(text, "Thing"))
    assert "absent_here" not in documented_identifiers(section(text, "Thing"))
    assert section(text, "Nope") is None
