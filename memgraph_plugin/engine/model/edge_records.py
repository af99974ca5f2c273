"""Edge records: the one tuple per edge the store keeps, and the stored form of edges and keys.

An edge is kept as ``(source, target, type, seq_to, serial)``, shared by the edge map and both
ends' adjacency lists; an `Edge` is made from it on demand. Edge types are lower-case and a
symmetric relation is stored once, the smaller id first.
"""

from __future__ import annotations

from collections.abc import Sequence

from .models import Edge, EdgeKey
from .schema import SYMMETRIC_RELATIONS

#: one edge, shared by the edge map and both ends' adjacency (no `Edge` object is kept: `edge()`
#: makes one): (source, target, type, seq_to, serial)
EdgeRec = tuple[str, str, str, "int | None", int]


def edge_of(rec: EdgeRec) -> Edge:
    """The `Edge` an edge record stands for (made on demand: the store keeps records only)."""
    return Edge(rec[0], rec[1], rec[2], rec[3])


def by_serial(item: tuple[EdgeKey, EdgeRec]) -> int:
    return item[1][4]


def serial_of(rec: EdgeRec) -> int:
    return rec[4]


def normalize_edge(edge: Edge) -> Edge:
    """Edge types are stored lower-case (the contract lower-cases relations when it reads them,
    so an imported ``"Mentions"`` is ``mentions``); symmetric relations once, the smaller id
    first."""
    etype = edge.type if edge.type.islower() else edge.type.lower()
    if etype in SYMMETRIC_RELATIONS and edge.target < edge.source:
        return Edge(edge.target, edge.source, etype, edge.seq_to)
    if etype is not edge.type:
        return Edge(edge.source, edge.target, etype, edge.seq_to)
    return edge


def normalize_key(key: tuple[str, str, str]) -> EdgeKey:
    """A lookup key in stored form (lower-case type; symmetric: the smaller id first)."""
    source, etype, target = key
    if not etype.islower():
        etype = etype.lower()
        key = (source, etype, target)
    if etype in SYMMETRIC_RELATIONS and target < source:
        return EdgeKey(target, etype, source)
    return key if isinstance(key, EdgeKey) else EdgeKey(source, etype, target)


def edge_keys(recs: Sequence[EdgeRec], limit: int | None, newest: bool) -> tuple[EdgeKey, ...]:
    """The keys of adjacency records, all of them or the first/last `limit`, in stored order."""
    if limit is not None:
        limit = max(limit, 0)
        recs = (recs[len(recs) - limit :] if limit else ()) if newest else recs[:limit]
    return tuple([EdgeKey(r[0], r[2], r[1]) for r in recs])
