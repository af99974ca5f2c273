"""Every Python block of README.md and docs/*.md runs, so the docs' code cannot rot.

Each block runs on its own (a reader may paste any one alone), in an empty temporary folder as
working directory, offline. Marks in an HTML comment on the line before a block:

- ``<!-- run with: host -->``: a fragment run inside a started host (``host``: hashing
  embeddings, no entry points; ``ctx``: its context of chat ``chat-1``), top-level ``await``
  allowed;
- ``<!-- not run: REASON -->``: a block that cannot run (signatures, not code); the reason is
  required, and shows in the test's id.

Two pages are run by tests of their own, which write their plugin files first (`RUN_ELSEWHERE`).
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

import pytest

from host import Host

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: page -> the test that runs its blocks (plugin files it saves, then the code using them)
RUN_ELSEWHERE = {
    "docs/writing-a-plugin.md": "tests/test_docs_plugin_tutorial.py",
    "docs/hot-reload.md": "tests/host/reload/test_docs_hot_reload.py",
}
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
MARK = re.compile(r"<!--\s*(run with|not run):\s*(.*?)\s*-->\s*$")


def _blocks() -> list[tuple[str, str | None, str | None, str]]:
    """(page:line, mark kind, mark text, code) of every python block outside `RUN_ELSEWHERE`."""
    found = []
    for doc in DOCS:
        page = str(doc.relative_to(ROOT))
        if page in RUN_ELSEWHERE:
            continue
        text = doc.read_text("utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").rpartition("\n")[2]
            mark = MARK.search(before)
            line = text.count("\n", 0, match.start()) + 1
            kind, note = (mark.group(1), mark.group(2)) if mark else (None, None)
            found.append((f"{page}:{line}", kind, note, match.group(1)))
    return found


BLOCKS = _blocks()
RUN = [(where, kind, code) for where, kind, _note, code in BLOCKS if kind != "not run"]
NOT_RUN = [(where, note) for where, kind, note, _code in BLOCKS if kind == "not run"]


def test_the_docs_have_blocks_and_the_other_runners_exist() -> None:
    assert len(RUN) >= 8 and {kind for _, kind, _ in RUN} == {None, "run with"}
    for page, test in RUN_ELSEWHERE.items():
        assert Path(page).name in (ROOT / test).read_text("utf-8"), (page, test)
    assert {note for _, kind, note, _ in BLOCKS if kind == "run with"} == {"host"}


@pytest.mark.parametrize(
    ("where", "reason"), NOT_RUN, ids=[f"{w} (not run: {r})" for w, r in NOT_RUN]
)
def test_a_block_not_run_says_why(where: str, reason: str) -> None:
    assert len(reason.split()) >= 2, f"{where}: say why the block cannot run"


async def _run(where: str, code: str, namespace: dict[str, object]) -> None:
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    result = eval(compile(code, where, "exec", flags=flags), namespace)  # noqa: S307
    if asyncio.iscoroutine(result):
        await result


@pytest.mark.parametrize(("where", "kind", "code"), RUN, ids=[w for w, _, _ in RUN])
async def test_a_block_runs(
    where: str, kind: str | None, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_block"}
    if kind is None:
        if "asyncio.run(" in code:  # a script of its own: run off this test's event loop
            await asyncio.to_thread(exec, compile(code, where, "exec"), namespace)
        else:
            await _run(where, code, namespace)
        return
    host = Host(
        data_dir=tmp_path / "data", settings={"embedding_profile": "hashing"}, entry_points=False
    )
    await host.start()
    try:
        namespace.update(host=host, ctx=host.get_context("chat-1"))
        await _run(where, code, namespace)
    finally:
        await host.stop()
