"""The demo's numbers match its picture, and a re-run adds no duplicate trace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memgraph_plugin.recall.trace import TRACE_DIR, TraceLog
from memgraph_plugin.tools.demo import CHAT_ID, run_demo
from tests.story_hosts import FIXTURE_STORY as FIXTURE


async def test_summary_edge_counts_match_the_picture_and_reruns_add_no_trace(tmp_path) -> None:
    data = tmp_path / "demo-data"
    lines: list[str] = []
    summary = await run_demo(data, story_path=FIXTURE, out=lines.append)
    page = summary.picture.read_text(encoding="utf-8")
    drawn_relations = page.count('class="rel"')
    drawn_contains = page.count('class="contains"')
    assert summary.edges == drawn_relations
    assert summary.containment_edges == drawn_contains
    said = re.search(r"(\d+) relation edges", "\n".join(lines))
    assert said is not None and int(said.group(1)) == drawn_relations
    stated = re.search(r"(\d+)\s+relation edges", page)
    assert stated is not None and int(stated.group(1)) == drawn_relations

    log = TraceLog(data / TRACE_DIR)
    before = [(t.seq, t.anchor, t.query) for t in log.read(CHAT_ID)]
    await run_demo(data, story_path=FIXTURE, out=lambda s: None)  # story complete: show state
    await run_demo(data, story_path=FIXTURE, out=lambda s: None)
    after = [(t.seq, t.anchor, t.query) for t in log.read(CHAT_ID)]
    assert after == before  # nothing new happened, so no trace was added


@pytest.mark.slow
async def test_readme_storage_examples_work_on_the_demo_data(tmp_path, monkeypatch, capsys):
    """The README's storage commands name the demo's data dir and chat, and work."""
    import shlex

    from host.cli.cli import main

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Storage", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert len(commands) >= 4
    monkeypatch.chdir(tmp_path)
    await run_demo(tmp_path / "demo-data", story_path=FIXTURE, out=lambda s: None)
    capsys.readouterr()
    for command in commands:
        argv = shlex.split(command)
        assert argv[:3] == ["memgraph-host", "--data-dir", "demo-data"], command
        target = None
        if ">" in argv:
            target = tmp_path / argv[argv.index(">") + 1]
            argv = argv[: argv.index(">")]
        code = await _in_thread(main, argv[1:])
        out = capsys.readouterr().out
        assert code == 0, command
        if target is not None:
            target.write_text(out, encoding="utf-8")
        if argv[3] == "history":
            assert len(out.splitlines()) > 2  # the demo's commits, not an empty chat


async def _in_thread(function, *args):
    import asyncio

    return await asyncio.to_thread(function, *args)
