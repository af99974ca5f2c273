"""A chat carries its memory into a new one: `MemoryGraph.fork` and `memgraph-host
fork`, on a real LanceDB on disk, with turns after the fork that never roll it back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from host import Host
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.turn import pipeline_for

STORY = [
    ("user", "Mara met Juno Kade at the Lantern Market in Vell."),
    ("assistant", "Juno Kade sold Mara a brass compass at the Lantern Market."),
    ("user", "Then Mara sailed with Captain Orrin Vale to Skyharbor."),
    ("assistant", "Captain Orrin Vale docked the ship at Skyharbor at dawn."),
    ("user", "At Skyharbor, Mara found the Ember Archive."),
    ("assistant", "The Ember Archive held the map Juno Kade had drawn."),
]


def _summaries(store) -> set[str]:
    return {str(n.fields.get("summary")) for n in store.iter_nodes()}


async def test_api_fork_then_turns_keep_the_forked_graph(tmp_path) -> None:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        pipeline = pipeline_for(host)
        for role, text in STORY:
            add = pipeline.add_user_message if role == "user" else pipeline.add_assistant_message
            await add("src", text)
        api = host.registry.get("memory-graph")
        src_store = (await pipeline.open_session("src")).store
        src_nodes = set(src_store.node_ids())
        src_seq = max(m.seq for m in host.chat("src").messages)

        commit = await api.fork("src", "dst")
        assert commit.kind == "fork" and commit.persisted
        assert set(commit.node_ids) == src_nodes
        history = await api.history("dst")
        assert [r.kind for r in history] == ["fork"]
        assert history[0].note == f"forked from src at seq {src_seq}"
        assert host.chat("dst").messages == ()  # no messages carried over
        forked = (await pipeline.open_session("dst")).store
        assert set(forked.node_ids()) == src_nodes
        assert {e.key for e in forked.iter_edges()} == {e.key for e in src_store.iter_edges()}

        # recall in the new chat finds the old chat's people, places and events
        turn = await pipeline.run_turn("dst", "Where did Mara meet Juno Kade?", "In Vell.")
        assert turn.recall is not None
        injected = " ".join(f"{v.title} {v.fields}" for v in turn.recall.injected)
        assert "Juno Kade" in injected and "Lantern Market" in injected
        await pipeline.run_turn("dst", "And what of Captain Orrin Vale?", "He left Skyharbor.")
        kinds = [r.kind for r in await api.history("dst")]
        assert kinds[0] == "fork" and "rollback" not in kinds and len(kinds) >= 3
        store = (await pipeline.open_session("dst")).store
        assert src_nodes <= set(store.node_ids())
        assert {text for _, text in STORY} <= _summaries(store)
        assert "He left Skyharbor." in _summaries(store)

        # replacing the newest message undoes that message only, never the fork
        host.chat("dst").truncate(len(host.chat("dst").messages) - 2)
        await pipeline.add_assistant_message("dst", "He sailed to Qel.")
        store = (await pipeline.open_session("dst")).store
        assert src_nodes <= set(store.node_ids())
        assert "He sailed to Qel." in _summaries(store)
        assert "He left Skyharbor." not in _summaries(store)

        # the source chat is untouched
        assert set((await pipeline.open_session("src")).store.node_ids()) == src_nodes

        # --upto: the source's graph as of an earlier message
        early = await api.fork("src", "early", upto=2)
        assert (await api.history("early"))[0].note == "forked from src at seq 2"
        early_store = (await pipeline.open_session("early")).store
        assert STORY[0][1] in _summaries(early_store)
        assert STORY[-1][1] not in _summaries(early_store)
        assert set(early.node_ids) < src_nodes
    finally:
        await host.stop()


async def test_api_fork_refuses_bad_arguments_and_writes_nothing(tmp_path) -> None:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        pipeline = pipeline_for(host)
        await pipeline.run_turn("src", STORY[0][1], STORY[1][1])
        await pipeline.run_turn("busy", "Hello there.", "Hello.")
        api = host.registry.get("memory-graph")
        cases = [
            (("src", "src"), {}, "into itself"),
            (("nope", "dst"), {}, "chat 'nope' has no graph"),
            (("src", "busy"), {}, "chat 'busy' already has a graph"),
            (("src", "dst"), {"upto": 99}, "seq 99 is past chat 'src'"),
            (("src", "dst"), {"upto": -1}, "seq must be >= 0"),
            (("src", "dst"), {"upto": "2"}, "seq must be a whole number"),
            (("src", "bad\x01id"), {}, "control character"),
        ]
        for args, kwargs, says in cases:
            with pytest.raises(MemoryGraphError) as err:
                await api.fork(*args, **kwargs)
            assert err.value.code == "BAD_ARGS" and says in str(err.value), (args, err.value)
        assert await api.history("dst") == ()
    finally:
        await host.stop()


def _cli(data: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "host", "--data-dir", str(data), *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240)


def test_cli_fork_then_ingest_keeps_the_fork(tmp_path) -> None:
    data = tmp_path / "data"
    src = tmp_path / "src.jsonl"
    src.write_text("".join(json.dumps({"role": r, "content": t}) + "\n" for r, t in STORY))
    more = tmp_path / "more.jsonl"
    more.write_text(
        json.dumps({"role": "user", "content": "Mara asked Juno Kade about the compass."})
        + "\n"
        + json.dumps({"role": "assistant", "content": "Juno Kade said it points to Qel."})
        + "\n"
    )
    assert _cli(data, "ingest", str(src), "--chat", "src", "--quiet").returncode == 0
    run = _cli(data, "fork", "src", "dst", "--upto", "2")
    assert run.returncode == 0, run.stderr
    assert "forked chat 'src' into 'dst'" in run.stdout
    run = _cli(data, "history", "dst")
    assert run.returncode == 0 and "forked from src at seq 2" in run.stdout, run.stdout
    run = _cli(data, "ingest", str(more), "--chat", "dst", "--quiet")
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in _cli(data, "history", "dst", "--json").stdout.splitlines()]
    assert rows[0]["kind"] == "fork" and rows[0]["note"] == "forked from src at seq 2"
    assert "rollback" not in {r["kind"] for r in rows} and len(rows) >= 3
    nodes = json.loads(_cli(data, "export", "dst").stdout)["nodes"]
    summaries = {n["fields"].get("summary") for n in nodes.values()}
    assert STORY[0][1] in summaries  # forked
    assert "Juno Kade said it points to Qel." in summaries  # chatted after
    assert STORY[-1][1] not in summaries  # after --upto 2
    run = _cli(data, "fork", "src", "dst")
    assert run.returncode != 0 and "already has a graph" in run.stderr
    run = _cli(data, "fork", "nope", "other")
    assert run.returncode != 0 and "unknown chat 'nope'" in run.stderr
