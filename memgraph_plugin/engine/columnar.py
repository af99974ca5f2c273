"""A store's records and indices straight from a snapshot's columns (pyarrow tables, see
`storage/columns.py`): what `json_codec.decode_graph` plus the bulk load give for the same graph,
without a JSON dict per node.

`load_node_columns` is the open's quick path: the indices (visibility, the pool order, parents'
children, pool anchors) are computed over whole columns with pyarrow and numpy, Python only
makes each `Node` (a few attribute writes) and each index's entries; a node's fields stay their
stored JSON text until first read (`frozen.JsonFields`). A table with rows stored as raw JSON
(values the columns cannot hold) or repeated ids takes the per-node path, `decode_columns`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .candidate_pool import PoolKey
from .frozen import EMPTY, JsonFields
from .json_codec import _ID_NUM, _edges_from_raw, _freeze_fields, node_from_dict
from .models import Edge, EdgeKey, Node
from .schema import Schema, is_diagnostic_type

_new = object.__new__
_set = object.__setattr__
_intern = sys.intern
_ASCII_ID = r"^n_[0-9]{1,18}$"  # cast to int64 in pyarrow; any other n_<digits> id: Python's re
_NONE = -1  # "no row" in row-index arrays


def _column(table: Any, name: str) -> list[Any]:
    return table[name].to_pylist()  # type: ignore[no-any-return]


def _parse_all(texts: list[str | None]) -> list[Any]:
    present = [t for t in texts if t is not None]
    if not present:
        return [None] * len(texts)
    values = iter(json.loads("[" + ",".join(present) + "]"))
    return [None if t is None else next(values) for t in texts]


def decode_columns(
    nodes: Any, edges: Any, node_seq: int, seq_counter: int
) -> tuple[dict[str, Node], dict[EdgeKey, Edge], int, int]:
    """`decode_graph` of the graph held by a node and an edge state table (node by node)."""
    ids = _column(nodes, "id")
    types, levels, titles = _column(nodes, "type"), _column(nodes, "level"), _column(nodes, "title")
    parents, children = _column(nodes, "parent_id"), _column(nodes, "children_ids")
    seqs, depths = _column(nodes, "seq_to"), _column(nodes, "semantic_depth")
    rollups, archived = _column(nodes, "semantic_rollup"), _column(nodes, "archived")
    sups, raws = _column(nodes, "superseded_by"), _column(nodes, "raw")
    fields = _parse_all(_column(nodes, "fields"))
    out: dict[str, Node] = {}
    for i, nid in enumerate(ids):
        raw = raws[i]
        if raw is not None:
            out[nid] = node_from_dict(json.loads(raw), key=nid)
            continue
        f = fields[i]
        node = _new(Node)
        _set(node, "id", nid)
        _set(node, "type", types[i])
        _set(node, "level", levels[i] or "semantic")
        _set(node, "title", titles[i])
        _set(node, "fields", _freeze_fields(f) if f else EMPTY)
        _set(node, "parent_id", parents[i])
        _set(node, "children_ids", tuple(children[i]))
        _set(node, "seq_to", seqs[i])
        _set(node, "semantic_depth", depths[i])
        _set(node, "semantic_rollup", rollups[i])
        _set(node, "archived", archived[i])
        _set(node, "floor_range", None)
        _set(node, "superseded_by", sups[i] or None)
        out[nid] = node
    for nid in out:
        m = _ID_NUM.fullmatch(nid)
        if m:
            node_seq = max(node_seq, int(m.group(1)))
    return out, decode_edge_columns(edges, out), node_seq, seq_counter


def decode_edge_columns(edges: Any, nodes: dict[str, Node]) -> dict[EdgeKey, Edge]:
    """The edges of an edge state table, normalised and by key (as `decode_graph` gives them)."""
    src, etype, dst = _column(edges, "src"), _column(edges, "type"), _column(edges, "dst")
    eseq, eraw = _column(edges, "seq_to"), _column(edges, "raw")
    raw_edges: list[dict[str, Any]] = []
    for i in range(len(src)):
        if eraw[i] is not None:
            raw_edges.append(json.loads(eraw[i]))
        elif eseq[i] is None:
            raw_edges.append({"from": src[i], "to": dst[i], "type": etype[i]})
        else:
            raw_edges.append({"from": src[i], "to": dst[i], "type": etype[i], "seqTo": eseq[i]})
    return _edges_from_raw(raw_edges, nodes)


@attrs.frozen
class LoadedColumns:
    """A graph's records and the indices the bulk load fills, computed from its columns."""

    nodes: dict[str, Node]  # by id, in row order
    kids: dict[str, list[str]]  # parent id -> children ids in row order
    visible: set[str]
    pool_keys: list[PoolKey]  # the pool's recency keys, in key order
    pool_nodes: list[Node]  # its nodes, in the same order
    pool_types: list[str]  # their lower-case types
    type_rows: dict[str, list[int]]  # lower-case type -> positions in the pool, in order
    anchors: dict[str, str | None]
    node_seq: int


