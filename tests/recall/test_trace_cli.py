"""``memgraph-host trace CHAT``: the last traces of a chat, as a table or JSON lines."""

from __future__ import annotations

import asyncio
import json

from host.cli.cli import main
from memgraph_plugin.recall import Inclusion
from memgraph_plugin.turn import pipeline_for
from tests.story_hosts import CHAT, fixture_story, make_host


async def _three_recalls(tmp_path):
    host, _ = await make_host(tmp_path)
    pipeline = pipeline_for(host)
    for turn in fixture_story().turns[:3]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.recall(CHAT)  # the next answer's recall ...
    await pipeline.recall(CHAT)  # ... and a swipe of it
    await host.stop()
    return host.data_dir


def test_trace_table_and_json(tmp_path, capsys):
    data = asyncio.run(_three_recalls(tmp_path))  # the CLI runs its own event loop
    assert main(["--data-dir", str(data), "trace", CHAT, "--last", "2"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["seq", "router", "mode"]
    assert len(table) == 3 and table[1].startswith("4 ") and "(reused)" in table[2]
    assert main(["--data-dir", str(data), "trace", CHAT, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["seq"] for r in rows] == [1, 2, 3, 4, 4]
    assert [r["reused"] for r in rows] == [False, False, False, False, True]
    assert all(r["mode"] == "canary" and r["router"] == "builtin-hybrid" for r in rows)
    # the table says why each node is in: seed/baseline score, or seed, relation and hops
    assert main(["--data-dir", str(data), "trace", CHAT]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert any(r["selected"] for r in rows)
    for row, line in zip(rows, lines, strict=True):
        for picked in row["selected"]:
            assert f"{picked['id']} {Inclusion(**picked).describe()}" in line
        assert row["query"][:20] in line


def test_trace_unknown_chat_and_bad_last(tmp_path, capsys):
    data = asyncio.run(_three_recalls(tmp_path))
    assert main(["--data-dir", str(data), "trace", "nobody"]) == 1
    assert "unknown chat 'nobody'" in capsys.readouterr().err
    assert main(["--data-dir", str(data), "trace", CHAT, "--last", "0"]) == 2


def test_trace_of_a_known_chat_with_no_recall_is_an_empty_listing(tmp_path, capsys):
    """An empty listing is not an error (docs/cli.md): exit 0, and it says why it is empty."""
    from host import Host

    data = tmp_path / "d"
    Host(data_dir=data, entry_points=False).chat("quiet").add_message("user", "hello")
    assert main(["--data-dir", str(data), "trace", "quiet"]) == 0
    assert "no recall traces for chat 'quiet'" in capsys.readouterr().err
