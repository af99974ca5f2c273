"""Counts over a store's per-type candidate pools read from the pools' keys alone: how many
roots of a type are at a depth, for the turn's "is compaction due?" check, which otherwise
made a record and a view of every member of the type's pool (every event of a chat just
opened: ~0.7 s at 100k nodes)."""

from __future__ import annotations

from ..graph.store import Store

__all__ = ["oldest_pool_roots", "pool_count_at_depth"]


def pool_count_at_depth(store: Store, type_id: str, depth: int) -> int:
    """Members of `type_id`'s candidate pool (matched case-insensitively, as `type_pool`) at
    `semantic_depth` `depth`: the type's roots at that depth (its pool holds exactly them)."""
    pool = store._type_pools.get(type_id.lower())  # the pool, not its frozen copy
    return 0 if pool is None else pool.count_depth(depth)


def oldest_pool_roots(store: Store, type_id: str, depth: int, n: int) -> list[str]:
    """The ids of the `n` oldest members of `type_id`'s pool at `depth`, in timeline order
    (`timeline_key`: seq_to ascending, missing last, then id), from the pool's keys: a chunk
    of compaction takes the oldest groups without sorting every root of the type."""
    pool = store._type_pools.get(type_id.lower())
    if pool is None or n <= 0:
        return []
    target = -depth
    out: list[str] = []
    unseq: list[str] = []  # seq_to missing: key 1, the pool's front, the timeline's end
    group: list[str] = []  # one seq's ids: the pool holds them by id, as the timeline does
    seq: int | None = None
    for key in pool.keys_from_oldest():  # seq ascending, each seq's ids descending
        if key[1] != target:
            continue
        if key[0] == 1:
            unseq.append(key[2])
            continue
        if key[0] != seq:
            out.extend(reversed(group))
            group = []
            if len(out) >= n:
                return out[:n]
            seq = key[0]
        group.append(key[2])
    out.extend(reversed(group))
    out.extend(reversed(unseq))
    return out[:n]
