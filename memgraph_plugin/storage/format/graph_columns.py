"""A chat's graph as columns: journal changes -> delta tables, deltas merged onto a base, and the
tables back to the contract's JSON shape.

A *state table* holds one row per node (or edge) in the order a journal replay would leave them
(`StateBuilder`). A *delta* holds the rows changed since a base: the final value of each node or
edge put, `removed` for one deleted, `moved` for one deleted and put again (a replay puts it at
the end). `merge(base, delta)` is vectorised (pyarrow + numpy): no Python work per base row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.engine.load.store_import import PlainStore
from memgraph_plugin.engine.model.json_records import NORMAL_NODE_KEYS
from memgraph_plugin.storage.database.tables import SNAP_EDGES_SCHEMA, SNAP_NODES_SCHEMA
from memgraph_plugin.storage.format.json_shapes import edge_key, edge_to_json

#: The state columns (the stored tables minus `chat_id` and `snap`).
NODE_SCHEMA = pa.schema([f for f in SNAP_NODES_SCHEMA if f.name not in ("chat_id", "snap", "pos")])
EDGE_SCHEMA = pa.schema([f for f in SNAP_EDGES_SCHEMA if f.name not in ("chat_id", "snap", "pos")])

_NODE_KEYS = NORMAL_NODE_KEYS
_PLAIN_NODE = frozenset(_NODE_KEYS)
_PLAIN_NODE_SUP = _PLAIN_NODE | {"supersededBy"}
KEY_SEP = "\x1f"  # (never in a name: names are printable)


def _is_int(value: Any) -> bool:
    return type(value) is int and -(2**63) <= value < 2**63


def _plain_node(node: Mapping[str, Any]) -> bool:
    """Whether a node dict is exactly what `node_to_dict` writes (so the columns round-trip it)."""
    keys = node.keys()
    if type(node) is not dict or keys not in (_PLAIN_NODE, _PLAIN_NODE_SUP):
        return False
    g = node.get
    children = g("childrenIds")
    return (
        all(type(g(k)) is str for k in ("id", "type", "level", "title", "parentId"))
        and type(g("fields")) is dict
        and type(children) is list
        and all(type(c) is str for c in children)
        and (g("seqTo") is None or _is_int(g("seqTo")))
        and _is_int(g("semanticDepth"))
        and type(g("semanticRollup")) is bool
        and type(g("archived")) is bool
        and ("supersededBy" not in keys or type(g("supersededBy")) is str)
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def nodes_table(rows: Iterable[tuple[Mapping[str, Any] | None, str, bool]]) -> pa.Table:
    """A node table of `(node dict | None if removed, id, moved)` rows."""
    cols: dict[str, list[Any]] = {f.name: [] for f in NODE_SCHEMA}
    for node, nid, moved in rows:
        cols["id"].append(nid)
        cols["removed"].append(node is None)
        cols["moved"].append(moved)
        plain = node is not None and _plain_node(node)
        g = node.get if plain and node is not None else {}.get
        for col, key in (("type", "type"), ("level", "level"), ("title", "title")):
            cols[col].append(g(key))
        cols["fields"].append(_dumps(g("fields")) if plain else None)
        cols["parent_id"].append(g("parentId"))
        cols["children_ids"].append(g("childrenIds"))
        cols["seq_to"].append(g("seqTo"))
        cols["semantic_depth"].append(g("semanticDepth"))
        cols["semantic_rollup"].append(g("semanticRollup"))
        cols["archived"].append(g("archived"))
        cols["superseded_by"].append(g("supersededBy"))
        cols["raw"].append(None if plain or node is None else _dumps(node))
    return pa.table(cols, schema=NODE_SCHEMA)


_EDGE_KEYS = frozenset({"from", "to", "type"})
_EDGE_KEYS_SEQ = _EDGE_KEYS | {"seqTo"}


def _plain_edge(edge: Mapping[str, Any]) -> bool:
    keys = edge.keys()
    return (
        type(edge) is dict
        and keys in (_EDGE_KEYS, _EDGE_KEYS_SEQ)
        and type(edge["from"]) is str
        and type(edge["to"]) is str
        and type(edge["type"]) is str
        and (edge.get("seqTo") is None or _is_int(edge["seqTo"]))
        and ("seqTo" not in keys or edge["seqTo"] is not None)
    )


def edges_table(
    rows: Iterable[tuple[Mapping[str, Any] | None, tuple[str, str, str], bool]],
) -> pa.Table:
    """An edge table of `(edge dict | None if removed, (from, type, to), moved)` rows."""
    cols: dict[str, list[Any]] = {f.name: [] for f in EDGE_SCHEMA}
    for edge, key, moved in rows:
        cols["src"].append(key[0])
        cols["type"].append(key[1])
        cols["dst"].append(key[2])
        cols["removed"].append(edge is None)
        cols["moved"].append(moved)
        plain = edge is not None and _plain_edge(edge)
        cols["seq_to"].append(edge.get("seqTo") if plain and edge is not None else None)
        cols["raw"].append(None if plain or edge is None else _dumps(dict(edge)))
    return pa.table(cols, schema=EDGE_SCHEMA)


class DeltaBuilder:
    """Accumulates journal changes as a delta: the final value of each node and edge touched."""

    def __init__(self) -> None:
        self.nodes: dict[str, list[Any]] = {}  # id -> [node | None, moved]
        self.edges: dict[tuple[str, str, str], list[Any]] = {}
        self.node_seq: int | None = None
        self.seq_counter: int | None = None

    @staticmethod
    def _put(into: dict[Any, list[Any]], key: Any, value: Any) -> None:
        slot = into.get(key)
        if slot is None:
            into[key] = [value, False]
        elif slot[0] is None:  # deleted, now put again: a replay puts it at the end
            del into[key]
            into[key] = [value, True]
        else:
            slot[0] = value

    def apply(self, change: Any) -> None:
        """What `StateBuilder.apply` does: nodes put, nodes removed, edges removed, edges added."""
        for node in change.nodes:
            self._put(self.nodes, str(node["id"]), node)
        for nid in change.nodes_removed:
            self.nodes.setdefault(str(nid), [None, False])[0] = None
        for key in change.edges_removed:
            k = (str(key[0]), str(key[1]), str(key[2]))
            self.edges.setdefault(k, [None, False])[0] = None
        for edge in change.edges_added:
            self._put(self.edges, edge_key(edge), edge)
        self.node_seq = change.node_seq
        self.seq_counter = change.seq_counter

    def __len__(self) -> int:
        return len(self.nodes) + len(self.edges)

    def tables(self) -> tuple[pa.Table, pa.Table]:
        return (
            nodes_table((v[0], k, v[1]) for k, v in self.nodes.items()),
            edges_table((v[0], k, v[1]) for k, v in self.edges.items()),
        )


def empty_nodes() -> pa.Table:
    return NODE_SCHEMA.empty_table()


def empty_edges() -> pa.Table:
    return EDGE_SCHEMA.empty_table()


def row_keys(table: pa.Table) -> pa.Array:
    """Each row's key: a node's id, an edge's ends and type joined by `KEY_SEP`."""
    if "src" in table.column_names:
        return pc.binary_join_element_wise(
            table["src"], table["type"], table["dst"], KEY_SEP
        ).combine_chunks()
    return table["id"].combine_chunks()


