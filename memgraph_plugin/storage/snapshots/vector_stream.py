"""A full snapshot's vector rows in another order than the vectors are held (coarse-list order),
gathered batch by batch while LanceDB writes them instead of as one list-ordered copy.

At 100k rows of 384 floats the whole copy is 150 MB of fresh memory, whose first touches cost
more CPU than the gather itself; batches of `BATCH` rows reuse the same few buffers (and the
write reads each while it is still in cache). The rows written are the same as `vector_rows`
makes of the gathered matrix (`tests/storage/snapshots/test_vector_stream.py` compares them).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.embedding.row_blocks import RowBlocks
from memgraph_plugin.storage.snapshots.vector_lists import list_array
from memgraph_plugin.storage.tables import LIST_COLUMN, nodes_schema

BATCH = 8192  # rows gathered per record batch (12 MB at 384 floats: stays reused, in cache)


def blank_rows(matrix: np.ndarray) -> np.ndarray:
    """One flag per row of `matrix`: whether it holds a NaN (a placeholder without a vector).
    A row with a NaN sums to NaN: only those rows are checked cell by cell (no (n, dim)
    temporary of flags, one pass, one call without the GIL)."""
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, checked below like any NaN sum
        blank = np.isnan(matrix.sum(axis=1))
    if blank.any():
        maybe = np.flatnonzero(blank)
        blank[maybe] = np.isnan(matrix[maybe]).any(axis=1)
    return blank


def row_meta(
    chat_id: str,
    version: int,
    id_array: pa.Array,
    nodes: pa.Table,
    lists: np.ndarray | None,
    at: pa.Array | None = None,
) -> dict[str, pa.Array]:
    """The vector rows' columns other than `profile` and `vector`, one row per id: its node's
    type, title and archived flag (from the node state table `nodes`; `at`: each id's row
    there, when known) and its coarse list."""
    n = len(id_array)
    if at is None:
        at = pc.index_in(id_array, value_set=nodes["id"])
    at = _array(at)
    meta = nodes.select(["type", "title", "archived"]).take(at)
    return {
        "chat_id": pa.array([chat_id] * n, pa.string()),
        "ckpt_version": pa.array(np.full(n, version, dtype=np.int64)),
        "id": _array(id_array),
        "type": _array(pc.fill_null(meta["type"], "")),
        "title": _array(pc.fill_null(meta["title"], "")),
        "archived": _array(pc.fill_null(meta["archived"], False)),
        LIST_COLUMN: list_array(lists, n),
    }


def vector_columns(matrix: np.ndarray, profile: str, dim: int) -> dict[str, pa.Array]:
    """The `profile` and `vector` columns of the rows of `matrix` (a NaN row: a placeholder,
    written as zeros with an empty profile)."""
    blank = blank_rows(matrix)
    if blank.any():
        matrix = np.where(blank[:, None], 0.0, matrix).astype(np.float32)
    return {
        "profile": pc.if_else(pa.array(blank), "", profile),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), dim),
    }


def _array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """`column` as one array (a record batch takes no chunked columns)."""
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


class VectorRowStream:
    """The vector rows of the given `picked` rows of `rows`, in that order: their columns but
    the vectors made now, the vectors gathered batch by batch by `reader` (each call a new
    reader: a retried write reads them again)."""

    __slots__ = ("_meta", "_rows", "_picked", "profile", "dim")

    def __init__(
        self,
        meta: dict[str, pa.Array],
        rows: RowBlocks,
        picked: np.ndarray,
        profile: str,
        dim: int,
    ) -> None:
        self._meta = meta
        self._rows = rows
        self._picked = np.asarray(picked, dtype=np.int64)
        self.profile = profile
        self.dim = int(dim)

    @property
    def num_rows(self) -> int:
        return int(self._picked.shape[0])

    @property
    def has_lists(self) -> bool:
        """Whether some row has a coarse list."""
        column = self._meta[LIST_COLUMN]
        return column.null_count < len(column)

    def schema(self, with_lists: bool = True) -> pa.Schema:
        schema = nodes_schema(self.dim)
        if not with_lists:
            schema = schema.remove(schema.get_field_index(LIST_COLUMN))
        return schema

    def _batches(self, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
        for start in range(0, self.num_rows, BATCH):
            end = min(self.num_rows, start + BATCH)
            matrix = self._rows.take(self._picked[start:end])
            columns = vector_columns(matrix, self.profile, self.dim)
            yield pa.record_batch(
                [
                    columns[f.name] if f.name in columns else self._meta[f.name][start:end]
                    for f in schema
                ],
                schema=schema,
            )

    def reader(self, with_lists: bool = True) -> pa.RecordBatchReader:
        """The rows as a stream of record batches (`with_lists`: with the `coarse_list`
        column)."""
        schema = self.schema(with_lists)
        return pa.RecordBatchReader.from_batches(schema, self._batches(schema))

    def table(self, with_lists: bool = True) -> pa.Table:
        """The rows as one table (gathered whole: for tests and small writes)."""
        return self.reader(with_lists).read_all()
