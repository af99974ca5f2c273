"""The per-chat in-memory vector index: an exact float32 matrix searched with numpy."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np


class VectorIndex:
    """Rows of L2-normalised vectors with their node type and a searchable flag.

    Cosine similarity is a dot product of normalised rows; top-k by `argpartition`.
    Removing a row blanks it; the matrix is compacted when half of it is blank.
    """

    def __init__(self, dim: int, profile: str) -> None:
        self.dim = int(dim)
        self.profile = profile
        self._matrix = np.zeros((64, self.dim), dtype=np.float32)
        self._ids: list[str | None] = []
        self._pos: dict[str, int] = {}
        self._type_codes = np.zeros(64, dtype=np.int32)
        self._live = np.zeros(64, dtype=bool)
        self._codes: dict[str, int] = {}
        self._blank = 0

    @property
    def nbytes(self) -> int:
        """Bytes of its arrays (what the memory budget counts for a chat's vectors)."""
        return int(self._matrix.nbytes + self._live.nbytes + self._type_codes.nbytes)

    @classmethod
    def from_arrays(
        cls,
        profile: str,
        ids: Sequence[str],
        matrix: np.ndarray,
        type_names: Sequence[str],
        type_of_row: np.ndarray,
        searchable: np.ndarray,
        *,
        headroom: float = 1.25,
    ) -> VectorIndex:
        """An index of `ids` built in one copy of `matrix` (rows `type_names[type_of_row[i]]`,
        `searchable[i]`), with room to grow before the next copy (for an open: no per-row
        Python work besides the id map)."""
        n, dim = matrix.shape
        index = cls(dim, profile)
        cap = max(64, int(n * headroom))
        index._matrix = np.empty((cap, dim), dtype=np.float32)
        index._matrix[:n] = matrix  # the one copy (the stored column may be read-only memory)
        index._matrix[n:] = 0.0
        index._ids = list(ids)
        index._pos = {nid: i for i, nid in enumerate(index._ids)}
        codes = np.asarray([index._code(t) for t in type_names], dtype=np.int32)
        index._type_codes = np.zeros(cap, dtype=np.int32)
        index._live = np.zeros(cap, dtype=bool)
        if n:
            index._type_codes[:n] = codes[np.asarray(type_of_row, dtype=np.int64)]
            index._live[:n] = np.asarray(searchable, dtype=bool)
        return index

    def __len__(self) -> int:
        return len(self._pos)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._pos

    def _code(self, type_name: str) -> int:
        key = type_name.lower()
        code = self._codes.get(key)
        if code is None:
            code = self._codes[key] = len(self._codes) + 1
        return code

    def _grow(self, need: int) -> None:
        cap = self._matrix.shape[0]
        if need <= cap:
            return
        new_cap = max(need, cap * 2)
        matrix = np.zeros((new_cap, self.dim), dtype=np.float32)
        matrix[:cap] = self._matrix
        self._matrix = matrix
        self._type_codes = np.resize(self._type_codes, new_cap)
        self._type_codes[cap:] = 0
        live = np.zeros(new_cap, dtype=bool)
        live[:cap] = self._live
        self._live = live

    def upsert(
        self,
        ids: Sequence[str],
        matrix: np.ndarray,
        types: Sequence[str],
        searchable: Sequence[bool],
    ) -> None:
        """Insert or replace rows (one per id)."""
        if len(ids) == 0:
            return
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.shape != (len(ids), self.dim):
            raise ValueError(f"expected a ({len(ids)}, {self.dim}) matrix, got {matrix.shape}")
        new = [i for i in ids if i not in self._pos]
        self._grow(len(self._ids) + len(new))
        for node_id in new:
            self._pos[node_id] = len(self._ids)
            self._ids.append(node_id)
        rows = np.fromiter((self._pos[i] for i in ids), dtype=np.int64, count=len(ids))
        self._matrix[rows] = matrix
        codes: dict[str, int] = {}
        self._type_codes[rows] = [
            codes[t] if t in codes else codes.setdefault(t, self._code(t)) for t in types
        ]
        self._live[rows] = np.asarray(searchable, dtype=bool)

    def set_flags(self, ids: Iterable[str], types: Iterable[str], searchable: Iterable[bool]):
        """Update type and searchable flag of known rows without touching their vectors."""
        for node_id, t, ok in zip(ids, types, searchable, strict=True):
            row = self._pos.get(node_id)
            if row is not None:
                self._type_codes[row] = self._code(t)
                self._live[row] = ok

    def remove(self, ids: Iterable[str]) -> None:
        for node_id in ids:
            row = self._pos.pop(node_id, None)
            if row is not None:
                self._ids[row] = None
                self._live[row] = False
                self._matrix[row] = 0.0
                self._blank += 1
        if self._blank > 64 and self._blank * 2 > len(self._ids):
            self._compact()

    def _compact(self) -> None:
        keep = [row for row, nid in enumerate(self._ids) if nid is not None]
        n = len(keep)
        cap = max(64, n * 2)
        matrix = np.zeros((cap, self.dim), dtype=np.float32)
        matrix[:n] = self._matrix[keep]
        codes = np.zeros(cap, dtype=np.int32)
        codes[:n] = self._type_codes[keep]
        live = np.zeros(cap, dtype=bool)
        live[:n] = self._live[keep]
        self._ids = [self._ids[row] for row in keep]
        self._pos = {nid: i for i, nid in enumerate(self._ids) if nid is not None}
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
        return float(self._matrix[row] @ np.asarray(query, dtype=np.float32).reshape(-1))

    def vector(self, node_id: str) -> np.ndarray | None:
        row = self._pos.get(node_id)
        return None if row is None else self._matrix[row].copy()

    def items(self) -> tuple[tuple[str, ...], np.ndarray]:
        """(ids, matrix) of every row, for checkpoints."""
        rows = [row for row, nid in enumerate(self._ids) if nid is not None]
        ids = tuple(self._ids[row] for row in rows)  # type: ignore[misc]
        return ids, self._matrix[rows].copy()

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
        scores = self._matrix[:n] @ q
        if live != n:
            scores = np.where(mask, scores, -np.inf)
        take = min(k, live)
        top = np.argpartition(-scores, take - 1)[:take] if take < n else np.arange(n)
        out = [(self._ids[int(r)], float(scores[r])) for r in top if mask[r]]
        out.sort(key=lambda item: (-item[1], item[0]))  # type: ignore[arg-type,operator]
        return out[:take]  # type: ignore[return-value]