def _flat(column: Any) -> Any:
    """One pyarrow array from a table column (a chunked array)."""
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _codes(column: Any) -> tuple[np.ndarray, list[Any]]:
    """Dictionary codes per row and the distinct values (a null is a value of its own)."""
    enc = pc.dictionary_encode(_flat(column), null_encoding="encode")
    return (
        np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64),
        enc.dictionary.to_pylist(),
    )


def _rows_of(values: Any, ids: Any) -> np.ndarray:
    """The row in `ids` of each value (`_NONE`: not an id, or null)."""
    idx = pc.fill_null(pc.index_in(values, value_set=ids), _NONE)
    return np.asarray(idx.to_numpy(zero_copy_only=False), dtype=np.int64)


def _shared(rows: np.ndarray, own: list[Any], id_objs: np.ndarray) -> list[Any]:
    """Each value as the node's own id string where it names a node (one string object per id
    in the loaded store), else as read."""
    if not len(rows):
        return []
    picked = id_objs[np.maximum(rows, 0)]
    return np.where(rows >= 0, picked, np.asarray(own, dtype=object)).tolist()  # type: ignore[no-any-return]


def _node_seq(ids: Any, id_list: list[str], start: int) -> int:
    """At least `start` and every ``n_<k>`` id's k (ASCII ids in pyarrow, others with `re`)."""
    best = start
    ascii_ids = pc.match_substring_regex(ids, _ASCII_ID)
    numbers = pc.filter(ids, ascii_ids)
    if len(numbers):
        value = pc.max(pc.cast(pc.utf8_slice_codeunits(numbers, 2), pa.int64())).as_py()
        best = max(best, int(value))
    others = pc.and_(pc.starts_with(ids, "n_"), pc.invert(ascii_ids))
    for i in np.flatnonzero(np.asarray(others.to_numpy(zero_copy_only=False), dtype=bool)):
        m = _ID_NUM.fullmatch(id_list[int(i)])
        if m:
            best = max(best, int(m.group(1)))
    return best


def _anchor_rows(parent: np.ndarray, archived: np.ndarray, in_pool: np.ndarray) -> np.ndarray:
    """Each row's nearest pool member upwards (itself included) as a row, `_NONE` when an
    archived or missing node comes first or the walk loops: pointer jumping over the parent
    column (`Store._anchor_walk` of every node at once)."""
    n = parent.shape[0]
    unknown = -2
    anchor = np.full(n, unknown, dtype=np.int64)
    anchor[in_pool] = np.flatnonzero(in_pool)
    anchor[archived] = _NONE
    todo = anchor == unknown
    anchor[todo & (parent < 0)] = _NONE  # no parent, or a parent that is not a node
    step = parent.copy()  # the row each unresolved row reads its answer from
    for _ in range(64):  # doubles the reach each round: 64 rounds pass any chain
        todo = anchor == unknown
        if not todo.any():
            break
        rows = np.flatnonzero(todo)
        via = step[rows]
        answer = anchor[via]
        done = answer != unknown
        anchor[rows[done]] = answer[done]
        jump = rows[~done]
        step[jump] = step[step[jump]]
    anchor[anchor == unknown] = _NONE  # a parent loop with no pool member on it
    return anchor


