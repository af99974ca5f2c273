"""The import's coarse lists read their rows without gathers and run their products on one BLAS
thread; the lists are the same as the plain definition's (k-means on `take`n rows, then every row
assigned through `take`)."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
from threadpoolctl import ThreadpoolController

from memgraph_plugin.embedding import coarse
from memgraph_plugin.embedding.blas_threads import one_blas_thread
from memgraph_plugin.embedding.coarse import assign, assign_all, train
from memgraph_plugin.embedding.profile import VectorBlock
from memgraph_plugin.embedding.row_blocks import RowBlocks
from memgraph_plugin.storage.snapshots.snapshots import vector_rows
from memgraph_plugin.storage.snapshots.vector_lists import SEED, full_lists
from memgraph_plugin.storage.snapshots.vector_stream import VectorRowStream
from memgraph_plugin.storage.vectors.vectors import snapshot_vector_rows


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _blocks(matrix: np.ndarray, cuts: list[int]) -> RowBlocks:
    edges = [0, *cuts, matrix.shape[0]]
    return RowBlocks([matrix[a:b] for a, b in zip(edges, edges[1:], strict=False)], matrix.shape[1])


def test_assign_all_gives_what_assign_through_take_gives(monkeypatch):
    monkeypatch.setattr(coarse, "_CHUNK", 7)  # chunks that straddle no block but end mid-block
    matrix = _unit(300, 16, seed=1)
    rows = _blocks(matrix, [5, 6, 100, 250])  # uneven blocks, one of a single row
    centroids = train(rows.take, np.ones(300, dtype=bool))
    expected = assign(centroids, rows.take, np.arange(300, dtype=np.int64))
    got = assign_all(centroids, rows)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)
    assert len(set(got.tolist())) > 1  # a real partition, not one list


def test_full_lists_are_the_plain_k_means_and_assignment():
    matrix = _unit(2000, 24, seed=2)
    rows = _blocks(matrix, [700, 1500])
    centroids, lists = full_lists(rows, None, None)
    plain_centroids = train(rows.take, np.ones(2000, dtype=bool), seed=SEED)
    plain = assign(plain_centroids, rows.take, np.arange(2000, dtype=np.int64))
    np.testing.assert_array_equal(centroids, plain_centroids)
    np.testing.assert_array_equal(lists, plain)


def _blas_threads() -> int:
    return min(
        lib["num_threads"] for lib in ThreadpoolController().info() if lib["user_api"] == "blas"
    )


def test_one_blas_thread_holds_while_any_thread_is_inside_and_restores_after():
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        assert _blas_threads() == 2
        entered, release = threading.Event(), threading.Event()

        def other() -> None:
            with one_blas_thread():
                entered.set()
                release.wait(timeout=30)

        worker = threading.Thread(target=other)
        worker.start()
        assert entered.wait(timeout=30)
        with one_blas_thread():
            assert _blas_threads() == 1
        assert _blas_threads() == 1  # the other thread is still inside
        release.set()
        worker.join(timeout=30)
        assert _blas_threads() == 2


def test_snapshot_vector_rows_in_list_order_keep_each_id_with_its_vector():
    matrix = _unit(1200, 8, seed=3)
    ids = tuple(f"n{i}" for i in range(1200))
    nodes = pa.table(
        {
            "id": pa.array(ids[::-1]),  # node table in another order than the vectors
            "type": pa.array(["event"] * 1200),
            "title": pa.array([f"title of n{i}" for i in range(1200)][::-1]),
            "archived": pa.array([False] * 1200),
        }
    )
    block = VectorBlock(profile="hashing", ids=ids, matrix=matrix)
    (profile, dim, rows), centroids = snapshot_vector_rows("c", 1, block, nodes, coarse_rows=100)
    assert isinstance(rows, VectorRowStream)  # list order: gathered while written
    table = rows.table()
    assert (profile, dim) == ("hashing", 8) and centroids is not None
    got_ids = table["id"].to_pylist()
    assert sorted(got_ids) == sorted(ids) and got_ids != list(ids)  # list order, every id once
    got = np.asarray(table["vector"].combine_chunks().flatten()).reshape(-1, 8)
    np.testing.assert_array_equal(got, matrix[[int(i[1:]) for i in got_ids]])
    lists = np.asarray(table["coarse_list"].to_numpy())
    assert np.all(np.diff(lists) >= 0)
    assert table["title"].to_pylist() == [f"title of {i}" for i in got_ids]


def test_vector_rows_with_nan_rows_make_placeholders_from_a_list_or_an_id_column():
    matrix = _unit(20_000, 4, seed=4)  # more rows than one chunk of the NaN check
    matrix[[3, 9000, 19_999]] = np.nan
    matrix[5, :2] = [np.inf, -np.inf]  # sums to NaN without a NaN: a vector, not a placeholder
    ids = [f"n{i}" for i in range(20_000)]
    nodes = pa.table(
        {
            "id": pa.array(ids),
            "type": pa.array(["event"] * 20_000),
            "title": pa.array(ids),
            "archived": pa.array([False] * 20_000),
        }
    )
    from_list = vector_rows("c", 2, 4, "hashing", ids, matrix, nodes)
    from_column = vector_rows(
        "c", 2, 4, "hashing", pa.chunked_array([ids[:7], ids[7:]]), matrix, nodes
    )
    assert from_list.equals(from_column)
    profiles = from_list["profile"].to_pylist()
    assert [i for i, p in enumerate(profiles) if p == ""] == [3, 9000, 19_999]
    assert set(profiles) == {"", "hashing"}
    vectors = np.asarray(from_list["vector"].combine_chunks().flatten()).reshape(-1, 4)
    assert not np.isnan(vectors).any() and not vectors[9000].any()
    assert vectors[5, 0] == np.inf and profiles[5] == "hashing"
