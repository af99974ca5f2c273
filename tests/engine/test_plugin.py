"""The built-in plugin on a real Host: hook specs, the published service, hooks fired for real."""

from __future__ import annotations

import logging

import pytest

from host import Host, hookimpl
from memgraph_plugin.external_api import (
    get_currently_injected_node_ids,
    record_injected_node_ids,
)
from memgraph_plugin.results import CommitInfo
from memgraph_plugin.service import MemoryGraph, memory_graph_for
from memgraph_plugin.views import InjectionState


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
    assert rec.injections == [("a", state)]
    assert seen == [state]
    assert session_a.get_injection_state() is state
    assert session_a.read_api().get_injection_state() is state
    assert get_currently_injected_node_ids(ctx_b).recall_selected_ids == set()
    assert get_currently_injected_node_ids(ctx_a).recall_selected_ids == {"n_2"}
    record_injected_node_ids(ctx_b, always_inject_ids=[], recall_selected_ids=["n_9"])
    assert [chat for chat, _ in rec.injections] == ["a", "b"]
    assert len(seen) == 1  # chat a's listener did not see chat b's update


async def test_a_failing_hook_is_logged_with_its_name_and_others_still_run(host, caplog):
    rec = Recorder()
    host.register_plugin(Broken(), name="broken-plugin")
    host.register_plugin(rec, name="recorder")
    with caplog.at_level(logging.ERROR):
        record_injected_node_ids(
            host.get_context("c"), always_inject_ids=[], recall_selected_ids=["n_1"]
        )
    assert len(rec.injections) == 1
    assert "broken-plugin" in caplog.text and "injection hook exploded" in caplog.text

    session = await session_of(host, "c")
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        created = await session.create_node(type="character_sheet", title="Eileen")
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
    chat, commit = rec.commits[-1]
    assert len(rec.commits) == 1
    assert chat == "c" and commit.applied == 2 and commit.version >= 1 and commit.seq == 2
    assert waiter.done == [commit.version]
    nid = commit.node_ids[0]
    await session.edit_node(id=nid, title="renamed")
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
    states = [state for chat, state in rec.injections if chat == "d"]
    assert len(states) == 3
    assert states[0] == states[1] and states[2].recall_selected_ids == {"n_3"}
    assert states[2].always_inject_ids == {"n_1"}
