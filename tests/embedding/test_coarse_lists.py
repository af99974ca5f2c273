"""Coarse lists (IVF) of the in-memory vector index: bounded rows per search, exact scores, and
a recall against the exact search that a test fails on when it drops."""

from __future__ import annotations

import asyncio

import numpy as np

from memgraph_plugin.embedding import HashingProfile
from memgraph_plugin.embedding.coarse import CoarseLists
from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.storage import LanceStorage, StorageSettings


def _clustered(n: int, dim: int, *, clusters: int, noise: float, seed: int) -> np.ndarray:
    """Unit rows around `clusters` random centres (the shape real embeddings have)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim)).astype(np.float32)
    rows = centres[rng.integers(0, clusters, n)] + noise * rng.normal(size=(n, dim))
    rows = rows.astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _index(matrix: np.ndarray) -> VectorIndex:
    n = matrix.shape[0]
    return VectorIndex.from_arrays(
        "test",
        [f"n{i}" for i in range(n)],
        matrix,
        ["event"],
        np.zeros(n, dtype=np.int64),
        np.ones(n, dtype=bool),
    )


def _queries(matrix: np.ndarray, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picked = matrix[rng.integers(0, matrix.shape[0], count)]
    q = picked + 0.3 * rng.normal(size=picked.shape).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_probing_every_row_gives_the_exact_top_k(monkeypatch):
    matrix = _clustered(3000, 32, clusters=20, noise=0.5, seed=1)
    index = _index(matrix)
    exact = [index.search(q, k=15) for q in _queries(matrix, 20, 2)]
    lists = CoarseLists.build(index._rows, np.ones(3000, dtype=bool))
    for q in _queries(matrix, 20, 2):
        rows = lists.probe(q, budget=3000)
        assert sorted(rows.tolist()) == list(range(3000))  # every row, each once
    assert index.build_coarse()
    # a budget of every row: the same answer as exact search
    monkeypatch.setattr("memgraph_plugin.embedding.index.ROW_BUDGET", 3000)
    got = [index.search(q, k=15) for q in _queries(matrix, 20, 2)]
    assert [[i for i, _ in g] for g in got] == [[i for i, _ in e] for e in exact]
    assert np.allclose([[s for _, s in g] for g in got], [[s for _, s in e] for e in exact])


def test_recall_of_the_coarse_search_against_exact():
    """Rows per search bounded (a tenth of the index here), recall@10 at least 0.9 on clustered
    vectors; scores are the exact cosines."""
    matrix = _clustered(20_000, 48, clusters=60, noise=0.6, seed=3)
    index = _index(matrix)
    queries = _queries(matrix, 40, 4)
    exact = [index.search(q, k=10) for q in queries]
    assert index.build_coarse() and index.coarse is not None
    lists = index.coarse
    recall = []
    for q, want in zip(queries, exact, strict=True):
        rows = lists.probe(q, budget=2000)
        assert len(rows) < 4000  # bounded: the lists reaching the budget, not the index
        got = np.argsort(-(matrix[rows] @ q))[:10]
        recall.append(len({f"n{rows[i]}" for i in got} & {i for i, _ in want}) / 10)
    assert np.mean(recall) >= 0.9, np.mean(recall)
    for q, want in zip(queries, exact, strict=True):  # through search: exact scores
        scores = dict(want)
        for node_id, score in index.search(q, k=10):
            if node_id in scores:
                assert abs(score - scores[node_id]) < 1e-5


def test_rows_written_after_the_build_are_found_and_removed_ones_never():
    matrix = _clustered(4000, 32, clusters=16, noise=0.5, seed=5)
    index = _index(matrix)
    assert index.build_coarse()
    target = _clustered(1, 32, clusters=1, noise=0.0, seed=99)[0]
    index.upsert(["new"], target[None, :], ["event"], [True])  # added after the lists
    assert index.search(target, k=1)[0][0] == "new"
    index.upsert(["n7"], target[None, :], ["event"], [True])  # a base row rewritten
    top = [i for i, _ in index.search(target, k=5)]
    assert set(top[:2]) == {"new", "n7"} and len(set(top)) == 5  # each row once
    index.remove(["new"])
    assert index.search(target, k=1)[0][0] == "n7"
    assert index.coarse is not None  # still in use; nothing renumbered


def test_a_compaction_drops_the_lists_and_search_stays_right():
    matrix = _clustered(300, 16, clusters=4, noise=0.5, seed=6)
    index = _index(matrix)
    assert index.build_coarse()
    index.remove([f"n{i}" for i in range(200)])  # over half blank: rows are renumbered
    assert index.coarse is None
    q = matrix[250]
    assert index.search(q, k=1)[0][0] == "n250"


async def test_a_large_chat_searches_through_coarse_lists(tmp_path):
    """Past `coarse_threshold` the first search is exact and builds the lists in the
    background; later searches read the lists and agree with the exact top hit."""
    from memgraph_plugin.chats.chat_cache import PersistedChats
    from memgraph_plugin.engine.graph.store import Store
    from memgraph_plugin.engine.model.models import Node

    chats = PersistedChats(
        LanceStorage(StorageSettings(uri=str(tmp_path / "db"))),
        store_from_dict=lambda data: Store.from_dict(data),
        profile=HashingProfile(dim=64),
    )
    chats.coarse_threshold = 300
    words = ["harbor", "storm", "guild", "garden", "dragon", "castle", "river", "gold"]
    rng = np.random.default_rng(7)
    chat = await chats.open("big")
    with chat.store.transaction():
        for i in range(400):
            text = " ".join(rng.choice(words, size=3))
            chat.store.put_node(Node(id=f"n{i}", type="event", title=text, fields={"s": text}))
    await chats.persist("big", chat.store.take_changeset(), applied=400)
    first = await chats.vector_search("big", query="dragon castle gold", types=None, k=5)
    assert chats.last_search_mode == "exact"
    index = chat.index
    assert index is not None
    task = index.coarse_task  # started by that search (it may be done already)
    if task is not None:
        await asyncio.to_thread(task.join)
    assert index.coarse is not None
    got = await chats.vector_search("big", query="dragon castle gold", types=None, k=5)
    assert chats.last_search_mode == "coarse"
    assert got[0] == first[0]


def test_the_list_ordered_copy_scores_what_the_rows_hold():
    """A coarse search reads each probed list as one slice of its list-ordered copy: the rows
    and dot products it gives are those of the rows themselves, and every probed row once."""
    matrix = _clustered(5000, 32, clusters=25, noise=0.5, seed=8)
    lists = CoarseLists.build(_index(matrix)._rows, np.ones(5000, dtype=bool))
    assert lists.packed is not None and lists.packed.shape == (5000, 32)
    for q in _queries(matrix, 10, 9):
        rows, scores = lists.scored(q, budget=600)
        assert sorted(rows.tolist()) == sorted(lists.probe(q, budget=600).tolist())
        assert np.allclose(scores, matrix[rows] @ q, atol=1e-5)


def test_a_row_rewritten_in_place_after_the_build_is_scored_by_its_new_vector():
    """Rows of the growable part are rewritten in place; the list-ordered copy still holds the
    old vector, so the search must read the new one (and list the row once)."""
    matrix = _clustered(2000, 32, clusters=10, noise=0.5, seed=10)
    index = VectorIndex(32, "test")
    index.upsert([f"n{i}" for i in range(2000)], matrix, ["event"] * 2000, [True] * 2000)
    assert index.build_coarse()
    old = matrix[42]
    far = -old  # the opposite direction: its old score for `old` was 1.0, now -1.0
    index.upsert(["n42"], far[None, :], ["event"], [True])
    assert index.search(old, k=1)[0][0] != "n42"
    ranked = index.search(old, k=2000)
    assert [i for i, _ in ranked].count("n42") == 1
    assert abs(dict(ranked)["n42"] + 1.0) < 1e-5
    top = index.search(far, k=3)
    assert top[0][0] == "n42" and abs(top[0][1] - 1.0) < 1e-5
    assert len({i for i, _ in index.search(far, k=50)}) == 50  # each row once
    index.remove(["n42"])
    assert "n42" not in {i for i, _ in index.search(far, k=50)}


def test_stored_lists_out_of_row_order_gather_their_rows():
    """Lists adopted for rows not stored in list order (`adopt_coarse`) keep no ordered rows
    and gather the probed ones: with a budget of every row, the exact answer."""
    matrix = _clustered(2000, 32, clusters=12, noise=0.5, seed=10)
    built = CoarseLists.build(_index(matrix)._rows, np.ones(2000, dtype=bool))
    assignment = np.empty(2000, dtype=np.int64)
    for lst in range(built.centroids.shape[0]):
        s, e = built._starts[lst], built._starts[lst + 1]
        assignment[built._order[s:e]] = lst
    index = _index(matrix)
    exact = [index.search(q, k=10) for q in _queries(matrix, 10, 11)]
    assert index.adopt_coarse(built.centroids, assignment)
    assert index.coarse is not None and index.coarse.packed is None
    for q, want in zip(_queries(matrix, 10, 11), exact, strict=True):
        rows, scores = index.coarse.scored(q, 2000, index._rows)
        assert sorted(rows.tolist()) == list(range(2000))
        assert np.allclose(scores, matrix[rows] @ q, atol=1e-5)
        got = index._coarse_search(q, 10, index._live[:2000], 2000)
        assert got is not None and [i for i, _ in got] == [i for i, _ in want]
    assert not index.adopt_coarse(built.centroids, assignment[:10] + 999)  # does not fit
