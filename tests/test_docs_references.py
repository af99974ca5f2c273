"""Every module, name and source file the docs point at exists where they say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.dotted_names import resolve_dotted

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
DOTTED = re.compile(r"\b(?:memgraph_plugin|extension_registry)(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
PACKAGES = "memgraph_plugin|host|extension_registry|sample_plugins"
SOURCE_PATH = re.compile(rf"(?<![\w/])(?:{PACKAGES})/[\w/]+\.py\b")  # not tests/host/...
ROOMS = "engine|api|storage|embedding|recall|extraction|llm|ingest|web|tools|proxy|turn|hosts"
ROOM_PATH = re.compile(rf"(?<![\w/])(?:{ROOMS})/[\w/]+\.py\b")  # relative to memgraph_plugin/


def _resolves(dotted: str) -> bool:
    """A module, or a name one of its modules defines (``pkg.mod.Name``)."""
    try:
        resolve_dotted(dotted)
    except (ImportError, AttributeError):
        return False
    return True


def _references(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    found = set()
    for doc in DOCS:
        for match in pattern.finditer(doc.read_text(encoding="utf-8")):
            found.add((doc.name, match.group(0)))
    return sorted(found)


@pytest.mark.parametrize(("doc", "dotted"), _references(DOTTED))
def test_a_dotted_name_in_the_docs_imports(doc: str, dotted: str) -> None:
    assert _resolves(dotted), f"{doc}: {dotted} does not import"


@pytest.mark.parametrize(("doc", "path"), _references(SOURCE_PATH))
def test_a_source_file_in_the_docs_exists(doc: str, path: str) -> None:
    assert (ROOT / path).is_file(), f"{doc}: {path} does not exist"


@pytest.mark.parametrize(("doc", "path"), _references(ROOM_PATH))
def test_a_memory_graph_file_in_the_docs_exists(doc: str, path: str) -> None:
    assert (ROOT / "memgraph_plugin" / path).is_file(), f"{doc}: memgraph_plugin/{path} is gone"


def test_the_docs_do_point_at_modules() -> None:
    assert len(_references(DOTTED)) > 20 and len(_references(SOURCE_PATH)) > 10
