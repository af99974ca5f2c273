"""`VectorRowStream` (a full snapshot's vector rows gathered batch by batch while written) gives
the same rows as `vector_rows` of the gathered matrix, and writes them to a real LanceDB table."""

from __future__ import annotations

import lancedb
import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin.embedding.row_blocks import RowBlocks
from memgraph_plugin.storage import StorageSettings
from memgraph_plugin.storage.snapshots import vector_stream
from memgraph_plugin.storage.snapshots.snapshots import vector_rows
from memgraph_plugin.storage.snapshots.vector_stream import VectorRowStream, row_meta
from memgraph_plugin.storage.table_reads import Database, TableHandle
from memgraph_plugin.storage.tables import LIST_COLUMN, nodes_schema

DIM = 4


def _nodes(n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([f"n{i}" for i in range(n)][::-1]),
            "type": pa.array(["event"] * n),
            "title": pa.array(
                [None if i % 3 == 0 else f"t{i}" for i in range(n)][::-1], pa.string()
            ),
            "archived": pa.array([i % 2 == 0 for i in range(n)][::-1]),
        }
    )


def _stream(matrix: np.ndarray, picked: np.ndarray, lists: np.ndarray | None, split: int):
    n = matrix.shape[0]
    ids = pa.array([f"n{i}" for i in range(n)])
    blocks = RowBlocks([matrix[:split], matrix[split:]], DIM)  # two blocks, like a read
    meta = row_meta("c", 7, ids.take(pa.array(picked)), _nodes(n), lists)
    stream = VectorRowStream(meta, blocks, picked, "hashing", DIM)
    plain = vector_rows(
        "c", 7, DIM, "hashing", ids.take(pa.array(picked)), matrix[picked], _nodes(n), lists
    )
    return stream, plain


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 60),
    seed=st.integers(0, 1000),
    batch=st.integers(1, 9),
    with_lists=st.booleans(),
    nans=st.booleans(),
)
def test_stream_rows_equal_vector_rows_of_the_gathered_matrix(n, seed, batch, with_lists, nans):
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    if nans:
        matrix[rng.random(n) < 0.3, int(rng.integers(DIM))] = np.nan  # placeholders
    picked = rng.permutation(n)[: int(rng.integers(1, n + 1))]
    lists = rng.integers(-1, 5, picked.shape[0]).astype(np.int32) if with_lists else None
    stream, plain = _stream(matrix, picked, lists, int(rng.integers(0, n + 1)))
    old, vector_stream.BATCH = vector_stream.BATCH, batch
    try:
        got = stream.table()
    finally:
        vector_stream.BATCH = old
    assert got.schema.equals(nodes_schema(DIM))
    assert got.equals(plain)
    assert stream.num_rows == plain.num_rows
    assert stream.has_lists == (plain[LIST_COLUMN].null_count < plain.num_rows)
    without = stream.table(with_lists=False)
    assert without.equals(plain.drop_columns([LIST_COLUMN]))


def test_stream_writes_its_rows_to_a_lance_table_in_one_append(tmp_path):
    n = 20_000  # several batches
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    picked = rng.permutation(n)
    stream, plain = _stream(matrix, picked, np.sort(rng.integers(0, 9, n)).astype(np.int32), 777)
    lancedb.connect(str(tmp_path)).create_table("nodes_d4", schema=nodes_schema(DIM))
    table = Database(StorageSettings(uri=str(tmp_path))).open_table("nodes_d4")
    assert isinstance(table, TableHandle)  # through pylance: the stream is not read whole
    before = table.version
    table.add(stream.reader())
    assert table.version == before + 1  # one commit
    assert table.latest().to_table().equals(plain)