def load_node_columns(
    nodes: Any, node_seq: int, schema: Schema
) -> LoadedColumns | None:
    """The records and indices of a node state table; None when it needs the per-node path
    (rows stored as raw JSON, or an id twice)."""
    n = nodes.num_rows
    if n and pc.any(pc.is_valid(nodes["raw"])).as_py():
        return None
    ids = _flat(nodes["id"])
    id_list: list[str] = ids.to_pylist()
    id_objs = np.empty(n, dtype=object)
    id_objs[:] = id_list
    type_code, type_values = _codes(nodes["type"])
    type_values = [_intern(t) if isinstance(t, str) else t for t in type_values]
    level_code, level_values = _codes(nodes["level"])
    level_values = [_intern(v or "semantic") for v in level_values]
    types = np.asarray(type_values, dtype=object)[type_code].tolist() if n else []
    levels = np.asarray(level_values, dtype=object)[level_code].tolist() if n else []
    parent_rows = _rows_of(_flat(nodes["parent_id"]), ids)
    parent_list = nodes["parent_id"].to_pylist()
    parents = _shared(parent_rows, parent_list, id_objs)
    kids_col = _flat(nodes["children_ids"])
    offsets = np.asarray(kids_col.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    flat_kids = pc.list_flatten(kids_col)
    kid_ids = _shared(_rows_of(flat_kids, ids), flat_kids.to_pylist(), id_objs)
    seq_col = _flat(nodes["seq_to"])
    seq_np = np.asarray(pc.fill_null(seq_col, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    has_seq = np.asarray(seq_col.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    uniq, inverse = np.unique(seq_np, return_inverse=True)  # one int object per value
    seq_objs = np.asarray(uniq.tolist() + [None], dtype=object)
    seqs = seq_objs[np.where(has_seq, inverse, len(uniq))].tolist()
    depth_np = np.asarray(nodes["semantic_depth"].to_numpy(), dtype=np.int64)
    depths = depth_np.tolist()
    rollups = nodes["semantic_rollup"].to_pylist()
    archived_np = np.asarray(nodes["archived"].to_numpy(), dtype=bool)
    archived = archived_np.tolist()
    sups = nodes["superseded_by"].to_pylist()
    texts = nodes["fields"].to_pylist()
    titles = nodes["title"].to_pylist()

    records: list[Node] = []
    append = records.append
    lens = np.diff(offsets)
    for i in range(n):
        node = _new(Node)
        _set(node, "id", id_list[i])
        _set(node, "type", types[i])
        _set(node, "level", levels[i])
        _set(node, "title", titles[i])
        text = texts[i]
        if text is None or text == "{}":
            _set(node, "fields", EMPTY)
        else:  # JsonFields(text), without the call
            fields = _new(JsonFields)
            _set(fields, "_text", text)
            _set(fields, "_hash", None)
            _set(node, "fields", fields)
        _set(node, "parent_id", parents[i])
        _set(node, "children_ids", ())
        _set(node, "seq_to", seqs[i])
        _set(node, "semantic_depth", depths[i])
        _set(node, "semantic_rollup", rollups[i])
        _set(node, "archived", archived[i])
        _set(node, "floor_range", None)
        _set(node, "superseded_by", sups[i] or None)
        append(node)
    for i in np.flatnonzero(lens).tolist():
        _set(records[i], "children_ids", tuple(kid_ids[offsets[i] : offsets[i + 1]]))
    node_map = dict(zip(id_list, records, strict=True))
    if len(node_map) != n:
        return None

    # visibility: active, and not below an active parent of its own hierarchical type
    hier = np.zeros(len(type_values) + 1, dtype=bool)
    diag = np.zeros(len(type_values) + 1, dtype=bool)
    ltypes: list[str] = []
    for code, t in enumerate(type_values):
        spec = schema.get(t) if isinstance(t, str) else None
        hier[code] = spec is not None and spec.compression.hierarchical
        diag[code] = isinstance(t, str) and is_diagnostic_type(t)
        ltypes.append(t.lower() if isinstance(t, str) else t)
    has_parent = parent_rows >= 0
    p = np.maximum(parent_rows, 0)
    hidden = (
        has_parent
        & ~archived_np[p]
        & (type_code[p] == type_code)
        & hier[type_code]
    ) if n else np.zeros(0, dtype=bool)
    visible_np = ~archived_np & ~hidden
    episodic = np.asarray([v == "episodic" for v in level_values], dtype=bool)
    in_pool = visible_np & ~(episodic[level_code] if n else visible_np) & ~diag[type_code]

    # the pool in recency order: seq_to descending (missing first), depth descending, then id
    pool_rows = np.flatnonzero(in_pool)
    neg_seq = np.where(has_seq, -seq_np, 1)
    order_tbl = pa.table(
        {"s": neg_seq[pool_rows], "d": -depth_np[pool_rows], "i": pc.take(ids, pool_rows)}
    )
    order = pc.sort_indices(
        order_tbl, sort_keys=[("s", "ascending"), ("d", "ascending"), ("i", "ascending")]
    )
    ranked = pool_rows[np.asarray(order.to_numpy(), dtype=np.int64)]
    record_objs = np.empty(n, dtype=object)
    record_objs[:] = records
    pool_keys = list(
        zip(
            neg_seq[ranked].tolist(),
            (-depth_np[ranked]).tolist(),
            id_objs[ranked].tolist(),
            strict=True,
        )
    )
    ltype_names = sorted(set(ltypes))
    ltype_of_code = np.asarray([ltype_names.index(t) for t in ltypes] or [0], dtype=np.int64)
    pool_ltype = ltype_of_code[type_code[ranked]] if len(ranked) else np.zeros(0, np.int64)
    by_ltype = np.argsort(pool_ltype, kind="stable")  # positions grouped by type, in pool order
    bounds = np.flatnonzero(np.diff(pool_ltype[by_ltype])) + 1
    type_rows = {
        ltype_names[int(pool_ltype[part[0]])]: part.tolist()
        for part in np.split(by_ltype, bounds)
        if len(part)
    }

    # parents' children, in row order
    kids: dict[str, list[str]] = {}
    named = pc.fill_null(pc.not_equal(_flat(nodes["parent_id"]), ""), False)
    with_parent = np.flatnonzero(np.asarray(named.to_numpy(zero_copy_only=False), dtype=bool))
    if len(with_parent):
        pcodes, _values = _codes(pc.take(_flat(nodes["parent_id"]), with_parent))
        grouped = with_parent[np.argsort(pcodes, kind="stable")]
        bounds = np.flatnonzero(np.diff(np.sort(pcodes, kind="stable"))) + 1
        for part in np.split(grouped, bounds):
            rows = part.tolist()
            kids[parents[rows[0]]] = [id_list[r] for r in rows]

    anchor_rows = _anchor_rows(parent_rows, archived_np, in_pool)
    anchor_objs = np.empty(n + 1, dtype=object)
    anchor_objs[:n] = id_objs
    anchor_objs[n] = None
    anchors = dict(
        zip(id_list, anchor_objs[np.where(anchor_rows >= 0, anchor_rows, n)].tolist(), strict=True)
    )
    visible = set(id_objs[visible_np].tolist())
    return LoadedColumns(
        nodes=node_map,
        kids=kids,
        visible=visible,
        pool_keys=pool_keys,
        pool_nodes=record_objs[ranked].tolist(),
        pool_types=[ltype_names[i] for i in pool_ltype.tolist()],
        type_rows=type_rows,
        anchors=anchors,
        node_seq=_node_seq(ids, id_list, node_seq),
    )


__all__ = ["LoadedColumns", "decode_columns", "decode_edge_columns", "load_node_columns"]
