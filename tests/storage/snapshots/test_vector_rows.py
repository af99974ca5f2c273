"""The vector tables' rows: placeholders for NaN rows, a full snapshot's rows keeping each id
with its vector and its node's columns, and rows written to a real LanceDB table (one made with
the former `coarse_list` column included)."""

from __future__ import annotations

import lancedb
import numpy as np
import pyarrow as pa

from memgraph_plugin.embedding.profile import VectorBlock
from memgraph_plugin.embedding.row_blocks import RowBlocks
from memgraph_plugin.storage import StorageSettings
from memgraph_plugin.storage.database.table_reads import Database
from memgraph_plugin.storage.database.tables import nodes_schema
from memgraph_plugin.storage.snapshots.vector_rows import vector_rows
from memgraph_plugin.storage.vectors.vectors import snapshot_vector_rows

DIM = 4


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _nodes(ids: list[str]) -> pa.Table:
    n = len(ids)
    return pa.table(
        {
            "id": pa.array(ids),
            "type": pa.array(["event"] * n),
            "title": pa.array([None if i % 3 == 0 else f"title of {ids[i]}" for i in range(n)]),
            "archived": pa.array([i % 2 == 0 for i in range(n)]),
        }
    )


def test_vector_rows_with_nan_rows_make_placeholders_from_a_list_or_an_id_column():
    matrix = _unit(20_000, DIM, seed=4)
    matrix[[3, 9000, 19_999]] = np.nan
    matrix[5, :2] = [np.inf, -np.inf]  # sums to NaN without a NaN: a vector, not a placeholder
    ids = [f"n{i}" for i in range(20_000)]
    nodes = _nodes(ids)
    from_list = vector_rows("c", 2, DIM, "hashing", ids, matrix, nodes)
    from_column = vector_rows(
        "c", 2, DIM, "hashing", pa.chunked_array([ids[:7], ids[7:]]), matrix, nodes
    )
    assert from_list.schema.equals(nodes_schema(DIM))
    assert from_list.equals(from_column)
    profiles = from_list["profile"].to_pylist()
    assert [i for i, p in enumerate(profiles) if p == ""] == [3, 9000, 19_999]
    assert set(profiles) == {"", "hashing"}
    vectors = np.asarray(from_list["vector"].combine_chunks().flatten()).reshape(-1, DIM)
    assert not np.isnan(vectors).any() and not vectors[9000].any()
    assert vectors[5, 0] == np.inf and profiles[5] == "hashing"


def test_snapshot_vector_rows_keep_each_id_with_its_vector_and_drop_gone_nodes():
    n = 500
    matrix = _unit(n, DIM, seed=1)
    ids = [f"n{i}" for i in range(n)]
    block = VectorBlock("hashing", tuple(ids), RowBlocks([matrix[:200], matrix[200:]], DIM))
    alive = ids[::-1][: n - 50]  # in another order than the vectors, 50 nodes gone
    profile, dim, table = snapshot_vector_rows("c", 1, block, _nodes(alive))
    assert (profile, dim) == ("hashing", DIM)
    got_ids = table["id"].to_pylist()
    assert got_ids == [i for i in ids if i in set(alive)]  # the vectors' order
    got = np.asarray(table["vector"].combine_chunks().flatten()).reshape(-1, DIM)
    assert np.array_equal(got, matrix[[int(i[1:]) for i in got_ids]])
    titles = dict(zip(alive, _nodes(alive)["title"].to_pylist(), strict=True))
    assert table["title"].to_pylist() == [titles[i] or "" for i in got_ids]


def test_rows_are_written_to_a_new_table_and_to_one_with_the_former_list_column(tmp_path):
    ids = [f"n{i}" for i in range(300)]
    rows = vector_rows("c", 7, DIM, "hashing", ids, _unit(300, DIM, seed=2), _nodes(ids))
    former = pa.schema([*nodes_schema(DIM), pa.field("coarse_list", pa.int32())])
    db = lancedb.connect(str(tmp_path))
    db.create_table("nodes", schema=nodes_schema(DIM))
    db.create_table("old_nodes", schema=former)
    database = Database(StorageSettings(uri=str(tmp_path)))
    for name in ("nodes", "old_nodes"):
        table = database.open_table(name)
        table.add(rows)
        read = table.latest().to_table() if hasattr(table, "latest") else table.to_arrow()
        assert read.select(nodes_schema(DIM).names).equals(rows)
