"""A store's records and indices straight from a snapshot's columns (pyarrow tables, see
`storage/format/graph_columns.py`): what `json_codec.decode_graph` plus the bulk load give for
the same graph,
without a JSON dict per node.

`load_node_columns` is the open's quick path: the indices (visibility, the pool order, parents'
children, pool anchors) are computed over whole columns with pyarrow and numpy as arrays
(`LoadedColumns`, whose methods make their Python containers when the store first reads them),
and no `Node` is made: the store's node map (`lazy_nodes.LazyNodes`) makes each on the first
read of its id, its fields left as their stored JSON text until read (`frozen.JsonFields`). A
row stored as raw JSON (values the columns cannot hold: a pinned node) is decoded on its own
and its values patched into the columns (`raw_rows`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ..index.candidate_pool import PoolKey
from ..model.json_records import _ID_NUM, _edges_from_raw
from ..model.models import Edge, EdgeKey, Node
from ..model.schema import NodeTypeSpec, Schema, is_diagnostic_type
from .lazy_edges import stable_order
from .lazy_nodes import LazyNodes, NodeColumns
from .raw_rows import patch_raw_rows

_new = object.__new__
_set = object.__setattr__
_intern = sys.intern
_ASCII_ID = r"^n_[0-9]{1,18}$"  # cast to int64 in pyarrow; any other n_<digits> id: Python's re
_NONE = -1  # "no row" in row-index arrays


def _column(table: Any, name: str) -> list[Any]:
    return table[name].to_pylist()  # type: ignore[no-any-return]


def parse_all(texts: list[str | None]) -> list[Any]:
    """Each JSON text parsed (None for None), in one orjson call for them all (a few times
    faster than `json`); `json` for what orjson refuses (NaN, integers past 64 bits), which
    `json.dumps` writes."""
    present = [t for t in texts if t is not None]
    if not present:
        return [None] * len(texts)
    whole = "[" + ",".join(present) + "]"
    try:
        parsed = orjson.loads(whole)
    except orjson.JSONDecodeError:
        parsed = json.loads(whole)
    values = iter(parsed)
    return [None if t is None else next(values) for t in texts]


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


class LoadedPoolOrder(Mapping[str, tuple[PoolKey, str]]):
    """id -> (recency key, lower-case type) of the pool members of a loaded graph, iterated in
    pool order: what `LoadedColumns.pool_of` builds as a dict, without building it.

    A keyword search breaks ties by recency through `Store.pool_order()`. Until the store
    builds that map (its first write that touches the pool), the pool is exactly the load's,
    so this read-only map answers from the load's arrays: per looked-up id, a dict lookup and
    three array reads, and nothing made per pool member by the first search after an open."""

    __slots__ = (
        "_row_of",
        "_ids",
        "_ranked",
        "_neg_seq",
        "_neg_depth",
        "_ltype",
        "_ltype_names",
        "_rank",
    )

    def __init__(
        self,
        row_of: Mapping[str, int],
        ids: np.ndarray,
        ranked: np.ndarray,
        neg_seq: np.ndarray,
        neg_depth: np.ndarray,
        pool_ltype: np.ndarray,
        ltype_names: list[str],
    ) -> None:
        """`row_of`: id -> row; `ids`: row -> id; `ranked`: the pool's rows in recency order;
        `neg_seq`/`neg_depth`: row -> the key's first two parts; `pool_ltype`: pool position
        -> its lower-case type, as an index into `ltype_names`."""
        self._row_of = row_of
        self._ids = ids
        self._ranked = ranked
        self._neg_seq, self._neg_depth = neg_seq, neg_depth
        self._ltype, self._ltype_names = pool_ltype, ltype_names
        rank = np.full(ids.shape[0], -1, dtype=np.int64)  # row -> pool position (-1: none)
        rank[ranked] = np.arange(ranked.shape[0], dtype=np.int64)
        self._rank = rank

    def _pos(self, key: Any) -> int:
        row = self._row_of.get(key) if isinstance(key, str) else None
        return -1 if row is None else int(self._rank[row])

    def __contains__(self, key: object) -> bool:
        return self._pos(key) >= 0

    def __getitem__(self, key: str) -> tuple[PoolKey, str]:
        pos = self._pos(key)
        if pos < 0:
            raise KeyError(key)
        row = int(self._ranked[pos])
        key = (int(self._neg_seq[row]), int(self._neg_depth[row]), self._ids[row])
        return key, self._ltype_names[int(self._ltype[pos])]

    def __len__(self) -> int:
        return int(self._ranked.shape[0])

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids[self._ranked].tolist())


class LoadedColumns:
    """A graph's lazy node map and the indices the bulk load fills, computed from its columns
    as arrays; the indices' Python containers are made by the methods below when the store
    first reads them (`StoreLoading._load_columns` defers them)."""

    def __init__(
        self,
        nodes: LazyNodes,
        kids: dict[str, list[str]],
        node_seq: int,
        id_objs: np.ndarray,
        visible: np.ndarray,
        ranked: np.ndarray,
        neg_seq: np.ndarray,
        neg_depth: np.ndarray,
        pool_ltype: np.ndarray,
        ltype_names: list[str],
        anchor_rows: np.ndarray,
        id_array: Any,
        types: tuple[list[Any], np.ndarray, np.ndarray],
    ) -> None:
        self.nodes = nodes  # by id, in row order, each made on its first read
        self.id_array = id_array  # the id column (pyarrow)
        self.id_objs = id_objs  # row -> id (the node map's own strings)
        self.kids = kids  # parent id -> children ids in row order
        self.node_seq = node_seq
        self._ids = id_objs  # row -> id (the node map's own strings)
        self._visible = visible  # row -> visible
        self._ranked = ranked  # the pool's rows in recency order
        self._neg_seq, self._neg_depth = neg_seq, neg_depth  # row -> recency key parts
        self._pool_ltype, self._ltype_names = pool_ltype, ltype_names  # pool position -> type
        self._anchor_rows = anchor_rows  # row -> its anchor's row (_NONE: none)
        self._keys: list[PoolKey] | None = None
        self._types = types  # (distinct types, row -> type code, row -> archived)

    def named_rows(self, schema: Schema) -> tuple[np.ndarray, list[NodeTypeSpec | None]]:
        """Rows of the active nodes of latest-only types (the ones a name index holds), and
        each row's spec by its type code (`type_codes`)."""
        values, code, archived = self._types
        specs = [
            s if isinstance(t, str) and (s := schema.get(t)) is not None and s.latest_only else None
            for t in values
        ]
        wanted = np.asarray([s is not None for s in specs] or [False], dtype=bool)
        return np.flatnonzero(wanted[code] & ~archived), specs

    def type_codes(self) -> np.ndarray:
        """Row -> type code (an index into the distinct types)."""
        return self._types[1]

    def named_ids(self, schema: Schema) -> list[str]:
        """Ids of the active nodes of latest-only types: the ones a name index holds."""
        return self._ids[self.named_rows(schema)[0]].tolist()  # type: ignore[no-any-return]

    def visible(self) -> set[str]:
        return set(self._ids[self._visible].tolist())

    def pool_keys(self) -> list[PoolKey]:
        """The pool's recency keys, in key order (made once)."""
        keys = self._keys
        if keys is None:
            ranked = self._ranked
            keys = self._keys = list(
                zip(
                    self._neg_seq[ranked].tolist(),
                    self._neg_depth[ranked].tolist(),
                    self._ids[ranked].tolist(),
                    strict=True,
                )
            )
        return keys

    def pool_of(self) -> dict[str, tuple[PoolKey, str]]:
        """id -> (recency key, lower-case type) of every pool member, in pool order."""
        keys = self.pool_keys()
        names = self._ltype_names
        types = [names[i] for i in self._pool_ltype.tolist()]
        return dict(zip([k[2] for k in keys], zip(keys, types, strict=True), strict=True))

    def same_ids(self, column: Any) -> bool:
        """Whether `column` (pyarrow) holds the loaded ids, in row order."""
        flat = _flat(column)
        return bool(flat.type == self.id_array.type and flat.equals(self.id_array))

    def order_view(self) -> LoadedPoolOrder | None:
        """`pool_of` as a read-only map over these arrays (nothing built per member); None
        once the node map dropped its columns (`LazyNodes.materialize`)."""
        columns = self.nodes.column_ids()
        if columns is None:
            return None
        return LoadedPoolOrder(
            columns[1],
            self._ids,
            self._ranked,
            self._neg_seq,
            self._neg_depth,
            self._pool_ltype,
            self._ltype_names,
        )

    def type_rows(self) -> dict[str, list[int]]:
        """Lower-case type -> positions in the pool, in order."""
        pool_ltype = self._pool_ltype
        by_ltype = np.argsort(pool_ltype, kind="stable")  # grouped by type, in pool order
        bounds = np.flatnonzero(np.diff(pool_ltype[by_ltype])) + 1
        return {
            self._ltype_names[int(pool_ltype[part[0]])]: part.tolist()
            for part in np.split(by_ltype, bounds)
            if len(part)
        }

    def anchors(self) -> dict[str, str | None]:
        """id -> its nearest pool member upwards (None: none), in row order."""
        ids, rows = self._ids, self._anchor_rows
        n = len(ids)
        objs = np.empty(n + 1, dtype=object)
        objs[:n] = ids
        objs[n] = None
        return dict(zip(ids.tolist(), objs[np.where(rows >= 0, rows, n)].tolist(), strict=True))


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


