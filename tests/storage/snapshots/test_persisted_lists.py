"""Coarse lists stored with a snapshot's vector rows (`storage/snapshots/vector_lists.py`): a chat
reopened
after a snapshot searches through them at once (no build), finds what was written since, and
stores written before them (or below the threshold) still open and search as before."""

from __future__ import annotations

import asyncio

import numpy as np
import pyarrow as pa
import pytest

from memgraph_plugin.chats.chat_cache import PersistedChats
from memgraph_plugin.embedding import HashingProfile
from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.storage import ChangeRecord, ChatState, LanceStorage, VectorBlock
from memgraph_plugin.storage.connect import connect_database
from memgraph_plugin.storage.format.graph_columns import NODE_SCHEMA, empty_edges
from memgraph_plugin.storage.tables import LIST_COLUMN, nodes_schema
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
    return pa.table(
        {
            "id": ids,
            "removed": np.zeros(n, dtype=bool),
            "moved": np.zeros(n, dtype=bool),
            "type": ["event"] * n,
            "level": ["semantic"] * n,
            "title": titles,
            "fields": [f'{{"summary":"{t}"}}' for t in titles],
            "parent_id": [""] * n,
            "children_ids": pa.array([[]] * n, pa.list_(pa.string())),
            "seq_to": np.zeros(n, dtype=np.int64),
            "semantic_depth": np.zeros(n, dtype=np.int64),
            "semantic_rollup": np.zeros(n, dtype=bool),
            "archived": np.zeros(n, dtype=bool),
            "superseded_by": pa.nulls(n, pa.string()),
            "raw": pa.nulls(n, pa.large_string()),
        },
        schema=NODE_SCHEMA,
    )


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


def _chats(target: Target, threshold: int = 300, **settings) -> PersistedChats:
    chats = PersistedChats(
        target.storage(checkpoint_every=10_000, vector_coarse_threshold=threshold, **settings),
        store_from_dict=lambda data: Store.from_dict(data),
        profile=HashingProfile(dim=DIM),
    )
    chats.coarse_threshold = threshold
    return chats


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


async def test_a_reopened_chat_searches_its_stored_lists_at_once(tmp_path, monkeypatch):
    """The snapshot's lists are adopted by the open (no build thread, no copy of the rows:
    they are read in list order and are the lists' rows), and a coarse search over them
    returns what an exact search does: every row with a budget of every row, and with a
    small budget the exact cosines of a bounded set of rows, at a recall the test checks."""
    target = local_target(tmp_path)
    chats = _chats(target)
    matrix = _clustered(3000, seed=1)
    ids = _seed(chats.storage, "big", matrix, chats.embedder.name)
    chat = await chats.open("big")
    index = chat.index
    assert index is not None and index.coarse is not None and index.coarse_task is None
    coarse = index.coarse
    assert not coarse.owns_packed and coarse.rows == 3000  # the stored rows, in list order
    assert index.nbytes < matrix.nbytes * 1.2  # not held twice
    rng = np.random.default_rng(2)
    queries = matrix[rng.integers(0, 3000, 20)] + 0.3 * rng.normal(size=(20, DIM))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    exact = [_exact(matrix, ids, q, 10) for q in queries]
    assert [[i for i, _ in index.search(q, k=10)] for q in queries] == exact  # budget: all
    monkeypatch.setattr("memgraph_plugin.embedding.index.ROW_BUDGET", 300)
    recall = []
    for q, want in zip(queries, exact, strict=True):
        rows, _ = coarse.scored(q, 300)
        assert len(rows) < 1500  # bounded: the probed lists, not the index
        got = index.search(q, k=10)
        for nid, score in got:  # exact cosines of the rows read
            assert abs(score - float(matrix[ids.index(nid)] @ q)) < 1e-5
        recall.append(len({i for i, _ in got} & set(want)) / 10)
    assert np.mean(recall) >= 0.9, np.mean(recall)
    await chats.vector_search("big", query="storm", types=None, k=5)
    assert chats.last_search_mode == "coarse" and index.coarse_task is None  # nothing built


async def test_rows_written_since_the_snapshot_are_found_and_stale_ones_never(tmp_path):
    """Lists made from an older snapshot stay right: rows written after it (before the reopen,
    from the journal, and after it) are searched exactly; a node changed or removed since is
    found by its new text only, or not at all."""
    target = local_target(tmp_path)
    chats = _chats(target)
    matrix = _clustered(2000, seed=3)
    _seed(chats.storage, "big", matrix, chats.embedder.name)
    await _put(chats, "big", {"late": "dragon castle gold", "n5": "harbor storm river"})
    chats.forget("big")
    chat = await chats.open("big")  # the snapshot's lists + two journal rows after them
    index = chat.index
    assert index is not None and index.coarse is not None and len(index) == 2001
    embed = chats.embedder
    assert embed is not None
    top = await chats.vector_search("big", query="dragon castle gold", types=None, k=1)
    assert chats.last_search_mode == "coarse" and top[0][0] == "late"
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
    assert "n7" not in found and index.coarse is not None


