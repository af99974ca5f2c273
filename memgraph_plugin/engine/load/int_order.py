"""`stable_order`: the stable sort order of small non-negative integers (row numbers, codes), as
an open groups a chat's edges by end and its children by parent.

A stable `argsort` of int64 is a merge sort; one plain sort of ``value << shift | position``
gives the same order about three times faster (300k values: ~14 ms against ~36).
"""

from __future__ import annotations

import numpy as np

__all__ = ["stable_order"]


def stable_order(values: np.ndarray, bound: int) -> np.ndarray:
    """`np.argsort(values, kind="stable")` (int64) for integers in ``[0, bound)``."""
    m = len(values)
    shift = max(1, m.bit_length())
    if bound >= 1 << (62 - shift):  # pragma: no cover - past ~10**13 distinct values
        return np.argsort(values, kind="stable").astype(np.int64, copy=False)
    key = values.astype(np.int64) << shift
    key |= np.arange(m, dtype=np.int64)
    key.sort()
    key &= (1 << shift) - 1
    return key
