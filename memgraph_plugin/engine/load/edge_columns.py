"""A store's edge map and adjacency straight from a snapshot's edge columns: what
`columnar.decode_edge_columns` plus `StoreLoading._load_edges` give, computed over whole columns.

Normalising (lower-case types, a symmetric relation once with the smaller id first), dropping
self-edges, edges with a missing end and duplicates (the first wins), and grouping by end are
numpy and pyarrow work; Python only makes each edge's record and key (C-level `zip`/`map`, no
Python call per edge) and one slice of the records per node with edges.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model.edge_records import EdgeRec
from ..model.models import EdgeKey
from ..model.schema import SYMMETRIC_RELATIONS

__all__ = ["EdgeMaps", "load_edge_columns"]

EdgeMaps = tuple[dict[EdgeKey, EdgeRec], dict[str, list[EdgeRec]], dict[str, list[EdgeRec]]]
_key_of = functools.partial(tuple.__new__, EdgeKey)  # EdgeKey(...) without a Python call


def _flat(column: Any) -> Any:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _np(array: Any, dtype: Any) -> np.ndarray:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=dtype)


def _grouped(
    rows: np.ndarray, recs: list[EdgeRec], id_objs: np.ndarray
) -> dict[str, list[EdgeRec]]:
    """node id -> its records in serial order, the nodes in order of their first record."""
    if not len(rows):
        return {}
    order = np.argsort(rows, kind="stable")
    ordered = list(map(recs.__getitem__, order.tolist()))
    by_row = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], by_row[1:] != by_row[:-1])))
    ends = np.append(starts[1:], len(by_row))
    firsts = order[starts]  # serial of each group's first record
    sequence = np.argsort(firsts, kind="stable")
    names = id_objs[by_row[starts[sequence]]].tolist()
    return {
        name: ordered[a:b]
        for name, a, b in zip(
            names, starts[sequence].tolist(), ends[sequence].tolist(), strict=True
        )
    }


def load_edge_columns(edges: Any, ids: Any, id_objs: np.ndarray) -> EdgeMaps | None:
    """`(edge map, out adjacency, in adjacency)` of an edge state table over the nodes whose id
    column is `ids` (`id_objs`: the node map's own id strings, by row); None when a row needs
    the per-edge path (stored as raw JSON, or an empty or missing end or type)."""
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
    n, k = len(id_objs), max(len(types), 1)
    composite = (s_row * n + t_row) * k + type_code  # < 2**63 below ~10**9 nodes
    rows = np.flatnonzero(keep)
    _values, first = np.unique(composite[rows], return_index=True)
    rows = rows[np.sort(first)]  # the first of each key, in row order = serial order
    seq_col = _flat(edges["seq_to"]).take(pa.array(rows))
    has_seq = _np(seq_col.is_valid(), bool)
    seq_np = _np(pc.fill_null(seq_col, 0), np.int64)
    uniq, inverse = np.unique(seq_np, return_inverse=True)  # one int object per value
    seq_objs = np.asarray([*uniq.tolist(), None], dtype=object)
    seqs = seq_objs[np.where(has_seq, inverse.reshape(-1), len(uniq))].tolist()
    type_objs = np.asarray(types, dtype=object)
    sources, targets = id_objs[s_row[rows]].tolist(), id_objs[t_row[rows]].tolist()
    kinds = type_objs[type_code[rows]].tolist()
    recs: list[EdgeRec] = list(zip(sources, targets, kinds, seqs, range(len(rows)), strict=True))
    table = dict(zip(map(_key_of, zip(sources, kinds, targets, strict=True)), recs, strict=True))
    return (
        table,
        _grouped(s_row[rows], recs, id_objs),
        _grouped(t_row[rows], recs, id_objs),
    )