@pytest.mark.slow
async def test_a_delta_snapshot_assigns_its_rows_and_a_full_one_reuses_the_centroids(tmp_path):
    """Snapshots by the maintenance pass (`snapshot_sync`): a delta gives its changed rows the
    chain's lists; the reopened chain (rows taken in list order) is adopted and searches as the
    exact search does; the next full snapshot keeps the centroids and the unchanged rows'
    lists."""
    target = local_target(tmp_path)
    chats = _chats(target, snapshot_chain=2)
    storage = chats.storage
    matrix = _clustered(1500, seed=4)
    _seed(storage, "big", matrix, chats.embedder.name)
    head = storage._snaps.head("big")
    before = storage._snaps.read_vectors("big", head)
    assert before is not None and before.lists is not None and before.centroids is not None
    assert np.all(np.diff(before.lists) >= 0)  # written in list order
    await _put(chats, "big", {f"d{i}": " ".join(WORDS[i % 9 : i % 9 + 3]) for i in range(40)})
    chat = await chats.open("big")
    with chat.store.transaction():
        chat.store.remove_node("n3")
    await chats.persist("big", chat.store.take_changeset(), applied=1)
    assert storage.snapshot_sync("big") is not None  # a delta on the full row set
    head = storage._snaps.head("big")
    assert len(head["chain"]) == 2
    chained = storage._snaps.read_vectors("big", head)
    assert chained is not None and chained.lists is not None
    assert np.all(np.diff(chained.lists) >= 0) and len(chained.ids) == 1539
    assert np.array_equal(chained.centroids, before.centroids)
    chats.forget("big")
    chat = await chats.open("big")
    index = chat.index
    assert index is not None and index.coarse is not None and index.coarse.rows == 1539
    ids, rows = index.items()
    for q in rows[::97]:
        assert [i for i, _ in index.search(q, k=5)] == _exact(rows, list(ids), q, 5)
    assert "n3" not in index
    await _put(chats, "big", {"d0": "river gold inn"})
    assert storage.snapshot_sync("big") is not None  # the chain is full: a full snapshot
    head = storage._snaps.head("big")
    assert len(head["chain"]) == 1
    after = storage._snaps.read_vectors("big", head)
    assert after is not None and after.lists is not None
    assert np.array_equal(after.centroids, before.centroids)  # reused, not retrained
    old = dict(zip(before.ids, before.lists.tolist(), strict=True))
    new = dict(zip(after.ids, after.lists.tolist(), strict=True))
    assert all(new[i] == old[i] for i in new if i in old and i != "n3")


async def test_stores_without_stored_lists_open_and_build_them_as_before(tmp_path):
    """A snapshot below the threshold (or written before lists were stored) has none: the
    chat opens with an exact index whose lists a search builds on a thread."""
    target = local_target(tmp_path)
    writer = _chats(target, threshold=10_000)  # this writer's snapshots store no lists
    matrix = _clustered(800, seed=5)
    _seed(writer.storage, "big", matrix, writer.embedder.name)
    head = writer.storage._snaps.head("big")
    block = writer.storage._snaps.read_vectors("big", head)
    assert block is not None and block.lists is None
    reader = _chats(target, threshold=300)
    first = await reader.vector_search("big", query="harbor storm", types=None, k=5)
    assert reader.last_search_mode == "exact"
    index = reader._chats["big"].index
    assert index is not None
    task = index.coarse_task
    if task is not None:
        await asyncio.to_thread(task.join)
    assert index.coarse is not None and index.coarse.owns_packed  # built: a copy of its own
    again = await reader.vector_search("big", query="harbor storm", types=None, k=5)
    assert reader.last_search_mode == "coarse" and again[0] == first[0]


def test_a_vector_table_made_before_the_list_column_gets_it(target):
    """An old `nodes` table (no `coarse_list` column) is read as before and gets the column
    (all null for its old rows) when a snapshot with lists is written to it (on a folder and
    on S3)."""
    old_schema = pa.schema([f for f in nodes_schema(DIM) if f.name != LIST_COLUMN])
    connect_database(target.settings()).create_table(f"nodes_d{DIM}", schema=old_schema)
    storage = target.storage(checkpoint_every=10_000, vector_coarse_threshold=10_000)
    matrix = _clustered(400, seed=6)
    _seed(storage, "small", matrix, "hashing")  # below the threshold: no lists, no column
    assert LIST_COLUMN not in storage._nodes_table(DIM).schema.names
    block = storage._snaps.read_vectors("small", storage._snaps.head("small"))
    assert block is not None and len(block.ids) == 400 and block.lists is None
    storage = target.storage(checkpoint_every=10_000, vector_coarse_threshold=300)
    _seed(storage, "big", matrix, "hashing")
    assert LIST_COLUMN in storage._nodes_table(DIM).schema.names
    big = storage._snaps.read_vectors("big", storage._snaps.head("big"))
    small = storage._snaps.read_vectors("small", storage._snaps.head("small"))
    assert big is not None and big.lists is not None and big.centroids is not None
    assert small is not None and small.lists is None and len(small.ids) == 400


@pytest.mark.slow
@pytest.mark.parametrize("evict", [False, True])
async def test_an_unloaded_chat_reopens_with_its_lists(tmp_path, evict):
    """Unloading a chat (`forget`, or the memory budget evicting it) and reopening it adopts
    the stored lists again, and searches agree before and after."""
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
    assert "big" not in chats._chats and old is not None and old.abandoned
    after = await chats.vector_search("big", query="castle river", types=None, k=5)
    index = chats._chats["big"].index
    assert chats.last_search_mode == "coarse" and index is not None and index is not old
    assert index.coarse_task is None and after == before


@pytest.mark.process
async def test_the_maintenance_process_stores_the_lists(tmp_path):
    """Snapshots written by the maintenance process (a child process, given the storage
    settings) carry the lists: a second host's open adopts them."""
    target = local_target(tmp_path)
    writer = PersistedChats(
        target.storage(checkpoint_every=2, vector_coarse_threshold=300),
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
    index = reader._chats["big"].index
    assert reader.last_search_mode == "coarse" and index is not None
    assert index.coarse is not None and not index.coarse.owns_packed
    exact = await writer.vector_search("big", query="harbor storm gold", types=None, k=5)
    assert writer.last_search_mode == "exact" and first == exact
    writer.storage.close()
