"""A chat opened from its snapshot columns makes no `Node` at open (`engine/load/lazy_nodes.py`) and
answers, writes and rolls back exactly like the same chat loaded eagerly (every record made at
open, through `Store.from_dict`)."""

from __future__ import annotations

from typing import Any

import pytest

from host import Host
from memgraph_plugin.engine.load import lazy_nodes
from memgraph_plugin.engine.load.lazy_nodes import LazyNodes
from memgraph_plugin.service import memory_graph_for

from .test_rollback_in_memory import _state, _write_turns

CHAT = "lz"


async def _host(data_dir: Any, *, eager: bool = False) -> Host:
    host = Host(
        data_dir=data_dir,
        settings={"embedding_profile": "hashing", "storage_checkpoint_every": 3},
        entry_points=False,
    )
    await host.start()
    if eager:  # loads through the JSON dict: every record made at open
        memory_graph_for(host).persistence.store_from_state = None
    return host


async def _reads(session: Any) -> dict[str, Any]:
    """What plugins read of a chat: searches, candidates, names, neighbours."""
    return {
        "dict": _state(session.store.to_dict()),
        "keyword": session.keyword_search(query="Ilya turn market", k=8),
        "vector": await session.vector_search(query="Ilya talks to Juno", k=8),
        "candidates": session.list_visible_candidates(limit=6),
        "names": session.find_by_name(query="Ilya Renn"),
        "nodes": session.list_nodes(types=["event"]),
    }


@pytest.mark.slow
async def test_a_lazily_opened_chat_reads_writes_and_rolls_back_like_an_eager_one(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(lazy_nodes, "BLOCK", 1)  # a small chat of many blocks
    data = tmp_path / "d"
    host = await _host(data)
    api = host.registry.get("memory-graph")
    await _write_turns(await api.open_session(host.get_context(CHAT)), range(1, 8))
    persistence = memory_graph_for(host).persistence
    assert persistence.storage.maintenance.wait_idle()
    persistence.forget(CHAT)

    lazy = await api.open_session(host.get_context(CHAT))
    nodes = lazy.store.internals()[0]
    assert isinstance(nodes, LazyNodes) and dict.__len__(nodes) == 0  # no record made at open
    events = [nid for nid in lazy.store.node_ids() if nid.startswith("n_")]
    # right after the open, on nodes nothing read: a delete (archive), an edit, a new node
    first_event = next(n for n in events if lazy.store.node(n).type == "event")
    assert (await lazy.delete_node(id=first_event)).ok
    await _write_turns(lazy, range(8, 10))
    assert not nodes.complete  # none of that needed every record
    rolled = await api.rollback(CHAT, seq=8)  # the newest commit, undone in memory
    assert rolled.persisted

    other = await _host(data, eager=True)
    eager = await other.registry.get("memory-graph").open_session(other.get_context(CHAT))
    assert not isinstance(eager.store.internals()[0], LazyNodes)
    reads = await _reads(lazy)
    assert reads["keyword"] and reads["vector"] and reads["candidates"]
    assert reads == await _reads(eager)
    assert lazy.store.visible_ids() == eager.store.visible_ids()
    assert lazy.store.candidate_keys() == eager.store.candidate_keys()
    assert dict(lazy.store.pool_anchors()) == dict(eager.store.pool_anchors())
    await other.stop()
    await host.stop()
