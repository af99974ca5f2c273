"""Loading a chat: the state builder's quick edge path equals `edge_to_json`, and a loaded
chat's dict and store equal the ones the validating paths give."""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memgraph_plugin.chats.chat_cache import PersistedChats
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.storage.journal.change_codec import (
    StateBuilder,
    changeset_to_change,
    edge_key,
    edge_to_json,
)

VALUES = st.one_of(st.sampled_from(["a", "b", "related", ""]), st.none(), st.integers(0, 3))
raw_edges = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"from": VALUES, "to": VALUES, "type": VALUES},
            optional={"seqTo": VALUES, "source": VALUES, "seq_to": VALUES, "weight": VALUES},
        ),
        st.fixed_dictionaries({"to": VALUES, "type": VALUES, "from": VALUES}),
    ),
    max_size=6,
)


@pytest.mark.slow
@given(edges=raw_edges)
def testoragestate_builder_edges_equal_edge_to_json(edges: list[dict[str, Any]]) -> None:
    """Same edges, same key order inside each, same order and the same duplicate handling (the
    last of a key wins, in the first one's place)."""
    ref: dict[Any, dict[str, Any]] = {}
    for edge in edges:
        e = edge_to_json(edge)
        ref[edge_key(e)] = e
    got = StateBuilder({"nodes": {}, "edges": edges}).edges
    assert [(k, list(e.items())) for k, e in got.items()] == [
        (k, list(e.items())) for k, e in ref.items()
    ]
    assert all(e is not edge for e in got.values() for edge in edges)  # copies, never shared


def testorageloaded_chat_equals_its_snapshot_decoded_slowly(tmp_path) -> None:
    """A chat loaded from a checkpoint plus journal rows: the state dict equals what the stored
    JSON says, and the store built from it equals one built by single writes."""
    storage = LanceStorage(StorageSettings(uri=str(tmp_path / "db"), checkpoint_every=10_000))
    nodes = {
        f"n_{i}": {
            "id": f"n_{i}", "type": "event" if i % 3 else "character_sheet",
            "level": "semantic", "title": f"T{i}", "fields": {"summary": f"s{i}", "tags": [i]},
            "parentId": "n_1" if i > 5 else "", "childrenIds": [], "seqTo": i, "semanticDepth": 0,
            "semanticRollup": False, "archived": i == 4,
        }
        for i in range(1, 30)
    }
    edges = [{"from": f"n_{i}", "to": f"n_{i + 1}", "type": "Related"} for i in range(1, 20)]
    edges.append({"from": "n_3", "to": "n_2", "type": "allied_with", "seqTo": 3})
    data = {"nodes": nodes, "edges": edges, "nodeSeq": 29, "seqCounter": 9}
    storage.import_sync("c", Store.from_dict(data).to_dict())
    storage.checkpoint_sync("c", storage.load_sync("c"))
    more = Store.from_dict(storage.load_sync("c").data)
    with more.transaction():
        more.remove_edge(("n_1", "related", "n_2"))
        n = more.node("n_7")
        more.put_node(Node(n.id, n.type, title="renamed", fields={"summary": "x"}))
    storage.commit_sync("c", changeset_to_change(more.take_changeset(), applied=2), base_version=1)
    assert gc.isenabled()
    state = LanceStorage(storage.settings).load_sync("c")
    assert gc.isenabled()
    assert state.version == 2 and state.changed_since_checkpoint == {"n_7"}
    assert state.data == more.to_dict()
    loaded = Store.from_dict(state.data)
    assert loaded.to_dict() == more.to_dict()
    assert loaded.candidate_keys() == more.candidate_keys()
    assert dict(loaded.pool_anchors()) == dict(more.pool_anchors())


async def test_a_cold_open_builds_the_store_off_the_event_loop(tmp_path) -> None:
    """A big chat's load does not stall the loop: here the store factory waits for the loop
    itself to signal it (on the loop thread that would hang until the timeout)."""
    uri = str(tmp_path / "db")
    LanceStorage(StorageSettings(uri=uri)).import_sync(
        "c", {"nodes": {"n_1": {"id": "n_1", "type": "event"}}, "edges": []}
    )
    building, signal = threading.Event(), threading.Event()

    def build(data: dict[str, Any]) -> Store | None:
        building.set()
        return Store.from_dict(data) if signal.wait(10) else None

    chats = PersistedChats(LanceStorage(StorageSettings(uri=uri)), store_from_dict=build)
    opening = asyncio.ensure_future(chats.open("c"))
    assert await asyncio.to_thread(building.wait, 60)  # the factory waits for the loop now
    signal.set()
    chat = await opening
    assert chat.store is not None and chat.store.node("n_1") is not None
    assert gc.isenabled()


def test_a_pinned_node_survives_a_checkpoint_and_a_column_load(tmp_path) -> None:
    """A pin is stored in the node: journal row, checkpoint (a raw row: the columns have no
    place for it) and a store built from the columns all keep it; unpinned nodes keep the
    original's keys."""
    from memgraph_plugin.engine.read.pinned import pinned_ids
    from memgraph_plugin.engine.write.curation import set_pinned

    storage = LanceStorage(StorageSettings(uri=str(tmp_path / "db"), checkpoint_every=10_000))
    nodes = {
        f"n_{i}": {"id": f"n_{i}", "type": "event", "title": f"T{i}", "fields": {"summary": "s"}}
        for i in range(1, 200)
    }
    storage.import_sync("c", Store.from_dict({"nodes": nodes, "edges": []}).to_dict())
    store = Store.from_dict(storage.load_sync("c").data)
    set_pinned(store, "n_150", True)
    storage.commit_sync("c", changeset_to_change(store.take_changeset(), applied=1), base_version=1)
    assert LanceStorage(storage.settings).load_sync("c").data["nodes"]["n_150"]["pinned"] is True
    storage.checkpoint_sync("c", storage.load_sync("c"))
    state = LanceStorage(storage.settings).load_sync("c")
    assert state.changed_since_checkpoint == set()
    assert state.data["nodes"]["n_150"]["pinned"] is True
    assert "pinned" not in state.data["nodes"]["n_149"]
    loaded = Store.from_columns(state.nodes, state.edges, state.node_seq, state.seq_counter)
    assert pinned_ids(loaded) == ("n_150",) and loaded.node("n_150").pinned
    set_pinned(loaded, "n_150", False)  # kept from the change log from here on
    set_pinned(loaded, "n_3", True)
    assert pinned_ids(loaded) == ("n_3",)
