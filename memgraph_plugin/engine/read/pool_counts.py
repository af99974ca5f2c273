"""Counts over a store's per-type candidate pools read from the pools' keys alone: how many
roots of a type are at a depth, for the turn's "is compaction due?" check, which otherwise
made a record and a view of every member of the type's pool (every event of a chat just
opened: ~0.7 s at 100k nodes)."""

from __future__ import annotations

from ..graph.store import Store

__all__ = ["pool_count_at_depth"]


def pool_count_at_depth(store: Store, type_id: str, depth: int) -> int:
    """Members of `type_id`'s candidate pool (matched case-insensitively, as `type_pool`) at
    `semantic_depth` `depth`: the type's roots at that depth (its pool holds exactly them)."""
    pool = store._type_pools.get(type_id.lower())  # the pool, not its frozen copy
    return 0 if pool is None else pool.count_depth(depth)
