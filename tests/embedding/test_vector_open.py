"""The vector side of an open: the index's base held as row blocks (`RowBlocks`, how an open
adopts the stored vector batches without joining them) agrees with the same index over one
matrix, and an open from storage keeps the batches as they were read."""

from __future__ import annotations

import numpy as np
import pytest

from memgraph_plugin.embedding import HashingProfile
from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.embedding.profile import VectorBlock
from memgraph_plugin.embedding.row_blocks import RowBlocks


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _split(matrix: np.ndarray, sizes: list[int]) -> RowBlocks:
    bounds = np.cumsum(sizes)[:-1]
    return RowBlocks(np.split(matrix, bounds), matrix.shape[1])


@pytest.mark.parametrize("sizes", [[7, 0, 13, 1, 29], [50], [1] * 50, [25, 25]])
def test_row_blocks_behave_like_one_matrix(sizes):
    matrix = _unit(50, 6, 1)
    blocks = _split(matrix, sizes)
    assert blocks.shape == (50, 6) and len(blocks.blocks) == sum(1 for s in sizes if s)
    rng = np.random.default_rng(2)
    for rows in (rng.integers(0, 50, 40), np.sort(rng.integers(0, 50, 40)), np.arange(50)[::-1],
                 np.array([], dtype=np.int64), np.array([49, 0, 49])):
        assert np.array_equal(blocks.take(rows), matrix[rows])
    q = _unit(1, 6, 3)[0]
    assert np.allclose(blocks.dot(q), matrix @ q, atol=1e-6)
    for i in (0, 6, 7, 20, 49):
        assert np.array_equal(blocks.row(i), matrix[i])
    keep = rng.random(50) < 0.6
    assert np.array_equal(blocks.filter(keep).array(), matrix[keep])
    assert np.array_equal((blocks + _split(matrix[:3], [3])).array(), np.vstack([matrix,
                                                                                 matrix[:3]]))
    with pytest.raises(IndexError):
        blocks.take([50])
    with pytest.raises(IndexError):
        blocks.row(50)


def test_a_filter_keeps_whole_blocks_uncopied():
    matrix = _unit(30, 4, 4)
    blocks = _split(matrix, [10, 10, 10])
    keep = np.ones(30, dtype=bool)
    keep[12] = False
    kept = blocks.filter(keep)
    assert np.shares_memory(kept.blocks[0], blocks.blocks[0])
    assert np.shares_memory(kept.blocks[2], blocks.blocks[2])
    assert len(kept) == 29


def test_a_vector_block_from_row_blocks_joins_only_when_asked():
    matrix = _unit(12, 4, 5)
    block = VectorBlock("p", tuple(f"n{i}" for i in range(12)), _split(matrix, [5, 7]))
    assert block.dim == 4 and len(block.rows.blocks) == 2
    assert np.array_equal(block.matrix, matrix)
    one = VectorBlock("p", ("a",), matrix[:1])
    assert np.shares_memory(one.matrix, matrix)  # one block: itself


def _index(base: np.ndarray | RowBlocks, n: int) -> VectorIndex:
    types = np.asarray([i % 3 for i in range(n)], dtype=np.int64)
    searchable = np.asarray([i % 11 != 4 for i in range(n)], dtype=bool)
    return VectorIndex.from_arrays(
        "p", [f"n{i}" for i in range(n)], base, ["event", "person", "place"], types, searchable
    )


