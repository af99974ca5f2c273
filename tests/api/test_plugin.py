"""The built-in plugin on a real Host: hook specs, the published service, hooks fired for real."""

from __future__ import annotations

import logging

import pytest

from host import Host, hookimpl
from memgraph_plugin.api.external import get_currently_injected_node_ids, record_injected_node_ids
from memgraph_plugin.engine.model.results import CommitInfo
from memgraph_plugin.engine.model.views import InjectionState
from memgraph_plugin.service import MemoryGraph, memory_graph_for


class Recorder:
    """A plugin object receiving the memory graph's notification hooks."""

    def __init__(self) -> None:
        self.injections: list[tuple[str, InjectionState]] = []
        self.commits: list[tuple[str, CommitInfo]] = []

    @hookimpl
    def memgraph_injection_changed(self, chat_id, state):
        self.injections.append((chat_id, state))

    @hookimpl
    def memgraph_commit(self, chat_id, commit):
        self.commits.append((chat_id, commit))


class Broken:
    """A plugin whose hooks always raise."""

    @hookimpl
    def memgraph_injection_changed(self, chat_id, state):
        raise RuntimeError("injection hook exploded")

    @hookimpl
    def memgraph_commit(self, chat_id, commit):
        raise RuntimeError("commit hook exploded")


class AsyncCommit:
    def __init__(self) -> None:
        self.done: list[int] = []

    @hookimpl
    async def memgraph_commit(self, chat_id, commit):
        self.done.append(commit.version)


@pytest.fixture
async def host(tmp_path):
    h = Host(data_dir=tmp_path / "data", entry_points=False)
    await h.start()
    yield h
    await h.stop()


async def session_of(host, chat_id):
    return await host.registry.get("memory-graph").open_session(host.get_context(chat_id))


async def test_plugin_adds_hookspecs_and_publishes_the_service(host):
    for name in ("memgraph_injection_changed", "memgraph_commit", "memgraph_embedding_profiles"):
        assert host.pm.hook.__dict__.get(name) is not None, name
        assert getattr(host.pm.hook, name).spec is not None
    api = host.registry.get("memory-graph")
    assert isinstance(api, MemoryGraph)
    assert memory_graph_for(host) is api
    entry = host.registry.entry("memory-graph")
    assert entry.version == "1.0"
    assert entry.owner == host.pm.get_name(__import__("memgraph_plugin.plugin").plugin)
    assert await api.open_session(None) is None
    assert await api.open_session(host.get_context(None)) is None


async def test_injection_update_fires_the_hook_per_chat(host):
    rec = Recorder()
    host.register_plugin(rec, name="recorder")
    ctx_a, ctx_b = host.get_context("a"), host.get_context("b")
    session_a = await session_of(host, "a")
    seen = []
    session_a.on_injection_changed(seen.append)
    state = record_injected_node_ids(
        ctx_a, always_inject_ids=["n_1"], recall_selected_ids=["n_2"], visible_ids=["n_1", "n_2"]
    )
    await host.drain()  # in a running loop the hook is delivered by a task (docs/robustness.md)
    assert rec.injections == [("a", state)]
    assert seen == [state]
    assert session_a.get_injection_state() is state
    assert get_currently_injected_node_ids(ctx_b).recall_selected_ids == set()
    assert get_currently_injected_node_ids(ctx_a).recall_selected_ids == {"n_2"}
    record_injected_node_ids(ctx_b, always_inject_ids=[], recall_selected_ids=["n_9"])
    await host.drain()
    assert [chat for chat, _ in rec.injections] == ["a", "b"]
    assert len(seen) == 1  # chat a's listener did not see chat b's update


@pytest.mark.slow
async def test_a_failing_hook_is_logged_with_its_name_and_others_still_run(host, caplog):
    rec = Recorder()
    host.register_plugin(Broken(), name="broken-plugin")
    host.register_plugin(rec, name="recorder")
    with caplog.at_level(logging.ERROR):
        record_injected_node_ids(
            host.get_context("c"), always_inject_ids=[], recall_selected_ids=["n_1"]
        )
        await host.drain()
    assert len(rec.injections) == 1
    assert "broken-plugin" in caplog.text and "injection hook exploded" in caplog.text

    session = await session_of(host, "c")
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        created = await session.create_node(type="character_sheet", title="Eileen")
        await host.drain()
    assert "broken-plugin" in caplog.text and "commit hook exploded" in caplog.text
    assert session.get_node(created.id) is not None  # the write stands
    assert [c.applied for _, c in rec.commits] == [1]


