"""Runs the Python blocks of docs/writing-a-plugin.md, so the tutorial cannot rot.

A block whose info string has ``file=PATH`` is saved there (and compiled); every other python
block is executed, in order, each in a namespace of its own (a reader may paste any step alone: it
imports what it uses), with an empty folder as working directory.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "writing-a-plugin.md"
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[tuple[str | None, str]]:
    """``(file path or None, code)`` for each python block, in document order."""
    blocks = []
    for match in FENCE.finditer(text):
        info = match.group(1)
        target = re.search(r"file=(\S+)", info)
        blocks.append((target.group(1) if target else None, match.group(2)))
    return blocks


def test_the_tutorial_has_plugin_files_and_code() -> None:
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len([b for b in blocks if b[0]]) >= 2
    assert len([b for b in blocks if b[0] is None]) >= 2


def test_tutorial_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    modules_before = set(sys.modules)
    try:
        for number, (target, code) in enumerate(python_blocks(DOC.read_text("utf-8")), 1):
            where = f"{DOC.name} python block {number}"
            if target is not None:
                path = tmp_path / target
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(code, encoding="utf-8")
                compile(code, f"{where} ({target})", "exec")
                continue
            namespace: dict[str, object] = {"__name__": "tutorial"}  # a step on its own
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the docs are the test
    finally:
        for name in set(sys.modules) - modules_before:
            if name.startswith("_memgraph_host_plugin_"):
                del sys.modules[name]
    assert (tmp_path / "tutorial-data" / "chats").is_dir()
