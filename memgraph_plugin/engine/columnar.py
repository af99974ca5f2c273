"""`Node` / `Edge` records straight from a snapshot's columns (pyarrow tables, see
`storage/columns.py`): what `records.decode_graph` gives for the same graph, without building a
JSON dict per node first. Fields are parsed in one `json.loads` of the whole column."""

from __future__ import annotations

import json
from typing import Any

from .frozen import EMPTY
from .json_codec import _ID_NUM, _edges_from_raw, _freeze_fields, node_from_dict
from .models import Edge, EdgeKey, Node

_new = object.__new__
_set = object.__setattr__


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
    """`decode_graph` of the graph held by a node and an edge state table."""
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
    for nid in out:
        m = _ID_NUM.fullmatch(nid)
        if m:
            node_seq = max(node_seq, int(m.group(1)))
    return out, _edges_from_raw(raw_edges, out), node_seq, seq_counter
