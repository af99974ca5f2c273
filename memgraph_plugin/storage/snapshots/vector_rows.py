"""Rows of the vector tables (`nodes`, `nodes_d<dim>`): one per node vector of a snapshot row
set, with its node's type, title and archived flag; a placeholder row (empty profile, zeros)
for a node without a vector."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.storage.database.tables import nodes_schema


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


def vector_rows(
    chat_id: str,
    version: int,
    dim: int,
    profile: str,
    ids: Sequence[str] | pa.Array | pa.ChunkedArray,
    matrix: np.ndarray | None,
    nodes: pa.Table,
    at: pa.Array | None = None,
) -> pa.Table:
    """Rows of the vector table: `matrix` row i is the vector of `ids[i]`; a None matrix (or a
    NaN row) makes placeholder rows (empty profile). `nodes`: a node state table holding the ids
    (their type, title and archived flag are copied; `at`: each id's row there, when known)."""
    n = len(ids)
    if matrix is None:
        matrix = np.full((n, dim), np.nan, dtype=np.float32)
    matrix = np.ascontiguousarray(matrix, dtype=np.float32).reshape(n, dim)
    id_array = _array(ids) if isinstance(ids, pa.Array | pa.ChunkedArray) else None
    if id_array is None:
        id_array = pa.array(list(ids), pa.string())
    if at is None:
        at = pc.index_in(id_array, value_set=nodes["id"])
    meta = nodes.select(["type", "title", "archived"]).take(_array(at))
    blank = blank_rows(matrix)
    if blank.any():
        matrix = np.where(blank[:, None], 0.0, matrix).astype(np.float32)
    columns = {
        "chat_id": pa.array([chat_id] * n, pa.string()),
        "ckpt_version": pa.array(np.full(n, version, dtype=np.int64)),
        "id": id_array,
        "type": _array(pc.fill_null(meta["type"], "")),
        "title": _array(pc.fill_null(meta["title"], "")),
        "archived": _array(pc.fill_null(meta["archived"], False)),
        "profile": pc.if_else(pa.array(blank), "", profile),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), dim),
    }
    schema = nodes_schema(dim)
    return pa.table({f.name: columns[f.name] for f in schema}, schema=schema)


def _array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """`column` as one array (a record batch takes no chunked columns)."""
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
