"""A person's corrections beyond the batch ops: pin and unpin, restore an archived
node, merge a duplicate into the node it duplicates.

Each is one store transaction (all or nothing, indices follow) and answers a `BatchResult`
with one applied op, or one `Rejection` (codes of the batch: ``NODE_NOT_FOUND``,
``NODE_ARCHIVED``, ``TYPE_MISMATCH``, ``VALIDATION_SKIP``) and nothing changed, so the write
API and the explorer commit it as they commit a batch.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..graph.store import Store
from ..index.name_index import merge_names, name_items
from ..model.models import Edge, EdgeKey, Node
from ..model.results import BatchResult, Rejection, RejectionError
from ..model.schema import INTERNAL_EDGE_TYPES, SYMMETRIC_RELATIONS
from ..model.values import DEFAULT_LIMITS, Limits, value_problem
from .ops import check_store

__all__ = ["ALIASES", "merge_nodes", "restore_node", "set_pinned"]

#: the field a merged-away node's names are kept in (the default schema's character and
#: faction name column)
ALIASES = "aliases"


class _Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _node(store: Store, node_id: Any, what: str) -> Node:
    if not isinstance(node_id, str) or not node_id:
        raise _Refused("VALIDATION_SKIP", f"{what}: a node id is required, got {node_id!r}")
    node = store.node(node_id)
    if node is None:
        raise _Refused("NODE_NOT_FOUND", f"{what}: no node {node_id!r}")
    return node


def _active(store: Store, node_id: Any, what: str) -> Node:
    node = _node(store, node_id, what)
    if node.archived:
        raise _Refused("NODE_ARCHIVED", f"{what}: node {node_id!r} is archived")
    return node


def _run(store: Store, op: dict[str, Any], change: Any) -> BatchResult:
    """`change()` (returning the node id and edges added and removed) in one transaction."""
    check_store(store)
    before = store.version
    try:
        with store.transaction():
            node_id, added, removed = change()
    except _Refused as refused:
        error = RejectionError(refused.code, refused.message)
        return BatchResult(
            rejected=(Rejection(op, error),),
            version=store.version,
            seq=store.seq_counter,
        )
    return BatchResult(
        applied=(op,),
        node_ids=(node_id,),
        changed=store.version != before,
        added=added,
        removed=removed,
        version=store.version,
        seq=store.seq_counter,
    )


def set_pinned(store: Store, node_id: str, pinned: bool) -> BatchResult:
    """Pin (recall injects it every turn, within the budget) or unpin an active node."""
    op = {"op": "pin" if pinned else "unpin", "node_id": node_id}

    def change() -> tuple[str, int, int]:
        node = _active(store, node_id, "node_id")
        store.put_node(attrs.evolve(node, pinned=pinned))
        return node.id, 0, 0

    return _run(store, op, change)


def restore_node(store: Store, node_id: str) -> BatchResult:
    """Bring an archived (forgotten) node back; its edges and children never left."""
    op = {"op": "restore", "node_id": node_id}

    def change() -> tuple[str, int, int]:
        node = _node(store, node_id, "node_id")
        if not node.archived:
            raise _Refused("VALIDATION_SKIP", f"node_id: node {node_id!r} is not archived")
        store.put_node(attrs.evolve(node, archived=False, superseded_by=None))
        return node.id, 0, 0

    return _run(store, op, change)


def _moved_key(key: EdgeKey, absorb: str, keep: str) -> EdgeKey:
    source = keep if key.source == absorb else key.source
    target = keep if key.target == absorb else key.target
    if key.type in SYMMETRIC_RELATIONS and target < source:
        source, target = target, source
    return EdgeKey(source, key.type, target)


def merge_nodes(
    store: Store, keep: str, absorb: str, *, limits: Limits = DEFAULT_LIMITS
) -> BatchResult:
    """Merge `absorb` into `keep` (both active, of one type): `absorb`'s relation edges move to
    `keep` (no duplicates, no self-loops), its title and aliases join `keep`'s ``aliases``, the
    fields `keep` lacks are taken from it, and it is archived, superseded by `keep`. Hierarchy
    edges (rollup membership) stay where they are."""
    op = {"op": "merge", "keep": keep, "absorb": absorb}

    def change() -> tuple[str, int, int]:
        kept = _active(store, keep, "keep")
        gone = _active(store, absorb, "absorb")
        if kept.id == gone.id:
            raise _Refused("VALIDATION_SKIP", "absorb: a node cannot be merged into itself")
        if kept.type != gone.type:
            raise _Refused(
                "TYPE_MISMATCH",
                f"absorb: {gone.id!r} is a {gone.type}, {kept.id!r} a {kept.type}",
            )
        fields = dict(kept.fields)
        for name, value in gone.fields.items():
            if name != ALIASES and name not in fields:
                fields[name] = value
        names = merge_names(kept.fields.get(ALIASES), gone.fields.get(ALIASES), gone.title)
        names = tuple(n for n in name_items(names) if n.lower() != kept.title.lower())
        if names:
            fields[ALIASES] = list(names)
        problem = value_problem(fields.get(ALIASES), f"fields.{ALIASES}", limits)
        if problem is not None:
            raise _Refused("VALIDATION_SKIP", problem)
        added = removed = 0
        for edge in store.edges_of(gone.id):
            if edge.type in INTERNAL_EDGE_TYPES:
                continue
            if store.remove_edge(edge.key):
                removed += 1
            moved = _moved_key(edge.key, gone.id, kept.id)
            if moved.source != moved.target and store.add_edge(
                Edge(moved.source, moved.target, moved.type, edge.seq_to)
            ):
                added += 1
        store.put_node(attrs.evolve(kept, fields=fields))
        store.put_node(attrs.evolve(gone, archived=True, pinned=False, superseded_by=kept.id))
        return kept.id, added, removed

    return _run(store, op, change)
