"""Vectors stored with a snapshot: a chat reopened after a snapshot searches its stored vectors at
once (nothing embedded, the rows adopted as read), exactly as an index built from the matrix
does, finds what was written since, and a second host opens what the maintenance process
stored."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from memgraph_plugin.chats.chat_cache import PersistedChats
from memgraph_plugin.embedding import HashingProfile
from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.storage import ChangeRecord, ChatState, LanceStorage, VectorBlock
from memgraph_plugin.storage.format.graph_columns import empty_edges
from tests.storage.node_tables import event_table
from tests.storage.targets import Target, local_target

DIM = 32
WORDS = ["harbor", "storm", "guild", "garden", "dragon", "castle", "river", "gold", "inn"]


def _clustered(n: int, *, seed: int) -> np.ndarray:
    """Unit rows around 24 random centres (the shape real embeddings have)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(24, DIM)).astype(np.float32)
    rows = (centres[rng.integers(0, 24, n)] + 0.6 * rng.normal(size=(n, DIM))).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _node_table(ids: list[str]) -> pa.Table:
    n = len(ids)
    titles = [f"{WORDS[i % len(WORDS)]} {i}" for i in range(n)]
    fields = [f'{{"summary":"{t}"}}' for t in titles]
    return event_table(ids, titles, fields, np.zeros(n, dtype=np.int64))


def _seed(storage: LanceStorage, chat: str, matrix: np.ndarray, profile: str) -> list[str]:
    """A chat of one node per row of `matrix`, stored as a full snapshot with those vectors
    (what the maintenance process writes, through the same `write_full`)."""
    ids = [f"n{i}" for i in range(matrix.shape[0])]
    base = storage.latest_version_sync(chat)
    rec = storage.commit_sync(
        chat, ChangeRecord(node_seq=len(ids), seq_counter=1, kind="import"), base_version=base
    )
    state = ChatState(
        chat, rec.version, nodes=_node_table(ids), edges=empty_edges(), node_seq=len(ids),
        seq_counter=1, seq=rec.seq,
    )
    storage.checkpoint_sync(chat, state, VectorBlock(profile, tuple(ids), matrix))
    return ids


def _chats(target: Target, **settings) -> PersistedChats:
    return PersistedChats(
        target.storage(checkpoint_every=10_000, **settings),
        store_from_dict=lambda data: Store.from_dict(data),
        profile=HashingProfile(dim=DIM),
    )