def _base_hits(base: pa.Table, delta: pa.Table, dk: pa.Array) -> np.ndarray:
    """Per base row, the index in `dk` of its key (-1: none). An edge's key is its ends and
    type joined, so only the rows whose source is among the delta's are joined (a live chat's
    journal tail touches a few of the 300k edges of a 100k-node graph)."""
    n = base.num_rows
    if "src" in base.column_names and n > 64:
        sources = pc.unique(delta["src"].combine_chunks())
        rows = np.flatnonzero(
            pc.is_in(base["src"], value_set=sources).to_numpy(zero_copy_only=False)
        )
        idx = np.full(n, -1, dtype=np.int64)
        if len(rows):
            found = pc.index_in(row_keys(base.take(pa.array(rows))), value_set=dk)
            idx[rows] = pc.fill_null(found, -1).to_numpy(zero_copy_only=False)
        return idx
    found = pc.index_in(row_keys(base), value_set=dk)
    return np.asarray(pc.fill_null(found, -1).to_numpy(zero_copy_only=False), dtype=np.int64)


def merge(base: pa.Table, delta: pa.Table) -> pa.Table:
    """`base` with `delta` applied: rows replaced in place, removed ones dropped, new and moved
    ones appended in delta order. Both tables have the same schema; `base` holds no removed rows."""
    if delta.num_rows == 0:
        return base
    delta = delta.cast(base.schema)
    n = base.num_rows
    dk = row_keys(delta)
    moved = delta["moved"].to_numpy(zero_copy_only=False).astype(bool)
    if n:
        idx = _base_hits(base, delta, dk)
        hit = idx >= 0
        keep = ~hit | ~moved[np.where(hit, idx, 0)]
        src = np.where(hit, n + idx, np.arange(n))[keep]
        if pc.count_distinct(dk).as_py() == len(dk):  # a delta's keys: once each
            # the delta rows some base row hit: no hash table of the base's keys (`is_in`)
            in_base = np.zeros(delta.num_rows, dtype=bool)
            in_base[idx[hit]] = True
        else:
            in_base = pc.is_in(dk, value_set=row_keys(base)).to_numpy(zero_copy_only=False)
            in_base = in_base.astype(bool)
    else:
        src = np.empty(0, dtype=np.int64)
        in_base = np.zeros(delta.num_rows, dtype=bool)
    if not in_base.any() and not pc.any(delta["removed"]).as_py():
        # new rows only (a live chat's turns after its snapshot, mostly): appended as they are,
        # one copy of each column instead of a gather of every row
        return pa.concat_tables([base, delta]).combine_chunks()
    appended = np.nonzero(~in_base | moved)[0] + n
    order = np.concatenate([src, appended]).astype(np.int64)
    out = pa.concat_tables([base, delta]).take(pa.array(order))
    removed = out["removed"]
    if pc.any(removed).as_py():
        out = out.filter(pc.invert(removed))
    return out.combine_chunks()


