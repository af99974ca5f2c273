"""A store's edge map and adjacency straight from a snapshot's edge columns: what
`columnar.decode_edge_columns` plus `StoreLoading._load_edges` give, computed over whole columns.

Normalising (lower-case types, a symmetric relation once with the smaller id first), dropping
self-edges, edges with a missing end and duplicates (the first wins) are numpy and pyarrow work,
and the result is kept as arrays (`lazy_edges.EdgeArrays`, with CSR indexes by source and by
target): no Python object per edge at open; the edge map and adjacency make a record on the
first read of a key or a node's edges (`LazyEdges`, `LazyAdjacency`).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model.edge_records import EdgeRec
from ..model.models import EdgeKey
from ..model.schema import SYMMETRIC_RELATIONS
from .lazy_edges import EdgeArrays, LazyAdjacency, LazyEdges

__all__ = ["EdgeMaps", "load_edge_columns"]

EdgeMaps = tuple[dict[EdgeKey, EdgeRec], dict[str, list[EdgeRec]], dict[str, list[EdgeRec]]]


def _flat(column: Any) -> Any:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _np(array: Any, dtype: Any) -> np.ndarray:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=dtype)


def _first_of_each(composite: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`rows` without those whose `composite` key an earlier row has (row order kept)."""
    keys = composite[rows]
    ordered = np.sort(keys)
    if not len(ordered) or not (ordered[1:] == ordered[:-1]).any():
        return rows  # no key twice: the usual case, one sort instead of `unique`'s argsort
    _values, first = np.unique(keys, return_index=True)
    return rows[np.sort(first)]


def load_edge_columns(
    edges: Any, ids: Any, id_list: list[str], row_of: dict[str, int]
) -> EdgeMaps | None:
    """`(edge map, out adjacency, in adjacency)` of an edge state table over the nodes whose id
    column is `ids` (`id_list`: the node map's own id strings, by row; `row_of`: id -> row),
    lazy over the columns' arrays; None when a row needs the per-edge path (stored as raw
    JSON, or an empty or missing end or type)."""
    m = edges.num_rows
    if not m:
        return {}, {}, {}
    if pc.any(pc.is_valid(edges["raw"])).as_py():
        return None
    src, dst, etype = _flat(edges["src"]), _flat(edges["dst"]), _flat(edges["type"])
    for col in (src, dst, etype):
        if col.null_count or pc.any(pc.equal(pc.utf8_length(col), 0)).as_py():
            return None
    lower = pc.utf8_lower(etype)
    enc = pc.dictionary_encode(lower)
    type_code = _np(enc.indices, np.int64)
    types = [sys.intern(t) for t in enc.dictionary.to_pylist()]
    symmetric = np.asarray([t in SYMMETRIC_RELATIONS for t in types], dtype=bool)
    s_row = _np(pc.fill_null(pc.index_in(src, value_set=ids), -1), np.int64)
    t_row = _np(pc.fill_null(pc.index_in(dst, value_set=ids), -1), np.int64)
    swap = symmetric[type_code] & _np(pc.less(dst, src), bool)
    s_row, t_row = np.where(swap, t_row, s_row), np.where(swap, s_row, t_row)
    keep = (s_row >= 0) & (t_row >= 0) & (s_row != t_row)
    n, k = len(id_list), max(len(types), 1)
    composite = (s_row * n + t_row) * k + type_code  # < 2**63 below ~10**9 nodes
    rows = _first_of_each(composite, np.flatnonzero(keep))  # serial order = row order
    seq_col = _flat(edges["seq_to"])
    if len(rows) != m:
        seq_col = seq_col.take(pa.array(rows))
    arrays = EdgeArrays(
        id_list,
        row_of,
        s_row[rows],
        t_row[rows],
        type_code[rows],
        types,
        _np(pc.fill_null(seq_col, 0), np.int64),
        _np(seq_col.is_valid(), bool),
    )
    return (
        LazyEdges(arrays),
        LazyAdjacency(arrays, outgoing=True),
        LazyAdjacency(arrays, outgoing=False),
    )
