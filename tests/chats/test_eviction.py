"""Loaded chats under `memory_budget_mb`: least-recently-used eviction, transparent reopen, and
what a session a plugin still holds does when its chat is evicted."""

from __future__ import annotations

import gc
import weakref

import pytest

from host import Host
from memgraph_plugin import MemoryGraphError
from memgraph_plugin.chats.chat_cache import PersistedChats
from memgraph_plugin.chats.memory_budget import (
    CHAT_BYTES,
    EDGE_BYTES,
    MB,
    NODE_BYTES,
    MemoryBudget,
    chat_bytes,
)
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.storage import LanceStorage, StorageSettings
from tests.hosts import memory_session

NODES = 40  # per chat: an estimated CHAT_BYTES + 40 * NODE_BYTES each
CHAT_MB = (CHAT_BYTES + NODES * NODE_BYTES) / MB


def _chats(uri: str, budget_mb: float | None) -> PersistedChats:
    return PersistedChats(
        LanceStorage(StorageSettings(uri=uri)),
        store_from_dict=lambda data: Store.from_dict(data),
        memory_budget_mb=budget_mb,
    )


async def _fill(chats: PersistedChats, chat_id: str, count: int = NODES) -> None:
    store = (await chats.open(chat_id)).store
    with store.transaction():
        for i in range(count):
            store.put_node(Node(f"{chat_id}_{i}", "event", title=f"{chat_id} scene {i}"))
    await chats.persist(chat_id, store.take_changeset(), applied=count, store=store)


def test_budget_names_the_coldest_chats_and_never_the_one_in_use():
    budget = MemoryBudget(limit=250)
    for chat_id in ("a", "b", "c"):
        budget.use(chat_id, 100)
    assert budget.total == 300 and budget.order() == ["a", "b", "c"]
    assert budget.victims() == ["a"]
    budget.use("a")  # used again: now the most recent
    assert budget.order() == ["b", "c", "a"] and budget.victims() == ["b"]
    # a chat with a commit in flight is skipped
    assert budget.victims(busy=lambda chat_id: chat_id == "b") == ["c"]
    alone = MemoryBudget(limit=10)
    alone.use("big", 1000)
    assert alone.victims() == []  # bigger than the budget, but the one in use
    budget.drop("a")
    assert budget.total == 200 and "a" not in budget


def test_the_estimate_counts_nodes_edges_and_vectors():
    store = Store()
    assert chat_bytes(store) == CHAT_BYTES  # a loaded chat's fixed share
    store.put_node(Node("a", "event"))
    store.put_node(Node("b", "event"))
    from memgraph_plugin.engine.model.models import Edge

    store.add_edge(Edge("a", "b", "related"))
    assert chat_bytes(store) == CHAT_BYTES + 2 * NODE_BYTES + EDGE_BYTES

    class Index:
        nbytes = 4096

    assert chat_bytes(store, Index()) == CHAT_BYTES + 2 * NODE_BYTES + EDGE_BYTES + 4096


async def test_least_recently_used_chats_are_evicted_and_reopen_transparently(tmp_path):
    uri = str(tmp_path / "db")
    writer = _chats(uri, None)
    for chat_id in ("a", "b", "c"):
        await _fill(writer, chat_id)
    chats = _chats(uri, budget_mb=2.5 * CHAT_MB)  # two chats fit, three do not
    a = await chats.open("a")
    await chats.open("b")
    assert chats.cached("a") is a and chats.budget.evictions == 0
    await chats.open("c")
    assert chats.cached("a") is None  # the least recently used went
    assert chats.cached("b") is not None and chats.cached("c") is not None
    assert chats.budget.total <= chats.budget.limit and chats.budget.evictions == 1
    await chats.open("b")  # b is now the most recent: c is the coldest
    again = await chats.open("a")  # reloaded from storage, same graph and version
    assert again is not a and again.version == a.version == 1
    assert {n.id for n in again.store.iter_nodes()} == {f"a_{i}" for i in range(NODES)}
    assert chats.cached("c") is None and chats.cached("b") is not None
    assert chats.budget.order() == ["b", "a"]


