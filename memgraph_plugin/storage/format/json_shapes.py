"""The original's JSON shapes of nodes and edges (no storage types: `columns.py` and `codec.py`
both build on these)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import attrs

EdgeKey = tuple[str, str, str]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def thaw(value: Any) -> Any:
    """Deep-copy frozen containers into plain JSON-ready data (mappings -> dict, tuples -> list)."""
    if type(value) in _SCALARS:  # most values: skip the slower ABC checks below
        return value
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, frozenset, set)):
        return [thaw(v) for v in value]
    return value


_OPTIONAL_KEYS = {"floorRange", "supersededBy"}
_FLAG_KEYS = {"pinned"}  # left out when false: an unpinned node keeps the contract's keys


def node_to_json(node: Any) -> dict[str, Any]:
    """A node (attrs record or mapping) in the contract's JSON node shape (camelCase keys)."""
    if isinstance(node, Mapping):
        return thaw(node)
    out: dict[str, Any] = {}
    for name, key, optional in _json_fields(type(node)):
        value = thaw(getattr(node, name))
        if optional and (value is None or (value is False and key in _FLAG_KEYS)):
            continue
        out[key] = value
    return out


@functools.cache
def _json_fields(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """`(attribute, JSON key, left out when None or a false flag)` of an attrs record class,
    computed once."""
    left_out = _OPTIONAL_KEYS | _FLAG_KEYS
    return tuple((f.name, _camel(f.name), _camel(f.name) in left_out) for f in attrs.fields(cls))


def edge_to_json(edge: Any) -> dict[str, Any]:
    """An edge (attrs record or mapping) as `{"from", "to", "type"[, "seqTo"]}`."""
    if isinstance(edge, Mapping):
        src = edge.get("from", edge.get("source"))
        dst = edge.get("to", edge.get("target"))
        seq_to = edge.get("seqTo", edge.get("seq_to"))
        etype = edge.get("type")
    else:
        src, dst, etype = edge.source, edge.target, edge.type
        seq_to = getattr(edge, "seq_to", None)
    out: dict[str, Any] = {"from": str(src), "to": str(dst), "type": str(etype)}
    if seq_to is not None:
        out["seqTo"] = seq_to
    return out


_PLAIN_EDGE_KEYS = frozenset({"from", "to", "type", "seqTo"})


def _plain_edge_json(edge: Any) -> dict[str, Any] | None:
    """`edge_to_json` of an edge already in that shape (a dict of string ends and type, what
    stores write), with cheap checks; None for anything else (`edge_to_json` converts it)."""
    if type(edge) is not dict or not edge.keys() <= _PLAIN_EDGE_KEYS:
        return None
    src, dst, etype = edge.get("from"), edge.get("to"), edge.get("type")
    if type(src) is not str or type(dst) is not str or type(etype) is not str:
        return None
    out = {"from": src, "to": dst, "type": etype}
    seq_to = edge.get("seqTo")
    if seq_to is not None:
        out["seqTo"] = seq_to
    return out


def edge_key(edge: Mapping[str, Any]) -> EdgeKey:
    """`(from, type, to)`: the engine's edge key order."""
    return (str(edge["from"]), str(edge["type"]), str(edge["to"]))
