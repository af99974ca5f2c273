"""Runs the author's loop of docs/hot-reload.md: its plugin file, then its script, with a real
watcher on a temporary folder, so the page cannot rot."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from host.plugins.fresh_import import FRESH_PREFIX

DOC = Path(__file__).resolve().parents[3] / "docs" / "hot-reload.md"
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def python_blocks() -> list[tuple[str | None, str]]:
    """``(file path or None, code)`` for each python block of the page, in order."""
    blocks = []
    for match in FENCE.finditer(DOC.read_text(encoding="utf-8")):
        target = re.search(r"file=(\S+)", match.group(1))
        blocks.append((target.group(1) if target else None, match.group(2)))
    return blocks


def test_the_page_has_a_plugin_file_and_a_script() -> None:
    blocks = python_blocks()
    assert [target for target, _code in blocks if target] == ["my_plugins/greeter.py"]
    assert len([code for target, code in blocks if target is None]) == 1


def test_the_authors_loop_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    modules_before = set(sys.modules)
    try:
        for number, (target, code) in enumerate(python_blocks(), 1):
            where = f"{DOC.name} python block {number}"
            if target is not None:
                (tmp_path / target).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / target).write_text(code, encoding="utf-8")
                continue
            exec(compile(code, where, "exec"), {"__name__": "hot_reload_doc"})  # noqa: S102
    finally:
        for name in set(sys.modules) - modules_before:
            if name.startswith(FRESH_PREFIX):
                del sys.modules[name]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "hello, Ada (v2, greeting 1)"
    assert lines[1] == "hello, Ada (v3, greeting 2)"  # new code, and the state it was handed
    assert re.fullmatch(r"reloaded greeter in \d+\.\d ms", lines[2])
    assert "action='reloaded'" in lines[3] and "plugin='greeter'" in lines[3]
