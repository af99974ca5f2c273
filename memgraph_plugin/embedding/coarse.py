"""Coarse lists (IVF) over a vector index's rows: a query reads a bounded number of rows.

The exact search reads every row, so its cost grows with the chat. `CoarseLists` groups the rows
by their nearest of about ``sqrt(n) / 2`` centroids (spherical k-means on a sample); a search
scores the centroids, then only the rows of the nearest lists until `ROW_BUDGET` rows are
taken, and scores those exactly. Scores stay exact; only which rows are read is approximate
(`tests/embedding/test_coarse_lists.py` checks its recall against the exact search).

A search reads each probed list as one contiguous slice of rows in list order (`packed`):
either rows stored in list order to begin with (a snapshot writes its vector rows so, and an
open adopts them as the index's base with their lists: `storage/snapshots/vector_lists.py`; no
copy), or
a list-ordered copy made by `build` on its thread (at 100k rows gathering ~8k rows scattered
over the whole matrix cost several times the product; the copy doubles the index's memory and
is counted in `nbytes`). Lists without either gather their rows (`scored`'s `rows_of`). The
rows are as they were when the lists were made; the index scores rows written since from its
own matrix (`VectorIndex._coarse_scored`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memgraph_plugin.embedding.row_blocks import RowBlocks

ROW_BUDGET = 8192  # rows a search reads at most from the probed lists (plus rows written since)
MIN_PROBE = 8  # lists probed at least
SAMPLE = 8192  # rows k-means trains on
ITERATIONS = 5
_CHUNK = 8192  # rows assigned per matrix product (bounds the temporary)
_GATHER = 1024  # rows gathered per product when the lists keep no ordered rows (stays in cache)

RowsOf = Callable[[np.ndarray], np.ndarray]
"""Row numbers -> their L2-normalised vectors (a copy, in the given order)."""


def list_count(rows: int) -> int:
    """How many lists `rows` rows get (about ``sqrt(rows) / 2``, at least one)."""
    return max(1, min(rows, int(np.sqrt(rows) / 2)))


def train(rows_of: RowsOf, live: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """Centroids (`list_count` of the live rows, float32, unit length) by spherical k-means on a
    sample of the live rows (`live`: one flag per row; none live: every row trains)."""
    n = int(live.shape[0])
    alive = np.flatnonzero(live)
    if alive.shape[0] == 0:
        alive = np.arange(n)
    rng = np.random.default_rng(seed)
    count = list_count(int(alive.shape[0]))
    picked = np.sort(rng.choice(alive, size=min(alive.shape[0], SAMPLE), replace=False))
    sample = rows_of(picked)
    centroids = sample[rng.choice(sample.shape[0], size=count, replace=False)].copy()
    for _ in range(ITERATIONS):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        counts = np.bincount(nearest, minlength=count)
        full = counts > 0
        starts = (np.cumsum(counts) - counts)[full]
        sums = np.zeros_like(centroids)
        sums[full] = np.add.reduceat(sample[np.argsort(nearest, kind="stable")], starts, axis=0)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms == 0
        sums[empty] = centroids[empty]  # a centroid nothing chose stays where it was
        norms[empty] = np.maximum(np.linalg.norm(centroids[empty], axis=1), 1e-12)
        centroids = (sums / norms[:, None]).astype(np.float32)
    return np.ascontiguousarray(centroids, dtype=np.float32)


def assign_all(centroids: np.ndarray, rows: RowBlocks) -> np.ndarray:
    """`assign` of every row of `rows`, read as slices of its blocks (views: no gather; at 100k
    rows the gathers' fresh 12 MB copies cost more CPU than the products)."""
    out = np.empty(len(rows), dtype=np.int32)
    at = 0
    for block in rows.blocks:
        for start in range(0, block.shape[0], _CHUNK):
            part = block[start : start + _CHUNK]
            out[at : at + part.shape[0]] = np.argmax(part @ centroids.T, axis=1)
            at += part.shape[0]
    return out


def assign(centroids: np.ndarray, rows_of: RowsOf, rows: np.ndarray) -> np.ndarray:
    """The nearest centroid (by cosine) of each of `rows` (row numbers), as int32; read in
    chunks: no copy of the whole matrix."""
    out = np.empty(rows.shape[0], dtype=np.int32)
    for start in range(0, rows.shape[0], _CHUNK):
        block = rows_of(rows[start : start + _CHUNK])
        out[start : start + block.shape[0]] = np.argmax(block @ centroids.T, axis=1)
    return out


class CoarseLists:
    """Centroids and, per centroid, the rows (row numbers of the index) nearest to it; made
    from rows ``0 .. rows - 1`` of an index at one moment."""

    __slots__ = ("centroids", "rows", "packed", "owns_packed", "_order", "_starts")

    def __init__(
        self,
        centroids: np.ndarray,
        assignment: np.ndarray,
        rows_of: RowsOf | None = None,
        *,
        ordered: RowBlocks | None = None,
    ) -> None:
        """`rows_of` (when given) reads the rows' vectors for the list-ordered copy; `ordered`:
        the rows themselves are in list order (`assignment` does not decrease) and these
        blocks hold them (at least `len(assignment)` rows; adopted, not copied)."""
        self.centroids = centroids
        self.rows = int(assignment.shape[0])
        counts = np.bincount(assignment, minlength=centroids.shape[0])
        self._starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        #: row vectors in list order (row `_order[i]` at `packed[i]`), None: not kept
        self.packed: RowBlocks | None = None
        self.owns_packed = False  # `packed` is a copy made for these lists (not the index's rows)
        if ordered is not None:
            if self.rows > 1 and np.any(np.diff(assignment) < 0):
                raise ValueError("`ordered` rows must be sorted by their list")
            self._order = np.arange(self.rows, dtype=np.int32)
            self.packed = ordered
            return
        self._order = np.argsort(assignment, kind="stable").astype(np.int32)
        if rows_of is not None:
            packed = np.empty((self.rows, centroids.shape[1]), dtype=np.float32)
            for start in range(0, self.rows, _CHUNK):  # chunks: bounds the gather's temporary
                end = min(self.rows, start + _CHUNK)
                packed[start:end] = rows_of(self._order[start:end].astype(np.int64))
            self.packed, self.owns_packed = RowBlocks.of(packed), True

    @classmethod
    def build(cls, rows_of: RowsOf, live: np.ndarray, *, seed: int = 0) -> CoarseLists:
        """Train centroids on a sample of the live rows and assign every row (`live` has one
        flag per row; `rows_of(row numbers)` gives their L2-normalised vectors) to its nearest
        centroid by cosine. Reads the rows in chunks: no copy of the whole matrix."""
        centroids = train(rows_of, live, seed=seed)
        assignment = assign(centroids, rows_of, np.arange(int(live.shape[0]), dtype=np.int64))
        return cls(centroids, assignment, rows_of)

    @property
    def nbytes(self) -> int:
        """Bytes these lists hold (the rows they adopted are the index's, not counted)."""
        packed = self.packed.nbytes if self.packed is not None and self.owns_packed else 0
        return int(self.centroids.nbytes + self._order.nbytes + self._starts.nbytes + packed)

    def _nearest_lists(self, query: np.ndarray, budget: int) -> np.ndarray:
        """The lists nearest to `query`, nearest first, until `budget` rows (and at least
        `MIN_PROBE` lists) are taken."""
        near = np.einsum("ij,j->i", self.centroids, query)  # one thread: see index._dot
        order = np.argsort(-near, kind="stable")
        sizes = np.diff(self._starts)[order]
        taken = np.cumsum(sizes)
        lists = max(MIN_PROBE, int(np.searchsorted(taken, budget, side="left")) + 1)
        return order[:lists]

    def probe(self, query: np.ndarray, budget: int = ROW_BUDGET) -> np.ndarray:
        """Row numbers of the lists nearest to `query`, nearest list first, until `budget` rows
        (and at least `MIN_PROBE` lists) are taken."""
        picked = self._nearest_lists(query, budget)
        starts, ends = self._starts[picked], self._starts[picked + 1]
        parts = [self._order[s:e] for s, e in zip(starts, ends, strict=True)]
        return np.concatenate(parts).astype(np.int64)

    def scored(
        self, query: np.ndarray, budget: int = ROW_BUDGET, rows_of: RowsOf | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(row numbers, their vectors' dot products with `query`) of the rows `probe` gives,
        each list one slice of `packed` (the vectors as at the build; rows in list order), or,
        with no `packed`, gathered by `rows_of` (rows in row order)."""
        packed = self.packed
        if packed is None and rows_of is None:
            raise ValueError("these coarse lists keep no list-ordered rows: pass `rows_of`")
        picked = np.sort(self._nearest_lists(query, budget))  # forward through the rows
        starts = self._starts[picked].tolist()
        ends = self._starts[picked + 1].tolist()
        spans: list[tuple[int, int]] = []
        for s, e in zip(starts, ends, strict=True):  # neighbouring lists: one slice
            if spans and spans[-1][1] == s:
                spans[-1] = (spans[-1][0], e)
            elif e > s:
                spans.append((s, e))
        total = sum(e - s for s, e in spans)
        rows = np.empty(total, dtype=np.int64)
        scores = np.empty(total, dtype=np.float32)
        at = 0
        for s, e in spans:
            size = e - s
            rows[at : at + size] = self._order[s:e]
            if packed is not None:
                packed.dot_range(s, e, query, out=scores[at : at + size])
            at += size
        if packed is None and total:  # gathered in row order (reads forward), chunk by chunk
            order = np.argsort(rows, kind="stable")
            rows = rows[order]
            assert rows_of is not None
            for start in range(0, total, _GATHER):
                block = rows_of(rows[start : start + _GATHER])
                np.einsum("ij,j->i", block, query, out=scores[start : start + block.shape[0]])
        return rows, scores
