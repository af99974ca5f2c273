"""`LoadedPoolOrder`: a store's pool membership as it was loaded, read from the load's arrays.

A keyword search breaks ties by recency through `Store.pool_order()` (id -> recency key and
type of every pool member). After a columnar open that map is deferred: building it makes a
key tuple and a dict entry per pool member, which the first search after an open would pay.
Until the store builds it (its first write that touches the
pool), the pool is exactly the load's, so this read-only map answers from the load's arrays:
per looked-up id, a dict lookup and three array reads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..index.candidate_pool import PoolKey

__all__ = ["LoadedPoolOrder"]


class LoadedPoolOrder(Mapping[str, tuple[PoolKey, str]]):
    """id -> (recency key, lower-case type) of the pool members of a loaded graph, iterated in
    pool order: what `LoadedColumns.pool_of` builds as a dict, without building it."""

    __slots__ = (
        "_row_of",
        "_ids",
        "_ranked",
        "_neg_seq",
        "_neg_depth",
        "_ltype",
        "_ltype_names",
        "_rank",
    )

    def __init__(
        self,
        row_of: Mapping[str, int],
        ids: np.ndarray,
        ranked: np.ndarray,
        neg_seq: np.ndarray,
        neg_depth: np.ndarray,
        pool_ltype: np.ndarray,
        ltype_names: list[str],
    ) -> None:
        """`row_of`: id -> row; `ids`: row -> id; `ranked`: the pool's rows in recency order;
        `neg_seq`/`neg_depth`: row -> the key's first two parts; `pool_ltype`: pool position
        -> its lower-case type, as an index into `ltype_names`."""
        self._row_of = row_of
        self._ids = ids
        self._ranked = ranked
        self._neg_seq, self._neg_depth = neg_seq, neg_depth
        self._ltype, self._ltype_names = pool_ltype, ltype_names
        rank = np.full(ids.shape[0], -1, dtype=np.int64)  # row -> pool position (-1: none)
        rank[ranked] = np.arange(ranked.shape[0], dtype=np.int64)
        self._rank = rank

    def _pos(self, key: Any) -> int:
        row = self._row_of.get(key) if isinstance(key, str) else None
        return -1 if row is None else int(self._rank[row])

    def __contains__(self, key: object) -> bool:
        return self._pos(key) >= 0

    def __getitem__(self, key: str) -> tuple[PoolKey, str]:
        pos = self._pos(key)
        if pos < 0:
            raise KeyError(key)
        row = int(self._ranked[pos])
        key = (int(self._neg_seq[row]), int(self._neg_depth[row]), self._ids[row])
        return key, self._ltype_names[int(self._ltype[pos])]

    def __len__(self) -> int:
        return int(self._ranked.shape[0])

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids[self._ranked].tolist())
