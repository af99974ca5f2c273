"""The original's JSON records <-> `Node` / `Edge`: the validating decoders (`node_from_dict`,
`edge_from_dict`), the quick path a bulk load takes for records in the shape the encoders write
(`decode_graph`), and the encoders (`node_to_dict`, `edge_to_dict`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...errors import bad_args
from .converter import canonical_keys, key_spellings
from .frozen import EMPTY, FrozenDict, deep_freeze, thaw
from .models import Edge, EdgeKey, Node
from .schema import SYMMETRIC_RELATIONS


def decode_graph(
    data: Mapping[str, Any],
) -> tuple[dict[str, Node], dict[EdgeKey, Edge], int, int]:
    """A whole store dict (``nodes``, ``edges``, ``nodeSeq``, ``seqCounter``) as its nodes by
    id, its edges normalised and by key (self-edges, edges with a missing end and duplicates
    dropped), `node_seq` (at least the highest ``n_<k>`` id) and `seq_counter`."""
    nodes = _nodes_from_raw(data.get("nodes", {}))
    edges = _edges_from_raw(data.get("edges", []), nodes)
    node_seq = _counter(data, "nodeSeq", "node_seq")
    seq_counter = _counter(data, "seqCounter", "seq_counter")
    for nid in nodes:
        m = _ID_NUM.fullmatch(nid)
        if m:
            node_seq = max(node_seq, int(m.group(1)))
    return nodes, edges, node_seq, seq_counter


_ID_NUM = re.compile(r"n_(\d+)")

NODE_KEYS = key_spellings(  # every spelling of a node record's keys
    "id",
    "type",
    "level",
    "title",
    "fields",
    "parent_id",
    "children_ids",
    "seq_to",
    "semantic_depth",
    "semantic_rollup",
    "archived",
    "floor_range",
    "superseded_by",
    "pinned",
)


def _int_or_none(value: Any, where: str, *, minimum: int | None = None) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_args(where, f"expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise bad_args(where, f"must be >= {minimum}, got {value}")
    return value


def _counter(data: Mapping[str, Any], camel: str, snake: str) -> int:
    value = data.get(camel, data.get(snake))
    return _int_or_none(value, camel, minimum=0) or 0


def _nodes_from_raw(raw_nodes: Any) -> dict[str, Node]:
    """The ``nodes`` of a store dict (a map of id -> node, or a list) as records by id."""
    if raw_nodes is None:
        raw_nodes = {}
    if isinstance(raw_nodes, Mapping):
        items: Iterable[tuple[str | None, Any]] = raw_nodes.items()
    elif isinstance(raw_nodes, list):
        items = [(None, n) for n in raw_nodes]
    else:
        raise bad_args("nodes", f"expected a map of id -> node, got {type(raw_nodes).__name__}")
    nodes: dict[str, Node] = {}
    for key, raw in items:
        node = _plain_node(raw, key)
        if node is None:
            node = node_from_dict(raw, key=key)
        if node.id in nodes:
            raise bad_args(f"nodes[{node.id!r}]", "duplicate node id")
        nodes[node.id] = node
    return nodes


def _edges_from_raw(raw_edges: Any, nodes: Mapping[str, Node]) -> dict[EdgeKey, Edge]:
    """The ``edges`` of a store dict, normalised, by key; self-edges, edges with an end
    missing from `nodes` and duplicates (the first wins) dropped."""
    if raw_edges is None:
        raw_edges = []
    if not isinstance(raw_edges, (list, tuple)):
        raise bad_args("edges", f"expected a list, got {type(raw_edges).__name__}")
    edges: dict[EdgeKey, Edge] = {}
    symmetric = SYMMETRIC_RELATIONS
    for i, raw in enumerate(raw_edges):
        source = target = etype = None
        seq_to = None
        if type(raw) is dict and raw.keys() <= _PLAIN_EDGE_KEYS:  # `edge_from_dict`, inlined
            source, target, etype = raw.get("from"), raw.get("to"), raw.get("type")
            seq_to = raw.get("seqTo")
            if not (
                type(source) is str
                and source
                and type(target) is str
                and target
                and type(etype) is str
                and etype
                and (seq_to is None or type(seq_to) is int)
            ):
                source = None
        if source is None:
            edge = edge_from_dict(raw, index=i)
            source, target, etype, seq_to = edge.source, edge.target, edge.type, edge.seq_to
        if source == target or source not in nodes or target not in nodes:
            continue
        if not etype.islower():  # `normalize_edge`, inlined
            etype = etype.lower()
        if etype in symmetric and target < source:
            source, target = target, source
        key = _edge_key(EdgeKey, (source, etype, target))  # EdgeKey(...), minus a call
        if key not in edges:
            edges[key] = Edge(source, target, etype, seq_to)
    return edges


_PLAIN_NODE_KEYS = frozenset(k for k in NODE_KEYS if "_" not in k)  # the camelCase spellings
_PLAIN_EDGE_KEYS = frozenset({"from", "to", "type", "seqTo"})
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_new = object.__new__
_edge_key = tuple.__new__
_set = object.__setattr__  # frozen attrs classes refuse their own __setattr__


def _plain_node(raw: Any, key: str | None) -> Node | None:
    """`node_from_dict` for the usual shape (what `node_to_dict` writes: a dict with camelCase
    keys only, values of the exact types, no floorRange), with each check cheap; None for
    anything else, which `node_from_dict` then decodes or rejects with its error. Equal to
    what `node_from_dict` returns whenever it returns a node."""
    if type(raw) is not dict or not raw.keys() <= _PLAIN_NODE_KEYS:
        return None
    get = raw.get
    nid = get("id", key)
    ntype = get("type")
    level = get("level") or "semantic"
    title = get("title")
    if title is None:
        title = ""
    parent = get("parentId") or ""
    children = get("childrenIds") or ()
    seq_to = get("seqTo")
    depth = get("semanticDepth")
    if depth is None:
        depth = 0
    rollup = get("semanticRollup")
    if rollup is None:
        rollup = False
    archived = get("archived")
    if archived is None:
        archived = False
    sup = get("supersededBy")
    pinned = get("pinned")
    if pinned is None:
        pinned = False
    if not (
        type(nid) is str
        and nid
        and (key is None or nid == key)
        and type(ntype) is str
        and ntype
        and type(level) is str
        and type(title) is str
        and type(parent) is str
        and (seq_to is None or type(seq_to) is int)
        and type(depth) is int
        and depth >= 0
        and type(rollup) is bool
        and type(archived) is bool
        and (sup is None or type(sup) is str)
        and type(pinned) is bool
        and get("floorRange") is None
    ):
        return None
    ctype = type(children)
    if ctype is list:
        children = tuple(children)
    elif ctype is not tuple:
        return None
    for c in children:
        if type(c) is not str:
            return None
    fields = get("fields")
    if fields is None or (type(fields) is dict and not fields):
        frozen = EMPTY
    elif type(fields) is dict:
        frozen = _freeze_fields(fields)
    else:
        return None
    # Node(...) without its converters: the values are already in converted form
    node = _new(Node)
    _set(node, "id", nid)
    _set(node, "type", ntype)
    _set(node, "level", level)
    _set(node, "title", title)
    _set(node, "fields", frozen)
    _set(node, "parent_id", parent)
    _set(node, "children_ids", children)
    _set(node, "seq_to", seq_to)
    _set(node, "semantic_depth", depth)
    _set(node, "semantic_rollup", rollup)
    _set(node, "archived", archived)
    _set(node, "floor_range", None)
    _set(node, "superseded_by", sup or None)
    _set(node, "pinned", pinned)
    return node


def _freeze_fields(fields: dict[Any, Any]) -> FrozenDict:
    """`deep_freeze(fields)`, with scalar values under string keys taken as they are."""
    out: dict[str, Any] = {}
    scalar = _SCALAR_TYPES
    for k, v in fields.items():
        if type(k) is not str:
            return deep_freeze(fields)  # type: ignore[no-any-return]
        out[k] = v if type(v) in scalar else deep_freeze(v)
    return FrozenDict(out)


def node_from_dict(raw: Any, *, key: str | None = None) -> Node:
    """One node in the contract's JSON shape -> `Node` (BAD_ARGS names the bad key)."""
    where = f"nodes[{key!r}]" if key is not None else "nodes[]"
    if not isinstance(raw, Mapping):
        raise bad_args(where, f"expected a node object, got {type(raw).__name__}")
    d = canonical_keys(raw, NODE_KEYS)
    nid = d.get("id", key)
    if not isinstance(nid, str) or not nid:
        raise bad_args(f"{where}.id", f"expected a non-empty string, got {nid!r}")
    if key is not None and nid != key:
        raise bad_args(f"{where}.id", f"{nid!r} does not match its key {key!r}")
    ntype = d.get("type")
    if not isinstance(ntype, str) or not ntype:
        raise bad_args(f"{where}.type", f"expected a non-empty string, got {ntype!r}")
    level = d.get("level") or "semantic"
    if not isinstance(level, str):
        raise bad_args(f"{where}.level", f"expected a string, got {level!r}")
    title = d.get("title")
    if title is None:
        title = ""
    if not isinstance(title, str):
        raise bad_args(f"{where}.title", f"expected a string, got {type(title).__name__}")
    fields = d.get("fields")
    if fields is None:
        fields = {}
    if not isinstance(fields, Mapping):
        raise bad_args(f"{where}.fields", f"expected an object, got {type(fields).__name__}")
    parent = d.get("parent_id") or ""
    if not isinstance(parent, str):
        raise bad_args(f"{where}.parentId", f"expected a string, got {parent!r}")
    children = d.get("children_ids") or ()
    if isinstance(children, str) or not isinstance(children, (list, tuple)):
        raise bad_args(f"{where}.childrenIds", "expected a list of ids")
    for c in children:
        if not isinstance(c, str):
            raise bad_args(f"{where}.childrenIds", f"expected ids, found {c!r}")
    seq_to = _int_or_none(d.get("seq_to"), f"{where}.seqTo")
    depth = _int_or_none(d.get("semantic_depth"), f"{where}.semanticDepth", minimum=0) or 0
    flags = {}
    for name, camel in (
        ("semantic_rollup", "semanticRollup"),
        ("archived", "archived"),
        ("pinned", "pinned"),
    ):
        value = d.get(name, False)
        if value is None:
            value = False
        if not isinstance(value, bool):
            raise bad_args(f"{where}.{camel}", f"expected true or false, got {value!r}")
        flags[name] = value
    floor = d.get("floor_range")
    if floor is not None:
        if isinstance(floor, Mapping):
            floor = (floor.get("start", floor.get("from")), floor.get("end", floor.get("to")))
        if not isinstance(floor, (list, tuple)) or len(floor) != 2:
            raise bad_args(f"{where}.floorRange", "expected [start, end]")
        floor = (
            _int_or_none(floor[0], f"{where}.floorRange"),
            _int_or_none(floor[1], f"{where}.floorRange"),
        )
    sup = d.get("superseded_by")
    if sup is not None and not isinstance(sup, str):
        raise bad_args(f"{where}.supersededBy", f"expected a string, got {sup!r}")
    return Node(
        id=nid,
        type=ntype,
        level=level,
        title=title,
        fields=fields,
        parent_id=parent,
        children_ids=tuple(children),
        seq_to=seq_to,
        semantic_depth=depth,
        semantic_rollup=flags["semantic_rollup"],
        archived=flags["archived"],
        floor_range=floor,
        superseded_by=sup or None,
        pinned=flags["pinned"],
    )


