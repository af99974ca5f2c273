"""The per-chat in-memory vector index: a float32 matrix searched exactly with numpy (one
matrix-vector product per search)."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Mapping, Sequence

import numpy as np

from memgraph_plugin.embedding.row_blocks import RowBlocks

_HEADROOM = 64  # rows of the growable part allocated at first


class VectorIndex:
    """Rows of L2-normalised vectors with their node type and a searchable flag.

    Cosine similarity is a dot product of normalised rows; top-k by `argpartition`.
    Removing a row blanks it; the matrix is compacted when half of it is blank.

    The rows live in two parts: a *base* taken as it is when the index is built from arrays
    (an open adopts the stored vectors without copying them, even read-only memory, and even
    as the record batches they were read in: `RowBlocks`) and a growable part after it for
    rows written since. A write never changes a base row in place:
    it blanks it and puts the new vector in the growable part, so a write costs the same at any
    size and an open copies nothing.

    Very large chats search LanceDB's vector index instead (`storage/vectors/vector_ann.py`),
    which re-scores its candidates here (`score`) and searches the rows written since its
    checkpoint here (`search(only=...)`).
    """

    def __init__(self, dim: int, profile: str) -> None:
        self.dim = int(dim)
        self.profile = profile
        self._base = RowBlocks([], self.dim)  # rows 0 .. len(base) - 1
        self._matrix = np.zeros((_HEADROOM, self.dim), dtype=np.float32)  # the rows after it
        self._ids: list[str | None] = []
        self._pos_map: dict[str, int] | None = {}  # id -> row; None: made on first use
        self._type_codes = np.zeros(_HEADROOM, dtype=np.int32)
        self._live = np.zeros(_HEADROOM, dtype=bool)
        self._codes: dict[str, int] = {}
        self._blank = 0
        self._pos_lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes of its arrays (what the memory budget counts for a chat's vectors)."""
        return int(
            self._base.nbytes + self._matrix.nbytes + self._live.nbytes + self._type_codes.nbytes
        )

    @classmethod
    def from_arrays(
        cls,
        profile: str,
        ids: Sequence[str],
        matrix: np.ndarray | RowBlocks,
        type_names: Sequence[str],
        type_of_row: np.ndarray,
        searchable: np.ndarray,
        *,
        headroom: float = 1.25,
        pos: Mapping[str, int] | None = None,
    ) -> VectorIndex:
        """An index of `ids` whose base is `matrix` itself (not copied: it may be read-only
        memory, e.g. a stored column, or the blocks it was read in; rows
        `type_names[type_of_row[i]]`, `searchable[i]`); the
        per-row flags get room to grow (no per-row Python work besides the id map; `pos`, when
        given, is that map, id -> position in `ids`, and is copied)."""
        base = RowBlocks.of(matrix)
        n, dim = base.shape
        index = cls(dim, profile)
        index._base = base
        cap = max(_HEADROOM, int(n * headroom))
        index._ids = list(ids)
        # without `pos`, the map is made on its first use (a write, a lookup): a search does
        # not need it, and building it for ids in another order than the store's costs ~30 ms
        # at 100k (`_pos`)
        index._pos_map = dict(pos) if pos is not None else None
        codes = np.asarray([index._code(t) for t in type_names], dtype=np.int32)
        index._type_codes = np.zeros(cap, dtype=np.int32)
        index._live = np.zeros(cap, dtype=bool)
        if n:
            index._type_codes[:n] = codes[np.asarray(type_of_row, dtype=np.int64)]
            index._live[:n] = np.asarray(searchable, dtype=bool)
        return index

    @property
    def _pos(self) -> dict[str, int]:
        """id -> row of every id (made from the rows' ids on first use)."""
        pos = self._pos_map
        if pos is None:
            with self._pos_lock:  # made once: a search thread and a write may both ask
                pos = self._pos_map
                if pos is None:
                    ids = self._ids
                    pos = (
                        dict(zip(ids, range(len(ids)), strict=True))
                        if not self._blank
                        else {nid: row for row, nid in enumerate(ids) if nid is not None}
                    )
                    self._pos_map = pos
        return pos

    def map_ids_soon(self) -> threading.Thread | None:
        """Make the id -> row map (`_pos`) on a daemon thread of its own, so that the first
        write or lookup finds it made (~0.4 s at 1M rows); None when it is made already."""
        if self._pos_map is not None:
            return None
        thread = threading.Thread(target=lambda: self._pos, name="vector id map", daemon=True)
        thread.start()
        return thread

    def __len__(self) -> int:
        return len(self._ids) - self._blank

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._pos

    def _code(self, type_name: str) -> int:
        key = type_name.lower()
        code = self._codes.get(key)
        if code is None:
            code = self._codes[key] = len(self._codes) + 1
        return code

    def _row_vector(self, row: int) -> np.ndarray:
        nb = len(self._base)
        return self._base.row(row) if row < nb else self._matrix[row - nb]

    def _rows(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """A copy of the given rows' vectors, in order (`np.take`: a boolean-mask copy costs
        ten times more)."""
        nb = len(self._base)
        picked = np.asarray(rows, dtype=np.int64)
        if picked.shape[0] == 0:
            return np.empty((0, self.dim), dtype=np.float32)
        if picked.max() < nb:
            return self._base.take(picked)
        if picked.min() >= nb:
            return np.take(self._matrix, picked - nb, axis=0)
        out = np.empty((picked.shape[0], self.dim), dtype=np.float32)
        low = np.flatnonzero(picked < nb)
        high = np.flatnonzero(picked >= nb)
        out[low] = self._base.take(picked[low])
        out[high] = np.take(self._matrix, picked[high] - nb, axis=0)
        return out

    def _grow(self, need: int) -> None:
        """Room for `need` rows in all (base included)."""
        nb = len(self._base)
        cap = self._matrix.shape[0]
        if need - nb > cap:
            new_cap = max(need - nb, cap * 2)
            matrix = np.zeros((new_cap, self.dim), dtype=np.float32)
            matrix[:cap] = self._matrix
            self._matrix = matrix
        flags = self._live.shape[0]
        if need > flags:
            new_flags = max(need, flags * 2)
            self._type_codes = np.resize(self._type_codes, new_flags)
            self._type_codes[flags:] = 0
            live = np.zeros(new_flags, dtype=bool)
            live[:flags] = self._live
            self._live = live

    def upsert(
        self,
        ids: Sequence[str],
        matrix: np.ndarray,
        types: Sequence[str],
        searchable: Sequence[bool],
    ) -> None:
        """Insert or replace rows (one per id); a replaced base row moves to the growable part."""
        if len(ids) == 0:
            return
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.shape != (len(ids), self.dim):
            raise ValueError(f"expected a ({len(ids)}, {self.dim}) matrix, got {matrix.shape}")
        nb = len(self._base)
        in_base = list(dict.fromkeys(i for i in ids if self._pos.get(i, nb) < nb))
        for node_id in in_base:  # blank the base row: the id gets a row after the base
            row = self._pos.pop(node_id)
            self._ids[row] = None
            self._live[row] = False
            self._blank += 1
        new = list(dict.fromkeys(i for i in ids if i not in self._pos))
        self._grow(len(self._ids) + len(new))
        for node_id in new:
            self._pos[node_id] = len(self._ids)
            self._ids.append(node_id)
        rows = np.fromiter((self._pos[i] for i in ids), dtype=np.int64, count=len(ids))
        self._matrix[rows - nb] = matrix
        codes: dict[str, int] = {}
        self._type_codes[rows] = [
            codes[t] if t in codes else codes.setdefault(t, self._code(t)) for t in types
        ]
        self._live[rows] = np.asarray(searchable, dtype=bool)
        if in_base and self._blank > 64 and self._blank * 2 > len(self._ids):
            self._compact()

    def set_flags(self, ids: Iterable[str], types: Iterable[str], searchable: Iterable[bool]):
        """Update type and searchable flag of known rows without touching their vectors."""
        for node_id, t, ok in zip(ids, types, searchable, strict=True):
            row = self._pos.get(node_id)
            if row is not None:
                self._type_codes[row] = self._code(t)
                self._live[row] = ok

    def remove(self, ids: Iterable[str]) -> None:
        nb = len(self._base)
        for node_id in ids:
            row = self._pos.pop(node_id, None)
            if row is not None:
                self._ids[row] = None
                self._live[row] = False
                if row >= nb:
                    self._matrix[row - nb] = 0.0
                self._blank += 1
        if self._blank > 64 and self._blank * 2 > len(self._ids):
            self._compact()

    def _compact(self) -> None:
        keep = [row for row, nid in enumerate(self._ids) if nid is not None]
        n = len(keep)
        cap = max(_HEADROOM, n * 2)
        matrix = np.zeros((cap, self.dim), dtype=np.float32)
        if n:
            matrix[:n] = self._rows(keep)
        codes = np.zeros(cap, dtype=np.int32)
        codes[:n] = self._type_codes[keep]
        live = np.zeros(cap, dtype=bool)
        live[:n] = self._live[keep]
        self._ids = [self._ids[row] for row in keep]
        self._pos_map = {nid: i for i, nid in enumerate(self._ids) if nid is not None}
        self._base = RowBlocks([], self.dim)
        self._matrix, self._type_codes, self._live, self._blank = matrix, codes, live, 0

    def accepts(self, node_id: str, types: Collection[str] | None = None) -> bool:
        """Whether a search with `types` may return `node_id` (searchable, type allowed)."""
        row = self._pos.get(node_id)
        if row is None or not self._live[row]:
            return False
        if types is None:
            return True
        codes = {self._codes.get(t.lower()) for t in types}
        return int(self._type_codes[row]) in codes

    def score(self, node_id: str, query: np.ndarray) -> float:
        row = self._pos[node_id]
        return float(self._row_vector(row) @ np.asarray(query, dtype=np.float32).reshape(-1))

    def vector(self, node_id: str) -> np.ndarray | None:
        row = self._pos.get(node_id)
        return None if row is None else np.array(self._row_vector(row), dtype=np.float32)

    def items(self) -> tuple[tuple[str, ...], np.ndarray]:
        """(ids, matrix) of every row, for checkpoints."""
        rows = [row for row, nid in enumerate(self._ids) if nid is not None]
        ids = tuple(self._ids[row] for row in rows)  # type: ignore[misc]
        return ids, self._rows(rows)

    def search(
        self,
        query: np.ndarray,
        *,
        k: int = 20,
        types: Collection[str] | None = None,
        only: Collection[str] | None = None,
    ) -> list[tuple[str, float]]:
        """The `k` most similar searchable rows (cosine), best first; ties by id.

        `only` restricts the search to those ids (the ANN path's un-indexed delta).
        """
        n = len(self._ids)
        if n == 0 or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim or not np.any(q):
            return []
        mask = self._live[:n]
        if types is not None:
            codes = [self._codes[t.lower()] for t in types if t.lower() in self._codes]
            if not codes:
                return []
            mask = mask & np.isin(self._type_codes[:n], codes)
        if only is not None:
            rows = [self._pos[i] for i in only if i in self._pos]
            keep = np.zeros(n, dtype=bool)
            keep[rows] = True
            mask = mask & keep
        live = int(np.count_nonzero(mask))
        if live == 0:
            return []
        nb = len(self._base)
        scores = np.empty(n, dtype=np.float32)
        self._base.dot(q, out=scores[:nb])
        if n > nb:
            # one thread, as `RowBlocks.dot`
            np.einsum("ij,j->i", self._matrix[: n - nb], q, out=scores[nb:])
        if live != n:
            scores = np.where(mask, scores, -np.inf)
        take = min(k, live)
        top = np.argpartition(-scores, take - 1)[:take] if take < n else np.arange(n)
        out = [(self._ids[int(r)], float(scores[r])) for r in top if mask[r]]
        out.sort(key=lambda item: (-item[1], item[0]))  # type: ignore[arg-type,operator]
        return out[:take]  # type: ignore[return-value]