def picked(
    nodes: pa.Table, edges: pa.Table, node_ids: list[str], sources: list[str]
) -> tuple[pa.Table, pa.Table]:
    """The rows of state (or delta) tables `nodes` and `edges` of nodes `node_ids` and of the
    edges from `sources`."""
    ids, starts = pa.array(node_ids, pa.string()), pa.array(sources, pa.string())
    return (
        nodes.filter(pc.is_in(nodes["id"], value_set=ids)),
        edges.filter(pc.is_in(edges["src"], value_set=starts)),
    )


def node_dicts(table: pa.Table) -> dict[str, dict[str, Any]]:
    """A node table as the contract's `nodes` map (id -> node dict)."""
    cols = {name: table[name].to_pylist() for name in table.column_names}
    fields = bulk_loads(cols["fields"])
    out: dict[str, dict[str, Any]] = {}
    for i, nid in enumerate(cols["id"]):
        raw = cols["raw"][i]
        if raw is not None:
            out[nid] = json.loads(raw)
            continue
        node = {
            "id": nid,
            "type": cols["type"][i],
            "level": cols["level"][i],
            "title": cols["title"][i],
            "fields": fields[i],
            "parentId": cols["parent_id"][i],
            "childrenIds": cols["children_ids"][i],
            "seqTo": cols["seq_to"][i],
            "semanticDepth": cols["semantic_depth"][i],
            "semanticRollup": cols["semantic_rollup"][i],
            "archived": cols["archived"][i],
        }
        sup = cols["superseded_by"][i]
        if sup is not None:
            node["supersededBy"] = sup
        out[nid] = node
    return out


def edge_dicts(table: pa.Table) -> list[dict[str, Any]]:
    """An edge table as the contract's `edges` list."""
    out: list[dict[str, Any]] = []
    src, typ, dst = table["src"].to_pylist(), table["type"].to_pylist(), table["dst"].to_pylist()
    seq, raw = table["seq_to"].to_pylist(), table["raw"].to_pylist()
    for i in range(table.num_rows):
        if raw[i] is not None:
            out.append(json.loads(raw[i]))
            continue
        edge: dict[str, Any] = {"from": src[i], "to": dst[i], "type": typ[i]}
        if seq[i] is not None:
            edge["seqTo"] = seq[i]
        out.append(edge)
    return out


def bulk_loads(texts: list[str | None]) -> list[Any]:
    """`json.loads` of each text (None stays None), in one parse of the whole column."""
    present = [t for t in texts if t is not None]
    if not present:
        return [None] * len(texts)
    values = iter(json.loads("[" + ",".join(present) + "]"))
    return [None if t is None else next(values) for t in texts]