def _exact(matrix: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    index = VectorIndex.from_arrays(
        "x", ids, matrix, ["event"], np.zeros(len(ids), dtype=np.int64),
        np.ones(len(ids), dtype=bool),
    )
    return [i for i, _ in index.search(query, k=k)]


async def _put(chats: PersistedChats, chat_id: str, nodes: dict[str, str]) -> None:
    chat = await chats.open(chat_id)
    with chat.store.transaction():
        for nid, text in nodes.items():
            chat.store.put_node(Node(id=nid, type="event", title=text, fields={"s": text}))
    await chats.persist(chat_id, chat.store.take_changeset(), applied=len(nodes))


async def test_a_reopened_chat_searches_its_stored_vectors_at_once(tmp_path):
    """The snapshot's vectors are adopted by the open (not held twice, nothing embedded), and a
    search returns what an exact search over the matrix does, with its exact cosines."""
    target = local_target(tmp_path)
    chats = _chats(target)
    matrix = _clustered(3000, seed=1)
    ids = _seed(chats.storage, "big", matrix, chats.embedder.name)
    chat = await chats.open("big")
    index = chat.index
    assert index is not None and len(index) == 3000 and not chat.unembedded
    assert index.nbytes < matrix.nbytes * 1.2  # not held twice
    rng = np.random.default_rng(2)
    queries = matrix[rng.integers(0, 3000, 20)] + 0.3 * rng.normal(size=(20, DIM))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    for q in queries:
        got = index.search(q, k=10)
        assert [i for i, _ in got] == _exact(matrix, ids, q, 10)
        for nid, score in got:
            assert abs(score - float(matrix[ids.index(nid)] @ q)) < 1e-5
    await chats.vector_search("big", query="storm", types=None, k=5)
    assert chats.last_search_mode == "exact"


async def test_rows_written_since_the_snapshot_are_found_and_stale_ones_never(tmp_path):
    """Rows written after the snapshot (before the reopen, from the journal, and after it) are
    searched; a node changed or removed since is found by its new text only, or not at all."""
    target = local_target(tmp_path)
    chats = _chats(target)
    matrix = _clustered(2000, seed=3)
    _seed(chats.storage, "big", matrix, chats.embedder.name)
    await _put(chats, "big", {"late": "dragon castle gold", "n5": "harbor storm river"})
    chats.forget("big")
    chat = await chats.open("big")  # the snapshot's vectors + two journal rows after them
    index = chat.index
    assert index is not None and len(index) == 2001
    embed = chats.embedder
    assert embed is not None
    top = await chats.vector_search("big", query="dragon castle gold", types=None, k=1)
    assert top[0][0] == "late"
    q5 = embed.embed_query("harbor storm river")
    assert index.search(q5, k=1)[0][0] == "n5"  # by its new vector, not the stored row's
    assert index.search(matrix[5], k=3)[0][0] != "n5"  # its stored row is not searched
    await _put(chats, "big", {"fresh": "guild inn garden"})  # written after the open
    top = await chats.vector_search("big", query="guild inn garden", types=None, k=1)
    assert top[0][0] == "fresh"
    chat = await chats.open("big")
    with chat.store.transaction():
        chat.store.remove_node("n7")
    await chats.persist("big", chat.store.take_changeset(), applied=1)
    found = {i for i, _ in index.search(matrix[7], k=20)}
    assert "n7" not in found


@pytest.mark.slow
@pytest.mark.parametrize("evict", [False, True])
async def test_an_unloaded_chat_reopens_with_its_vectors(tmp_path, evict):
    """Unloading a chat (`forget`, or the memory budget evicting it) and reopening it adopts
    the stored vectors again, and searches agree before and after."""
    target = local_target(tmp_path)
    chats = _chats(target)
    matrix = _clustered(1200, seed=7)
    _seed(chats.storage, "big", matrix, chats.embedder.name)
    _seed(chats.storage, "other", _clustered(400, seed=8), chats.embedder.name)
    before = await chats.vector_search("big", query="castle river", types=None, k=5)
    old = chats._chats["big"].index
    if evict:
        chats.budget.limit = 1  # bytes: everything but the chat in use goes
        await chats.vector_search("other", query="castle", types=None, k=1)
    else:
        chats.forget("big")
    assert "big" not in chats._chats and old is not None
    after = await chats.vector_search("big", query="castle river", types=None, k=5)
    index = chats._chats["big"].index
    assert index is not None and index is not old and not chats._chats["big"].unembedded
    assert after == before


@pytest.mark.process
async def test_the_maintenance_process_stores_the_vectors(tmp_path):
    """Snapshots written by the maintenance process (a child process, given the storage
    settings) carry the vectors: a second host's open adopts them and searches as the writer
    does."""
    target = local_target(tmp_path)
    writer = PersistedChats(
        target.storage(checkpoint_every=2),
        store_from_dict=lambda data: Store.from_dict(data),
        profile=HashingProfile(dim=DIM),
    )
    rng = np.random.default_rng(9)
    for batch in range(2):  # the second commit makes the chat due for a snapshot
        texts = {f"n{batch}_{i}": " ".join(rng.choice(WORDS, size=4)) for i in range(200)}
        await _put(writer, "big", texts)
        assert writer.storage.maintenance.wait_idle()
    assert writer.storage.checkpointed_version("big") == 2
    reader = _chats(target)
    first = await reader.vector_search("big", query="harbor storm gold", types=None, k=5)
    chat = reader._chats["big"]
    assert chat.index is not None and len(chat.index) == 400 and not chat.unembedded
    exact = await writer.vector_search("big", query="harbor storm gold", types=None, k=5)
    assert first == exact
    writer.storage.close()
