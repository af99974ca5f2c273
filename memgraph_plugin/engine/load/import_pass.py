"""An import's check and normal form in one pass per node and edge.

`store_import.store_is_clean` (would `store_problems` find nothing?) and
`store_import.normalised_store` (what ``Store.from_dict(data).to_dict()`` gives) each walked every
node and edge, the second repeating most of the first's type tests. `checked_normal_store` does
both at once: each node is checked and, when it already is in the normal form (the usual file:
an export), taken as it is; each edge is checked and normalised in the same step. It answers
None whenever the quick check is not sure, and the caller then runs `store_problems` (which
names each problem: field and node id) and, for a store it passes, `normalised_store`; so the
errors and the result are the same as before. It also notes what storage can skip: whether
every node is plain (`PlainStore.plain`: the state columns need no per-row test) and the
largest message index (anchoring needs no second pass).
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model.json_records import node_from_dict, node_to_dict
from ..model.schema import SYMMETRIC_RELATIONS
from ..model.values import DEFAULT_LIMITS, Limits
from .import_hierarchy import parents_end_in_roots
from .import_nodes import _has_float, plain_nodes
from .store_import import (
    _EDGE_KEYS,
    _ID_NUM,
    _NORMAL_KEYS,
    _NORMAL_KEYS_SUP,
    _QUICK_NODE_KEYS,
    TOP_KEYS,
    NormalStore,
    _count_ok,
    _fields_ok,
    _json_native,
    _name_ok,
    keep_normal_edge,
    node_links,
)

__all__ = ["checked_normal_store"]

_NATIVE = 2  # `_fields_ok`: clean, every value JSON-native


def checked_normal_store(data: Any, limits: Limits = DEFAULT_LIMITS) -> NormalStore | None:
    """``normalised_store(data)`` (unanchored: a `NormalStore`) when ``store_is_clean(data,
    limits)``, made in one pass; None when the quick check is not sure (a problem, or a shape
    it leaves to `store_problems`)."""
    if type(data) is not dict or not data.keys() <= TOP_KEYS or "nodes" not in data:
        return None
    counters = []
    for camel, snake in (("nodeSeq", "node_seq"), ("seqCounter", "seq_counter")):
        value = data.get(camel, data.get(snake))
        if not _count_ok(value):
            return None
        counters.append(int(value or 0))
    node_seq, counter = counters
    raw_nodes = data.get("nodes") or {}
    raw_edges = data.get("edges")
    if type(raw_nodes) is not dict or (raw_edges is not None and type(raw_edges) is not list):
        return None
    ids = raw_nodes.keys()
    quick = plain_nodes(raw_nodes, limits)  # the usual file: all at once
    node_columns = known = parent_at = None
    if quick is not None:
        known, parent_at = quick.id_array, quick.parent_at
        nodes, parents, plain, node_columns = quick.nodes, quick.parents, True, quick.columns
        float_free, top_message, top_id = quick.float_free, quick.top_message, quick.top_id
    else:
        looped = _node_loop(raw_nodes, limits)
        if looped is None:
            return None
        nodes, parents, plain, float_free, top_message, top_id = looped
    node_seq = max(node_seq, top_id)
    columns = None
    edges: Any = []
    if raw_edges:
        quick = _edge_columns(raw_edges, ids, parents, known, parent_at)
        if quick is _UNSURE:  # unusual or not yet normal: edge by edge
            edges = _checked_edges(raw_edges, ids, parents)
        else:
            edges, columns = quick
    if edges is None:
        return None
    store = NormalStore(nodes=nodes, edges=edges, nodeSeq=node_seq, seqCounter=counter)
    store.edge_columns = columns
    store.node_columns = node_columns
    store.plain = plain
    store.float_free = float_free
    store.top_message = top_message  # (-1: none: anchoring need not look again)
    return store


def _node_loop(raw_nodes: dict[str, Any], limits: Limits) -> tuple[Any, ...] | None:
    """Node by node, what `plain_nodes` answers all at once (and any other shape taken to the
    normal form): ``(nodes, parents, plain, float_free, top_message, top_id)``; None at the
    first doubt."""
    ids = raw_nodes.keys()
    top_id = -1
    parents: dict[str, str] = {}
    nodes: dict[str, dict[str, Any]] = {}
    plain = True
    float_free = True  # no float in any node's fields (`PlainStore.float_free`)
    top_message = -1
    fullmatch = _ID_NUM.fullmatch
    for key, raw in raw_nodes.items():
        if type(raw) is not dict:
            return None
        keys = raw.keys()
        if not keys <= _QUICK_NODE_KEYS:
            return None
        get = raw.get
        nid = get("id", key)
        if nid != key or not _name_ok(nid) or not _name_ok(get("type")):
            return None
        level, title, fields = get("level"), get("title"), get("fields")
        if (level is not None and type(level) is not str) or (
            title is not None and type(title) is not str
        ):
            return None
        fields_state = _fields_ok(fields, title or "", limits)
        if not fields_state:
            return None
        if fields_state != _NATIVE and float_free and _has_float(fields):
            float_free = False
        seq_to, depth = get("seqTo"), get("semanticDepth")
        if not (_count_ok(seq_to) and _count_ok(depth)):
            return None
        rollup, archived, pinned = get("semanticRollup"), get("archived"), get("pinned")
        for flag in (rollup, archived, pinned):
            if flag is not None and type(flag) is not bool:
                return None
        links = node_links(get, nid, ids, parents)
        if links is None:
            return None
        parent, children, sup = links
        # the normal form (`store_import._normal_node`), from what was just read
        shape = keys in (_NORMAL_KEYS, _NORMAL_KEYS_SUP)
        if not shape and pinned is True:
            rest = keys - {"pinned"}
            shape = rest in (_NORMAL_KEYS, _NORMAL_KEYS_SUP)
        if (
            shape
            and level
            and type(title) is str
            and type(parent) is str
            and children is not None
            and depth is not None
            and rollup is not None
            and archived is not None
            and ("supersededBy" not in keys or sup)
            and type(fields) is dict
            and (fields_state == _NATIVE or _json_native(fields))
        ):
            node = raw
            if pinned is not None:
                plain = False
        else:
            node = node_to_dict(node_from_dict(raw, key=key))
            if node.keys() not in (_NORMAL_KEYS, _NORMAL_KEYS_SUP):
                plain = False
        nodes[nid] = node
        message = node["fields"].get("message")
        if type(message) is int and message > top_message:
            top_message = message
        m = fullmatch(nid)
        if m:
            top_id = max(top_id, int(m.group(1)))
    if parents and not parents_end_in_roots(parents):  # a cycle: the full check names it
        return None
    return nodes, parents, plain, float_free, top_message, top_id


_UNSURE: Any = object()
_DICT_ONLY = {dict}
_SEQ_TYPES = {int, type(None)}
_FROM, _TO, _TYPE = itemgetter("from"), itemgetter("to"), itemgetter("type")


def _edge_columns(
    raw_edges: list[Any],
    ids: Any,
    parents: dict[str, str],
    known: pa.Array | None = None,
    parent_at: np.ndarray | None = None,
) -> Any:
    """``(edges, columns)``: the edges as they are when, checked column by column, every one
    passes `store_is_clean`'s edge checks and is already in the normal form (lower-case types,
    symmetric ones in id order, no ``seqTo: null``): the usual file, an export; a symmetric
    edge out of id order is turned and a repeat dropped (the first kept) as the normal form
    does. `columns` holds them as ``src``, ``type``, ``dst``, ``seq_to`` (pyarrow, in the
    order of `edges`: storage's state table takes them as they are). `_UNSURE` for anything
    else (`_checked_edges` then decides and normalises). `known` (`ids` as a string array)
    and `parent_at` (each node's parent's position in it, -1: none) are made here unless the
    node check has them (`import_nodes.PlainNodes`).

    Every step over the 300k edges of a 100k-node import is a C loop (``map`` of an
    ``itemgetter``, ``type``, ``len``; pyarrow; numpy): no Python code runs per edge."""
    n = len(raw_edges)
    if set(map(type, raw_edges)) != _DICT_ONLY:
        return _UNSURE
    try:
        src, dst, typ = (list(map(get, raw_edges)) for get in (_FROM, _TO, _TYPE))
    except KeyError:
        return _UNSURE
    seq = list(map(dict.get, raw_edges, repeat("seqTo")))
    seq_types = set(map(type, seq))
    if not seq_types <= _SEQ_TYPES:
        return _UNSURE
    # each edge holds from, to and type; so its keys beyond them are one ``seqTo`` with a
    # value exactly when, over all edges, they number the seqTo values (``seqTo: null``, or
    # any other key, is one too many: the normal form leaves the former out)
    if sum(map(len, raw_edges)) != 3 * n + (n - seq.count(None)):
        return _UNSURE
    try:  # the text columns' type inferred: not string when any value is not text (bytes,
        # which pyarrow would take as text when told the type, make it binary)
        s, d, t = (pa.array(column) for column in (src, dst, typ))
        seq_to = pa.array(seq, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return _UNSURE  # a number among the texts, an int beyond 64 bits
    if not s.type == d.type == t.type == pa.string():
        return _UNSURE
    if s.null_count or d.null_count or t.null_count:  # a key missing, or null
        return _UNSURE
    if int in seq_types and pc.min(seq_to).as_py() < 0:
        return _UNSURE
    if known is None:
        known = pa.array(list(ids), pa.string())
    at = pc.index_in(pa.concat_arrays([s, d]), value_set=known)
    if at.null_count:  # an end that is no node
        return _UNSURE
    ends = at.to_numpy(zero_copy_only=False).astype(np.int64)
    at_src, at_dst = ends[:n], ends[n:]
    if (at_src == at_dst).any():  # ids are unique: the same position is the same node
        return _UNSURE
    coded = pc.dictionary_encode(t)
    types = coded.dictionary.to_pylist()
    if any(not _name_ok(x) or x != x.lower() for x in types):
        return _UNSURE
    kind = coded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if "contains" in types and parent_at is None:
        parent_at = np.full(len(known), -1, dtype=np.int64)
        if parents:
            child = pc.index_in(pa.array(list(parents), pa.string()), value_set=known)
            parent = pc.index_in(pa.array(list(parents.values()), pa.string()), value_set=known)
            parent_at[child.to_numpy(zero_copy_only=False)] = parent.to_numpy(zero_copy_only=False)
    if "contains" in types:  # a contains edge runs from its child's parent to the child
        contains = kind == types.index("contains")
        if (parent_at[at_dst[contains]] != at_src[contains]).any():
            return _UNSURE
    edges = list(raw_edges)
    symmetric = [i for i, x in enumerate(types) if x in SYMMETRIC_RELATIONS]
    if symmetric:  # a symmetric edge is kept in id order: its ends swapped where they are not
        swap = pc.and_(
            pc.is_in(coded.indices, value_set=pa.array(symmetric, coded.indices.type)),
            pc.less(d, s),
        )
        turned = np.flatnonzero(swap.to_numpy(zero_copy_only=False))
        if turned.shape[0]:
            for i in turned.tolist():
                edge = {"from": dst[i], "to": src[i], "type": typ[i]}
                if seq[i] is not None:
                    edge["seqTo"] = seq[i]
                edges[i] = edge
            s, d = pc.if_else(swap, d, s), pc.if_else(swap, s, d)
            at_src, at_dst = at_src.copy(), at_dst.copy()
            at_src[turned], at_dst[turned] = at_dst[turned], at_src[turned]
    columns = pa.table({"src": s, "type": t, "dst": d, "seq_to": seq_to})
    # each edge's key (from, type, to) as one int64 (node and type positions): repeats found
    # by numpy, the first one kept
    key = (at_src * len(types) + kind) * len(known) + at_dst
    distinct, first = np.unique(key, return_index=True)
    if distinct.shape[0] != len(edges):
        keep = np.sort(first)
        edges = [edges[i] for i in keep.tolist()]
        columns = columns.take(pa.array(keep))
    return edges, columns


def _checked_edges(
    raw_edges: list[Any] | None, ids: Any, parents: dict[str, str]
) -> list[dict[str, Any]] | None:
    """The edges checked as `store_is_clean` does and in the normal form as
    `store_import._normal_edges` makes it (types lower-cased, symmetric ones in id order,
    repeats dropped, the first winning); None at the first doubt."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for raw in raw_edges or ():
        if type(raw) is not dict or not raw.keys() <= _EDGE_KEYS:
            return None
        get = raw.get
        src, dst, etype, seq_to = get("from"), get("to"), get("type"), get("seqTo")
        if type(src) is not str or src not in ids or type(dst) is not str or dst not in ids:
            return None
        if src == dst or not _name_ok(etype) or not _count_ok(seq_to):
            return None
        if etype == "contains" and parents.get(dst) != src:
            return None
        keep_normal_edge(out, src, dst, etype, seq_to)
    return list(out.values())