async def test_no_budget_keeps_every_chat(tmp_path):
    chats = _chats(str(tmp_path / "db"), None)
    for chat_id in ("a", "b", "c"):
        await _fill(chats, chat_id)
    assert all(chats.cached(c) is not None for c in "abc") and chats.budget.evictions == 0


async def _host(tmp_path, budget_mb: float) -> Host:
    host = Host(
        data_dir=tmp_path / "d",
        settings={"memory_budget_mb": budget_mb},
        entry_points=False,
    )
    await host.start()
    return host


async def _grow(session, count: int = NODES) -> None:
    await session.apply_extraction_batch(
        ops=[{"op": "create", "type": "event", "fields": {"summary": f"scene {i}"}}
             for i in range(count)]
    )


@pytest.mark.slow
async def test_a_held_session_of_an_evicted_chat_reads_and_writes_on(tmp_path):
    """Eviction never breaks a session a plugin holds: it keeps its store (reads as before) and
    its next write commits normally and makes that store the loaded chat again."""
    host = await _host(tmp_path, budget_mb=1.5 * CHAT_MB)  # one chat of NODES fits, not two
    persisted = memory_graph_for(host).persistence
    held = await memory_session(host, "a")
    await _grow(held)
    await _grow(await memory_session(host, "b"))  # loading and growing b evicts a
    assert persisted.cached("a") is None and persisted.budget.evictions >= 1
    assert len(held.list_nodes()) == NODES  # reads: the store it holds
    created = await held.create_node(type="event", fields={"summary": "after eviction"})
    assert held.last_commit.version == 2  # committed on top of what was stored
    assert persisted.cached("a").store is held.store  # the held store is the chat again
    fresh = await memory_session(host, "a")
    assert fresh.get_node(created.id) is not None
    await host.stop()


async def test_a_held_session_is_stale_once_the_chat_moved_on_after_eviction(tmp_path):
    host = await _host(tmp_path, budget_mb=1.5 * CHAT_MB)
    persisted = memory_graph_for(host).persistence
    held = await memory_session(host, "a")
    await _grow(held)
    await _grow(await memory_session(host, "b"))  # evicts a
    other = await memory_session(host, "a")  # reopened: a new store
    assert other.store is not held.store
    await other.create_node(type="event", fields={"summary": "written by another session"})
    with pytest.raises(MemoryGraphError) as info:  # held lacks that write: refused, retryable
        await held.create_node(type="event", fields={"summary": "stale"})
    assert info.value.code == "CONFLICT"
    retry = await memory_session(host, "a")
    await retry.create_node(type="event", fields={"summary": "retried"})
    assert len(retry.list_nodes()) == NODES + 2
    assert persisted.cached("a").store is retry.store
    await host.stop()


async def test_a_reopened_but_unchanged_chat_takes_the_held_sessions_write(tmp_path):
    """Evicted, reopened by another session, nothing committed: the held session's write wins
    (its store becomes the chat) and the other session is the stale one."""
    host = await _host(tmp_path, budget_mb=1.5 * CHAT_MB)
    held = await memory_session(host, "a")
    await _grow(held)
    await _grow(await memory_session(host, "b"))
    other = await memory_session(host, "a")
    await held.create_node(type="event", fields={"summary": "held writes first"})
    with pytest.raises(MemoryGraphError) as info:
        await other.create_node(type="event", fields={"summary": "other is stale now"})
    assert info.value.code == "CONFLICT"
    await host.stop()


async def test_an_evicted_store_is_freed_once_no_session_holds_it(tmp_path):
    host = await _host(tmp_path, budget_mb=1.5 * CHAT_MB)
    session = await memory_session(host, "a")
    await _grow(session)
    ref = weakref.ref(session.store)
    del session
    await _grow(await memory_session(host, "b"))  # evicts a
    gc.collect()
    assert ref() is None  # nothing in the host keeps an evicted chat's store
    await host.stop()


@pytest.mark.parametrize("value", ["lots", -1, 0])
async def test_a_bad_memory_budget_is_refused_by_name(tmp_path, value):
    """The settings schema rejects it before anything starts, naming the key."""
    from host import SettingsError

    with pytest.raises(SettingsError, match="setting memory_budget_mb = "):
        await _host(tmp_path, budget_mb=value)