def test_an_index_over_blocks_answers_like_one_over_a_matrix():
    """Searches (exact, typed, restricted), writes that move base rows into the growable
    part, removals and a compaction: the same results over blocks as over one matrix."""
    n, dim = 900, 16
    matrix = _unit(n, dim, 6)
    sizes = [100, 300, 1, 250, 249]
    flat, chunked = _index(matrix, n), _index(_split(matrix, sizes), n)
    queries = _unit(12, dim, 7)

    def same() -> None:
        for q in queries:
            for kw in ({}, {"types": ["person"]}, {"only": [f"n{i}" for i in range(0, n, 7)]}):
                assert chunked.search(q, k=9, **kw) == flat.search(q, k=9, **kw)
        for nid in ("n0", "n99", "n100", "n400", "n899"):
            if nid in flat:
                assert np.array_equal(chunked.vector(nid), flat.vector(nid))
                assert chunked.score(nid, queries[0]) == pytest.approx(flat.score(nid,
                                                                                 queries[0]))
        a_ids, a_m = flat.items()
        b_ids, b_m = chunked.items()
        assert a_ids == b_ids and np.array_equal(a_m, b_m)

    same()
    fresh = _unit(5, dim, 8)
    for index in (flat, chunked):  # base rows rewritten (one per block), new rows added
        index.upsert(["n0", "n150", "n400", "new1", "new2"], fresh, ["event"] * 5, [True] * 5)
    same()
    assert chunked.search(fresh[2], k=1)[0][0] == "n400"
    for index in (flat, chunked):  # over half blank: compaction renumbers into one matrix
        index.remove([f"n{i}" for i in range(1, 600)])
    assert len(chunked._base) == 0
    same()


async def test_an_open_adopts_the_stored_vector_batches_without_joining_them(tmp_path):
    """A chat of more rows than one batch of the scan (pylance's: 8,192 rows): its index's base
    is the batches as read, and searches answer what an index built from the nodes' own vectors
    answers."""
    from memgraph_plugin.chats.chat_cache import PersistedChats
    from memgraph_plugin.engine.graph.store import Store
    from memgraph_plugin.engine.model.models import Node
    from memgraph_plugin.storage import LanceStorage, StorageSettings

    profile = HashingProfile(dim=32)

    def chats() -> PersistedChats:
        return PersistedChats(
            LanceStorage(StorageSettings(uri=str(tmp_path / "db"))),
            store_from_dict=lambda data: Store.from_dict(data),
            store_from_state=lambda s: Store.from_columns(s.nodes, s.edges, s.node_seq,
                                                          s.seq_counter),
            profile=profile,
        )

    first = chats()
    chat = await first.open("c")
    words = ["harbor", "storm", "guild", "garden", "dragon", "castle", "river", "gold"]
    rng = np.random.default_rng(11)
    with chat.store.transaction():
        for i in range(9000):
            text = " ".join(rng.choice(words, size=3)) + f" {i}"
            chat.store.put_node(Node(id=f"n_{i}", type="event", title=text,
                                     fields={"summary": text}))
    await first.persist("c", chat.store.take_changeset(), applied=9000)
    await first.vector_search("c", query="storm", types=None, k=3)  # builds the index
    first.storage.checkpoint_sync("c", first.storage.load_sync("c"),
                                  VectorBlock(profile.name, *first._chats["c"].index.items()))
    want = [await first.vector_search("c", query=q, types=None, k=8)
            for q in ("dragon castle", "gold river 17", "guild")]
    second = chats()
    opened = await second.open("c")
    assert opened.index is not None and len(opened.index) == 9000
    assert len(opened.index._base) == 9000 and len(opened.index._base.blocks) > 1
    got = [await second.vector_search("c", query=q, types=None, k=8)
           for q in ("dragon castle", "gold river 17", "guild")]
    assert [[i for i, _ in g] for g in got] == [[i for i, _ in w] for w in want]
    assert np.allclose([[s for _, s in g] for g in got], [[s for _, s in w] for w in want],
                       atol=1e-5)



def test_same_ids_compares_read_id_columns_like_the_id_tuples():
    import pyarrow as pa

    from memgraph_plugin.storage.vectors.vectors import same_ids

    m = _unit(3, 4, 13)
    for column in (None, pa.array(["a", "b", "c"])):
        block = VectorBlock("p", ("a", "b", "c"), m, id_column=column)
        assert same_ids(block, pa.array(["a", "b", "c"]))
        assert same_ids(block, pa.chunked_array([["a"], ["b", "c"]]))
        assert not same_ids(block, pa.array(["a", "c", "b"]))
        assert not same_ids(block, pa.array(["a", "b"]))
    block = VectorBlock("p", ("a", "b"), m[:2], id_column=pa.array(["a", "b"], pa.large_string()))
    assert same_ids(block, pa.array(["a", "b"]))  # another string type: compared as tuples