def state_tables(data: Mapping[str, Any]) -> tuple[pa.Table, pa.Table]:
    """A store dict (the contract's shape) as node and edge state tables."""
    quick = _plain_state_tables(data)
    if quick is not None:
        return quick
    builder = DeltaBuilder()
    nodes = data.get("nodes") or {}
    for node in nodes.values() if isinstance(nodes, Mapping) else nodes:
        builder._put(builder.nodes, str(node["id"]), node)
    for raw in data.get("edges") or ():
        e = _edge_json(raw)
        builder._put(builder.edges, edge_key(e), e)
    return builder.tables()


def _edge_json(edge: Any) -> Mapping[str, Any]:
    e = dict(edge) if isinstance(edge, Mapping) else edge
    return e if isinstance(e, dict) and _plain_edge(e) else edge_to_json(e)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _orjson_text(value: Any) -> str:
    """`_ENCODER.encode(value)` of a JSON value without floats (orjson writes those byte for
    byte the same, ~5x faster); anything orjson refuses goes to `_ENCODER`."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # e.g. a lone surrogate, an int beyond 64 bits
        return _ENCODER.encode(value)


def _plain_state_tables(data: Mapping[str, Any]) -> tuple[pa.Table, pa.Table] | None:
    """`state_tables` of a store whose nodes and edges are all plain (what `node_to_dict` and
    `edge_to_dict` write), ids and edge keys unique: built column by column, with no row
    builder (an import's 100k nodes and 300k edges: each column one C loop, ``map`` of an
    ``itemgetter``; or taken as the import's check pulled them out, when it did:
    `PlainStore.node_columns`, `PlainStore.edge_columns`); None for any other store."""
    nodes = data.get("nodes") or {}
    edges = data.get("edges") or []
    if type(nodes) is not dict or type(edges) is not list:
        return None
    rows = list(nodes.values())
    known = isinstance(data, PlainStore) and data.plain  # an import's: checked as it was made
    if not known and (not all(map(_plain_node, rows)) or not all(map(_plain_edge, edges))):
        return None
    given_nodes = data.node_columns if known else None
    if given_nodes is not None and len(given_nodes["id"]) != len(rows):
        given_nodes = None

    def column(key: str) -> Any:
        if given_nodes is not None:  # (the import's check pulled them out already)
            return given_nodes[key]
        return list(map(itemgetter(key), rows))

    ids = column("id")
    given = data.edge_columns if known else None
    if given is not None and given.num_rows != len(edges):
        given = None
    if given is not None:
        src, typ, dst, seq = (given[name] for name in ("src", "type", "dst", "seq_to"))
    else:
        src, typ, dst = (list(map(get, edges)) for get in (_FROM, _TYPE, _TO))
        seq = list(map(dict.get, edges, repeat("seqTo")))
    if not known and (
        len(set(ids)) != len(ids) or len(set(zip(src, typ, dst, strict=True))) != len(edges)
    ):
        return None
    n, m = len(rows), len(edges)
    encode = _orjson_text if known and data.float_free else _ENCODER.encode
    no = pa.array(np.zeros(n, dtype=bool))

    node_cols = {
        "id": ids,
        "removed": no,
        "moved": no,
        "type": column("type"),
        "level": column("level"),
        "title": column("title"),
        "fields": list(map(encode, column("fields"))),
        "parent_id": column("parentId"),
        "children_ids": column("childrenIds"),
        "seq_to": column("seqTo"),
        "semantic_depth": column("semanticDepth"),
        "semantic_rollup": column("semanticRollup"),
        "archived": column("archived"),
        "superseded_by": (
            column("supersededBy")
            if given_nodes is not None
            else list(map(dict.get, rows, repeat("supersededBy")))
        ),
        "raw": pa.nulls(n, pa.string()),
    }
    edge_no = pa.array(np.zeros(m, dtype=bool))
    edge_cols = {
        "src": src,
        "type": typ,
        "dst": dst,
        "removed": edge_no,
        "moved": edge_no,
        "seq_to": seq,
        "raw": pa.nulls(m, pa.string()),
    }
    return (
        pa.table({f.name: node_cols[f.name] for f in NODE_SCHEMA}, schema=NODE_SCHEMA),
        pa.table({f.name: edge_cols[f.name] for f in EDGE_SCHEMA}, schema=EDGE_SCHEMA),
    )


_FROM, _TYPE, _TO = itemgetter("from"), itemgetter("type"), itemgetter("to")
