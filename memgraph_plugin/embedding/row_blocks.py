"""`RowBlocks`: a read-only float32 matrix kept as the row blocks it was read in.

A stored vector column arrives as record batches; joining them into one matrix copies every
vector (150 MB for 100k rows of 384 floats), the largest cost of an open beyond the
read itself. `RowBlocks` adopts each batch's values as they are (zero-copy views) and does the
few things the vector index needs block by block: a matrix-vector product into one output, a
gather of rows, one row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["RowBlocks"]


class RowBlocks:
    """Rows ``0 .. len - 1`` of a `(len, dim)` float32 matrix, held as consecutive blocks."""

    __slots__ = ("_blocks", "_starts", "dim")

    def __init__(self, blocks: Sequence[np.ndarray], dim: int) -> None:
        """`blocks`: 2-D arrays of `dim` columns, in row order (float32 and C-contiguous ones
        are adopted as they are; empty ones are dropped)."""
        self.dim = int(dim)
        kept: list[np.ndarray] = []
        for block in blocks:
            block = np.asarray(block, dtype=np.float32)
            if block.ndim != 2 or block.shape[1] != self.dim:
                raise ValueError(f"expected (rows, {self.dim}) blocks, got {block.shape}")
            if block.shape[0]:
                kept.append(block if block.flags.c_contiguous else np.ascontiguousarray(block))
        self._blocks: tuple[np.ndarray, ...] = tuple(kept)
        sizes = [b.shape[0] for b in kept]
        self._starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)

    @classmethod
    def of(cls, matrix: np.ndarray | RowBlocks) -> RowBlocks:
        """`matrix` as row blocks (itself when it is; a 2-D array: one block, not copied)."""
        if isinstance(matrix, RowBlocks):
            return matrix
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2:
            if matrix.size:
                raise ValueError(f"expected a 2-D matrix, got shape {matrix.shape}")
            matrix = np.zeros((0, 0), dtype=np.float32)  # no rows, no dimension
        return cls([matrix], matrix.shape[1])

    @property
    def blocks(self) -> tuple[np.ndarray, ...]:
        return self._blocks

    @property
    def shape(self) -> tuple[int, int]:
        return len(self), self.dim

    @property
    def nbytes(self) -> int:
        return sum(int(b.nbytes) for b in self._blocks)

    def __len__(self) -> int:
        return int(self._starts[-1])

    def row(self, i: int) -> np.ndarray:
        """Row `i` (a read-only view when the block is)."""
        if not 0 <= i < len(self):
            raise IndexError(i)
        b = int(np.searchsorted(self._starts, i, side="right")) - 1
        return self._blocks[b][i - int(self._starts[b])]

    def take(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """A copy of the given rows, in the given order (`np.take` per block touched)."""
        picked = np.asarray(rows, dtype=np.int64)
        out = np.empty((picked.shape[0], self.dim), dtype=np.float32)
        if picked.shape[0] == 0:
            return out
        if len(self._blocks) == 1:
            return np.take(self._blocks[0], picked, axis=0, out=out)
        if picked.min() < 0 or picked.max() >= len(self):
            raise IndexError("row out of range")
        which = np.searchsorted(self._starts, picked, side="right") - 1
        if np.all(which[1:] >= which[:-1]):  # in order (the usual gather): no sort needed
            order = None
            runs = which
        else:
            order = np.argsort(which, kind="stable")
            runs = which[order]
        bounds = np.flatnonzero(runs[1:] != runs[:-1]) + 1
        starts = np.concatenate([[0], bounds]).tolist()
        ends = [*bounds.tolist(), picked.shape[0]]
        for a, e in zip(starts, ends, strict=True):
            b = int(runs[a])
            at = slice(a, e) if order is None else order[a:e]
            out[at] = np.take(self._blocks[b], picked[at] - self._starts[b], axis=0)
        return out

    def dot(self, q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """`matrix @ q` into `out` (a new array when None), block by block on one thread
        (einsum, not BLAS: the product is bound by memory, and on a busy machine BLAS's hand-off
        to its threads costs more than the arithmetic)."""
        if out is None:
            out = np.empty(len(self), dtype=np.float32)
        starts = self._starts.tolist()
        for b, block in enumerate(self._blocks):
            np.einsum("ij,j->i", block, q, out=out[starts[b] : starts[b + 1]])
        return out

    def array(self) -> np.ndarray:
        """The rows as one matrix: the block itself when there is one, else a copy."""
        if len(self._blocks) == 1:
            return self._blocks[0]
        if not self._blocks:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(self._blocks)

    def filter(self, keep: np.ndarray) -> RowBlocks:
        """The rows whose `keep` flag is set (blocks that keep every row are not copied)."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape[0] != len(self):
            raise ValueError(f"expected {len(self)} flags, got {keep.shape[0]}")
        starts = self._starts.tolist()
        parts = []
        for b, block in enumerate(self._blocks):
            flags = keep[starts[b] : starts[b + 1]]
            parts.append(block if flags.all() else block[flags])
        return RowBlocks(parts, self.dim)

    def __add__(self, other: RowBlocks) -> RowBlocks:
        """These rows, then `other`'s (no copy)."""
        if other.dim != self.dim:
            raise ValueError(f"dimensions differ: {self.dim} and {other.dim}")
        return RowBlocks([*self._blocks, *other._blocks], self.dim)