def _one_row_per_id(nodes: Any, ids: Any) -> Any:
    """`nodes` (whose id column is `ids`, an id in more than one row) with one row per id: its
    last row, at the place of its first (what a dict filled row by row holds)."""
    codes, _values = _codes(ids)
    _, first = np.unique(codes, return_index=True)
    _, from_end = np.unique(codes[::-1], return_index=True)
    last = len(codes) - 1 - from_end  # both by code: aligned
    return nodes.take(pa.array(last[np.argsort(first)]))


def load_node_columns(nodes: Any, node_seq: int, schema: Schema) -> LoadedColumns:
    """The lazy node map and the indices of a node state table. No `Node` is made here but those
    of rows stored as raw JSON (`raw_rows`): `LazyNodes` makes each on the first read of its
    id."""
    ids = _flat(nodes["id"])
    id_list: list[str] = ids.to_pylist()
    row_of = dict(zip(id_list, range(len(id_list)), strict=True))
    if len(row_of) != len(id_list):  # an id in more than one row
        nodes = _one_row_per_id(nodes, ids)
        ids = _flat(nodes["id"])
        id_list = ids.to_pylist()
        row_of = dict(zip(id_list, range(len(id_list)), strict=True))
    n = nodes.num_rows
    decoded: list[Node] = []
    if n and pc.any(pc.is_valid(nodes["raw"])).as_py():  # (patching leaves the ids as they are)
        raw_rows = np.flatnonzero(np.asarray(nodes["raw"].is_valid().to_numpy(), dtype=bool))
        nodes, decoded = patch_raw_rows(nodes, raw_rows)  # their values in the columns
    id_objs = np.empty(n, dtype=object)
    id_objs[:] = id_list
    type_code, type_values = _codes(nodes["type"])
    type_values = [_intern(t) if isinstance(t, str) else t for t in type_values]
    level_code, level_values = _codes(nodes["level"])
    level_values = [_intern(v or "semantic") for v in level_values]
    parent_col = _flat(nodes["parent_id"])
    named = pc.fill_null(pc.not_equal(parent_col, ""), False)
    with_parent = np.flatnonzero(np.asarray(named.to_numpy(zero_copy_only=False), dtype=bool))
    parent_rows = np.full(n, _NONE, dtype=np.int64)
    if len(with_parent):  # the row of each named parent (`_NONE`: not a node)
        found = row_of.get
        parent_rows[with_parent] = [
            found(p, _NONE) for p in pc.take(parent_col, with_parent).to_pylist()
        ]
    seq_col = _flat(nodes["seq_to"])
    seq_np = np.asarray(pc.fill_null(seq_col, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    has_seq = np.asarray(seq_col.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    depth_np = np.asarray(nodes["semantic_depth"].to_numpy(), dtype=np.int64)
    archived_np = np.asarray(nodes["archived"].to_numpy(), dtype=bool)
    node_map = LazyNodes(
        NodeColumns(
            nodes, id_list, row_of, type_values, type_code, level_values, level_code, parent_rows
        )
    )
    for node in decoded:  # the raw rows' records, as decoded (a pinned node stays pinned)
        _set(node, "id", id_list[row_of[node.id]])  # the node map's own id string
        node_map[node.id] = node

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
        (has_parent & ~archived_np[p] & (type_code[p] == type_code) & hier[type_code])
        if n
        else np.zeros(0, dtype=bool)
    )
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
    ltype_names = sorted(set(ltypes))
    ltype_of_code = np.asarray([ltype_names.index(t) for t in ltypes] or [0], dtype=np.int64)
    pool_ltype = ltype_of_code[type_code[ranked]] if len(ranked) else np.zeros(0, np.int64)

    # parents' children, in row order (keyed by the parent node's own id string)
    kids: dict[str, list[str]] = {}
    if len(with_parent):  # grouped by parent with numpy; a list slice per parent
        pcodes, _values = _codes(pc.take(parent_col, with_parent))
        order = stable_order(pcodes, int(pcodes.max()) + 1)
        grouped = with_parent[order]
        codes = pcodes[order]
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
        ends = np.append(starts[1:], len(codes)).tolist()
        firsts = grouped[starts]
        texts = pc.take(parent_col, firsts).to_pylist()
        owner = parent_rows[firsts].tolist()
        members = id_objs[grouped].tolist()
        for a, b, text, prow in zip(starts.tolist(), ends, texts, owner, strict=True):
            kids[id_list[prow] if prow >= 0 else text] = members[a:b]

    return LoadedColumns(
        nodes=node_map,
        kids=kids,
        node_seq=_node_seq(ids, id_list, node_seq),
        id_objs=id_objs,
        visible=visible_np,
        ranked=ranked,
        neg_seq=neg_seq,
        neg_depth=-depth_np,
        pool_ltype=pool_ltype,
        ltype_names=ltype_names,
        anchor_rows=_anchor_rows(parent_rows, archived_np, in_pool),
        id_array=ids,
        types=(type_values, type_code, archived_np),
    )


__all__ = [
    "LoadedColumns",
    "LoadedPoolOrder",
    "decode_edge_columns",
    "load_node_columns",
]