def edge_from_dict(raw: Any, *, index: int = 0) -> Edge:
    """``{"from", "to", "type"[, "seqTo"]}`` (or source/target) -> `Edge`."""
    where = f"edges[{index}]"
    if not isinstance(raw, Mapping):
        raise bad_args(where, f"expected an edge object, got {type(raw).__name__}")
    source = raw.get("from", raw.get("source"))
    target = raw.get("to", raw.get("target"))
    etype = raw.get("type")
    for value, name in ((source, "from"), (target, "to"), (etype, "type")):
        if not isinstance(value, str) or not value:
            raise bad_args(f"{where}.{name}", f"expected a non-empty string, got {value!r}")
    seq_to = _int_or_none(raw.get("seqTo", raw.get("seq_to")), f"{where}.seqTo")
    return Edge(source, target, etype, seq_to)


#: `node_to_dict`'s keys, in its order, that every node has (``floorRange``, ``supersededBy``
#: and ``pinned`` only when set): the normal form an import's quick passes and the state
#: columns read node by node
NORMAL_NODE_KEYS = (
    "id",
    "type",
    "level",
    "title",
    "fields",
    "parentId",
    "childrenIds",
    "seqTo",
    "semanticDepth",
    "semanticRollup",
    "archived",
)


def node_to_dict(node: Node) -> dict[str, Any]:
    """A node in the contract's JSON shape (camelCase; floorRange/supersededBy only when set,
    ``pinned`` only when true: an unpinned node has exactly the contract's keys)."""
    out: dict[str, Any] = {
        "id": node.id,
        "type": node.type,
        "level": node.level,
        "title": node.title,
        "fields": thaw(node.fields),
        "parentId": node.parent_id,
        "childrenIds": list(node.children_ids),
        "seqTo": node.seq_to,
        "semanticDepth": node.semantic_depth,
        "semanticRollup": node.semantic_rollup,
        "archived": node.archived,
    }
    if node.floor_range is not None:
        out["floorRange"] = list(node.floor_range)
    if node.superseded_by is not None:
        out["supersededBy"] = node.superseded_by
    if node.pinned:
        out["pinned"] = True
    return out


def edge_to_dict(edge: Edge) -> dict[str, Any]:
    out: dict[str, Any] = {"from": edge.source, "to": edge.target, "type": edge.type}
    if edge.seq_to is not None:
        out["seqTo"] = edge.seq_to
    return out
