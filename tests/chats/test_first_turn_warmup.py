"""What a loaded chat's first turn would wait for is started by the open, each on a thread of
its own (`chats/chat_cache.py` FIRST_TURN_INDICES, `ChatVectors._check_ann_soon`): the store's
deferred indices the first write reads whole, the vector index's id map, and (past the ANN
threshold) LanceDB's index check. The tests read none of them: they wait for the builds."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from memgraph_plugin.chats.chat_cache import FIRST_TURN_INDICES, PersistedChats
from memgraph_plugin.embedding.hashing import HashingProfile
from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.storage.vectors import vector_ann

WORDS = [
    "harbor",
    "storm",
    "lantern",
    "bridge",
    "market",
    "archive",
    "gate",
    "orchard",
    "tower",
    "ferry",
]


def _chats(uri: str, threshold: int = 250_000) -> PersistedChats:
    return PersistedChats(
        LanceStorage(StorageSettings(uri=uri, checkpoint_every=1)),
        store_from_dict=lambda data: Store.from_dict(data),
        store_from_state=lambda state: Store.from_columns(
            state.nodes, state.edges, state.node_seq, state.seq_counter, keywords=state.keywords
        ),
        profile=HashingProfile(dim=64),
        ann_threshold=threshold,
    )


async def _written(uri: str, n: int = 400) -> None:
    """A chat of `n` events, committed and snapshotted (columns and vectors)."""
    writer = _chats(uri)
    chat = await writer.open("big")
    rng = np.random.default_rng(3)
    with chat.store.transaction():
        for i in range(n):
            text = " ".join(rng.choice(WORDS, size=4))
            chat.store.put_node(
                Node(id=f"n_{i}", type="event", title=text, fields={"summary": text})
            )
    await writer.persist("big", chat.store.take_changeset(), applied=n)
    assert writer.storage.maintenance.wait_idle()


def _wait_for_builds() -> None:
    """Wait until every deferred build queued so far has run: one task per build thread, each
    held until all are running (the queue is first in, first out, so every earlier build has
    then left both threads)."""
    from memgraph_plugin.engine.index import deferred

    workers = deferred.build_threads._max_workers
    barrier = threading.Barrier(workers)
    for done in [deferred.build_threads.submit(barrier.wait, 60) for _ in range(workers)]:
        done.result(60)


def _wait_for(threads: str) -> None:
    """Join every live thread of that name (the open started them)."""
    for thread in threading.enumerate():
        if thread.name == threads:
            thread.join(60)
            assert not thread.is_alive()


async def test_an_open_builds_the_first_turns_indices_on_its_own_threads(tmp_path) -> None:
    uri = str(tmp_path / "db")
    await _written(uri)
    chat = await _chats(uri).open("big")
    store = chat.store
    assert store.internals()[0].column_ids() is not None  # opened from its columns (lazy)
    _wait_for_builds()
    _wait_for("vector id map")
    built = vars(store)
    first_write = ("_names", "_type_pools", "_pool_of", "_anchor", "_visible")
    assert set(first_write) <= set(FIRST_TURN_INDICES)
    assert all(name in built for name in first_write)  # nothing here read them
    assert len(store._pool_of) == 400 and store._visible == {f"n_{i}" for i in range(400)}


def test_a_vector_index_makes_its_id_map_on_a_thread() -> None:
    """An index adopted without its id map (vectors stored in another order than the nodes,
    as after journal rows or removed nodes) makes it on a thread when asked to, not on the
    first write."""
    ids = [f"n_{i}" for i in (3, 0, 2, 1)]
    index = VectorIndex.from_arrays(
        "p", ids, np.eye(4, dtype=np.float32), ["event"], np.zeros(4, int), np.ones(4, bool)
    )
    assert index._pos_map is None
    thread = index.map_ids_soon()
    assert thread is not None
    thread.join(60)
    assert index._pos_map == {"n_3": 0, "n_0": 1, "n_2": 2, "n_1": 3}
    assert index.map_ids_soon() is None  # made: nothing to start


async def test_the_ann_check_runs_at_open_and_the_first_search_uses_it(
    tmp_path, monkeypatch
) -> None:
    uri = str(tmp_path / "db")
    await _written(uri)
    asked: list[str] = []
    ready = vector_ann.LanceAnn.ready

    def noted(self: Any) -> bool:
        asked.append(threading.current_thread().name)
        return bool(ready(self))

    monkeypatch.setattr(vector_ann.LanceAnn, "ready", noted)
    reader = _chats(uri, threshold=300)
    await reader.open("big")
    _wait_for("ann index check")
    assert asked == ["ann index check"]  # the open asked, on its own thread
    await reader.vector_search("big", query="harbor storm", types=None, k=5)
    assert asked == ["ann index check"]  # the first search took the open's answer
    assert await reader.ann_built()  # no index yet: that search started its build
    await reader.vector_search("big", query="harbor storm", types=None, k=5)
    assert reader.last_search_mode == "ann" and len(asked) > 1  # later searches ask again
