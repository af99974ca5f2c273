"""Rollups: a new node of a hierarchical type standing for a group of children (compaction).

`build_rollup` makes the rollup inside the caller's transaction: depth one above its deepest
child, the children reparented under it (``contains`` and ``semantic_contains`` edges, an old
parent of another type left on both sides); `apply_rollup` runs it as its own all-or-nothing
transaction (the write API's `compact_nodes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ...errors import MemoryGraphError, bad_args
from ..model.models import Edge, EdgeKey, Node
from ..model.schema import Schema
from ..model.values import DEFAULT_LIMITS, Limits, text_problem, value_problem
from .ops import check_store

__all__ = ["apply_rollup", "build_rollup"]


def build_rollup(
    store: Any,
    type: str,
    child_ids: Any,
    summary: Any,
    fields: Any = None,
    *,
    seq: int | None = None,
    schema: Schema | None = None,
    limits: Limits | None = None,
) -> str:
    """Make a rollup of `type` over `child_ids` (call inside a transaction); returns its id.

    Depth ``max(child depth) + 1``, title ``fields["title"]`` when given (taken out of the fields),
    else ``"<type> Summary L<depth> #<n>"``, ``seq_to`` the newest
    child's, fields ``{"summary": summary, **fields}``; each child is reparented (a ``contains``
    edge) and gets a ``semantic_contains`` edge from the rollup.
    """
    check_store(store)
    schema = schema if schema is not None else store.schema
    if not isinstance(type, str) or not type.strip():
        raise bad_args("type", f"expected a non-empty node type, got {type!r}")
    spec = schema.get(type.strip())
    if spec is None:
        raise bad_args("type", f"{type!r} is not in the schema ({', '.join(schema.ids)})")
    type_id = spec.type
    if isinstance(child_ids, (str, bytes)) or not isinstance(child_ids, Iterable):
        raise bad_args("child_ids", f"expected a list of node ids, got {child_ids!r}")
    ids: list[str] = []
    for child_id in child_ids:
        if not isinstance(child_id, str) or not child_id:
            raise bad_args("child_ids", f"expected node ids (strings), found {child_id!r}")
        if child_id not in ids:
            ids.append(child_id)
    if not ids:
        raise bad_args("child_ids", "is empty")
    if not isinstance(summary, str) or not summary.strip():
        raise bad_args("summary", "expected a non-empty string")
    if fields is not None and (
        not isinstance(fields, Mapping) or not all(isinstance(k, str) for k in fields)
    ):
        raise bad_args("fields", "expected a mapping of column name -> value")
    for key, value in (fields or {}).items():
        problem = value_problem(value, f"fields.{key}", limits or DEFAULT_LIMITS)
        if problem is not None:
            raise MemoryGraphError("BAD_ARGS", problem)  # "fields.<column>...: ..."
    problem = text_problem(summary, "summary")
    if problem is not None:
        raise MemoryGraphError("BAD_ARGS", problem)
    children: list[Node] = []
    for child_id in ids:
        child = store.node(child_id)
        if child is None or child.archived:
            state = "is archived" if child is not None else "is not in the store"
            raise MemoryGraphError("CHILD_NOT_FOUND", f"child_ids: {child_id!r} {state}")
        if child.parent_id:
            parent = store.node(child.parent_id)
            if parent is not None and parent.type == type_id:
                raise MemoryGraphError(
                    "CHILD_HAS_PARENT",
                    f"child_ids: {child_id!r} already has a {type_id!r} parent {parent.id!r}",
                )
        children.append(child)
    depth = max(c.semantic_depth for c in children) + 1
    seqs = [c.seq_to for c in children if c.seq_to is not None]
    rollup_id = store.allocate_id()
    number = rollup_id[2:] if rollup_id.startswith("n_") else rollup_id
    extra = dict(fields or {})
    given = extra.pop("title", None)  # a title made from the rollup's content names it
    title = given.strip() if isinstance(given, str) and given.strip() else None
    rollup = Node(
        id=rollup_id,
        type=type_id,
        level=spec.level,
        title=title or f"{type_id} Summary L{depth} #{number}",
        fields={"summary": summary, **extra},
        children_ids=tuple(c.id for c in children),
        seq_to=max(seqs) if seqs else seq,
        semantic_depth=depth,
        semantic_rollup=True,
    )
    put = store.put_node
    put(rollup)
    edge_seq = rollup.seq_to
    for child_id in ids:
        # Read each child afresh: leaving an old parent that is itself among the children
        # (of another type) has just rewritten that parent's children_ids.
        child = store.node(child_id)
        if child.parent_id:  # leave the old parent (of another type): keep both sides agreeing
            old = store.node(child.parent_id)
            if old is not None:
                kept = tuple(c for c in old.children_ids if c != child.id)
                put(attrs.evolve(old, children_ids=kept))
            for etype in ("contains", "semantic_contains"):  # the latter from an old rollup
                store.remove_edge(EdgeKey(child.parent_id, etype, child.id))
        put(attrs.evolve(child, parent_id=rollup_id))
        store.add_edge(Edge(rollup_id, child.id, "contains", edge_seq))
        store.add_edge(Edge(rollup_id, child.id, "semantic_contains", edge_seq))
    return rollup_id


def apply_rollup(
    store: Any,
    type: str,
    child_ids: Any,
    summary: Any,
    fields: Any = None,
    *,
    schema: Schema | None = None,
    limits: Limits | None = None,
) -> tuple[str, bool]:
    """`build_rollup` in its own transaction (all or nothing); returns ``(rollup_id, changed)``."""
    check_store(store)
    schema = schema if schema is not None else store.schema
    before = store.version
    with store.transaction():
        rollup_id = build_rollup(
            store,
            type,
            child_ids,
            summary,
            fields,
            seq=store.seq_counter,
            schema=schema,
            limits=limits,
        )
    return rollup_id, store.version != before