async def test_commit_hook_gets_commit_info_and_async_impls_are_awaited(host):
    rec, waiter = Recorder(), AsyncCommit()
    host.register_plugin(rec, name="recorder")
    host.register_plugin(waiter, name="waiter")
    session = await session_of(host, "c")
    await session.apply_extraction_batch(
        ops=[
            {"op": "create", "type": "event", "title": "a", "fields": {"summary": "s"}},
            {"op": "create", "type": "event", "title": "b", "fields": {"summary": "s"}},
            {"op": "delete", "node_id": "n_missing"},
        ],
        max_seq=2,
    )
    await session.edit_node(id="n_missing", title="x")  # nothing changed: no commit
    await host.drain()
    chat, commit = rec.commits[-1]
    assert len(rec.commits) == 1
    assert chat == "c" and commit.applied == 2 and commit.version >= 1 and commit.seq == 2
    assert waiter.done == [commit.version]
    nid = commit.node_ids[0]
    await session.edit_node(id=nid, title="renamed")
    await host.drain()
    assert rec.commits[-1][1].version > commit.version


async def test_shutdown_unpublishes(tmp_path):
    h = Host(data_dir=tmp_path / "d", entry_points=False)
    await h.start()
    service = h.registry.get("memory-graph")
    await h.stop()
    assert h.registry.get("memory-graph") is None
    assert service.closed
    assert memory_graph_for(h) is None


async def test_every_injection_update_fires_the_hook_no_debounce(host):
    """Identical updates, partial updates through the hub and a reused state all fire."""
    rec = Recorder()
    host.register_plugin(rec, name="recorder")
    ctx = host.get_context("d")
    for _ in range(2):  # the same state twice: two notifications
        record_injected_node_ids(ctx, always_inject_ids=["n_1"], recall_selected_ids=[])
    service = memory_graph_for(host)
    service.hub("d").set(recall_selected_ids=["n_3"])  # the recall pass of the same turn
    await host.drain()
    states = [state for chat, state in rec.injections if chat == "d"]
    assert len(states) == 3
    assert states[0] == states[1] and states[2].recall_selected_ids == {"n_3"}
    assert states[2].always_inject_ids == {"n_1"}


async def test_worked_example_through_open_session(host):
    """The docs' worked example as written: a session from the registry, a story written through
    it, then schema_overview and candidateRows rebuilt from its reads alone."""
    from memgraph_plugin.api.external import get_currently_injected_node_ids
    from tests.engine.read.test_projection import as_dict, ref_summary

    from .test_read_api import EXPECTED_SCHEMA_OVERVIEW, schema_overview

    session = await session_of(host, "worked")
    ops = [
        {"op": "create", "type": "character_sheet", "ref": "e", "title": "Eileen",
         "fields": {"aliases": ["艾琳"], "traits": "healer"}},
        {"op": "create", "type": "location_state", "ref": "g", "title": "Garden",
         "fields": {"state": "quiet"}},
        {"op": "create", "type": "thread", "ref": "q", "title": "Seal",
         "fields": {"status": "open", "note": "find it"}},
    ]
    for i in range(8):  # threshold 5 after holding back 3 recent leaves: one group of 3
        ops.append({"op": "create", "type": "event", "ref": f"v{i}",
                    "fields": {"summary": f"turn {i}"},
                    "links": [{"target_ref": "e", "relation": "involved_in",
                               "direction": "outgoing"},
                              {"target_ref": "g", "relation": "occurred_at",
                               "direction": "outgoing"}]})
    result = await session.apply_extraction_batch(ops=ops, max_seq=1)
    assert not result.rejected
    group = session.compaction_candidates(type="event").groups[0]
    await session.compact_nodes(type="event", child_ids=group.child_ids, summary="the first act")
    record_injected_node_ids(
        host.get_context("worked"),
        always_inject_ids=[result.refs["q"]],
        recall_selected_ids=[],
    )

    assert schema_overview(session) == EXPECTED_SCHEMA_OVERVIEW
    candidates = session.list_visible_candidates()
    rows = [session.get_node_brief(v.id, include_edge_summary=True, edge_summary_limit=8)
            for v in candidates]
    pool = {v.id for v in candidates}
    assert all(r is not None for r in rows)
    assert len(pool) == len(rows) == 3 + 1 + 5  # 3 entities, the rollup, 5 leaves left
    for row in rows:
        assert as_dict(row.edge_summary) == ref_summary(session.store, row.id, pool, limit=8)
        assert row.always_inject is (row.id == result.refs["q"])
    rollup = next(r for r in rows if r.child_count)
    assert rollup.child_count == 3 and rollup.summary == "the first act"
    assert get_currently_injected_node_ids(host.get_context("worked")).always_inject_ids == {
        result.refs["q"]}
