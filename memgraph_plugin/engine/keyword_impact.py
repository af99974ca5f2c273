"""Impact classes of a common token's base postings, so a bounded keyword search reads only its
best postings and still returns exactly the BM25 top k.

A token's BM25 contribution to a document depends only on the term frequency and the document's
length (the IDF and the average length are the same for every document of one search). So the
postings of one token fall into classes of equal contribution, (frequency, length) pairs: a few
dozen even for a token in tens of thousands of documents. `ImpactClasses` groups a token's base
postings by class once (on the first search that reads the token by impact, then kept), and at
search time orders the classes by their contribution under the current IDF and average length.

`take` then gives the postings of the best classes, at least `m` of them, and the best
contribution of any posting left out. A search (`KeywordIndex.search`) scores exactly every
document those postings (and every posting of the rarer tokens and of the in-memory part) name,
and since a document named by none of them scores at most the sum of the left-out bounds, its
top k is exact once its k-th score is above that sum; otherwise it takes more (`m` times 4)
until it is, or until nothing is left out.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .keyword_postings import BasePostings

__all__ = ["BIG", "ImpactClasses", "bounded_scores", "contribution"]

#: base postings of a token from which a bounded search reads it by impact (below: all of them)
BIG = 4096


def contribution(
    weight: float, tfs: np.ndarray, lens: np.ndarray, avg: float, k1: float, b: float
) -> np.ndarray:
    """BM25 contributions ``w (k1 + 1) tf / (tf + k1 (1 - b + b len / avg))`` of postings with
    term frequencies `tfs` (int32) in documents of lengths `lens` (float32): the one formula
    every search uses, so equal inputs give equal floats."""
    norm = k1 * (1.0 - b + b * lens / avg)
    return (weight * (k1 + 1.0)) * tfs / (tfs + norm)  # type: ignore[no-any-return]


class ImpactClasses:
    """One token's base postings (positions ``0 .. n - 1`` of its posting range) grouped by
    (term frequency, document length)."""

    __slots__ = ("tfs", "lens", "starts", "order")

    def __init__(self, freqs: np.ndarray, lens: np.ndarray) -> None:
        """`freqs`: the postings' term frequencies; `lens`: their documents' lengths (whole
        numbers, as float32)."""
        key = freqs.astype(np.int64) << 32
        key |= lens.astype(np.int64)
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        cut = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        starts = np.concatenate([[0], cut, [ordered.shape[0]]]).astype(np.int64)
        heads = ordered[starts[:-1]]
        self.tfs = (heads >> 32).astype(np.int32)  # per class
        self.lens = (heads & 0xFFFFFFFF).astype(np.float32)
        self.starts = starts  # class c holds positions order[starts[c]:starts[c + 1]]
        self.order = order.astype(np.int32)

    def take(
        self, m: int, weight: float, avg: float, k1: float, b: float
    ) -> tuple[np.ndarray, float]:
        """(positions of the postings of the best classes, at least `m` of them or all; the best
        contribution of a posting not among them, 0.0 when none is left out)."""
        values = contribution(weight, self.tfs, self.lens, avg, k1, b)
        best_first = np.argsort(-values, kind="stable")
        sizes = (self.starts[1:] - self.starts[:-1])[best_first]
        enough = int(np.searchsorted(np.cumsum(sizes), m, side="left")) + 1
        if enough >= best_first.shape[0]:
            return self.order, 0.0
        picked = best_first[:enough]
        parts = [self.order[self.starts[c] : self.starts[c + 1]] for c in picked.tolist()]
        return np.concatenate(parts), float(values[best_first[enough]])


def bounded_scores(
    terms: list[tuple[int, float]],
    m: int,
    *,
    base: BasePostings,
    gens: np.ndarray,
    lens: np.ndarray,
    bdead: np.ndarray,
    growable: Callable[[int], tuple[np.ndarray, np.ndarray] | None],
    classes_of: Callable[[int], ImpactClasses],
    avg: float,
    k1: float,
    b: float,
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(slots, BM25 sums) of every document a posting of the search reads names, and the most
    any other document can score; None when no posting is left out (search everything then).

    `terms`: (token number, IDF weight) in the order scores are summed; a token with `BIG` or
    more base postings is read by impact (its best `m` or more), every other posting is read.
    The sums are the floats the full search computes for those documents: per token the same
    contributions, added in token order."""
    n_base = base.off.shape[0] - 1
    vocab = base.ptr.shape[0] - 1
    read: list[np.ndarray] = []
    bound, left = 0.0, False
    grown = [growable(tid) for tid, _ in terms]
    for (tid, weight), g in zip(terms, grown, strict=True):
        if g is not None:
            read.append(g[0])
        lo, hi = (int(base.ptr[tid]), int(base.ptr[tid + 1])) if tid < vocab else (0, 0)
        if hi - lo >= BIG:
            pos, rest = classes_of(tid).take(m, weight, avg, k1, b)
            left = left or pos.shape[0] < hi - lo
            bound += rest
            slots = base.slots[lo:hi][pos]
        else:
            slots = base.slots[lo:hi]
        if slots.shape[0] and bdead[tid]:
            slots = slots[gens[slots] == 0]
        read.append(slots)
    if not left:
        return None
    cand = np.unique(np.concatenate(read))
    held = cand[cand < n_base]
    held = held[gens[held] == 0]  # base slots still holding their loaded document
    slot_parts: list[np.ndarray] = []
    value_parts: list[np.ndarray] = []
    for (tid, weight), g in zip(terms, grown, strict=True):
        lo, hi = (int(base.ptr[tid]), int(base.ptr[tid + 1])) if tid < vocab else (0, 0)
        pieces: list[tuple[np.ndarray, np.ndarray]] = []
        if hi - lo >= BIG:  # the token's postings of the candidates, looked up by slot
            rows = base.slots[lo:hi]
            at = np.minimum(np.searchsorted(rows, held), hi - lo - 1)
            hit = rows[at] == held
            pieces.append((held[hit], base.freqs[lo:hi][at[hit]]))
        elif hi > lo:
            slots, tfs = base.slots[lo:hi], base.freqs[lo:hi]
            if bdead[tid]:
                keep = gens[slots] == 0
                slots, tfs = slots[keep], tfs[keep]
            pieces.append((slots, tfs))
        if g is not None:
            pieces.append(g)
        for slots, tfs in pieces:
            slot_parts.append(slots)
            value_parts.append(contribution(weight, tfs, lens[slots], avg, k1, b))
    found, where = np.unique(np.concatenate(slot_parts), return_inverse=True)
    # adds in token order per document, like the full search (the same floats)
    values = np.bincount(where, weights=np.concatenate(value_parts))
    return found, values, bound
