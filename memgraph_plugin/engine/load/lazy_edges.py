"""A loaded store's edge map and adjacency over its snapshot's edge columns, as numpy arrays: an
edge's record is made on the first read of its key, a node's adjacency list on the first read
of its id (a long chat's open reads a few nodes' edges, not its 300k edges).

`EdgeArrays` holds the loaded edges in serial order (rows of the ends, type codes, seq_to) and
two CSR indexes (by source row, by target row), the edges of each row in serial order.
`LazyEdges` (key -> record) and `LazyAdjacency` (id -> records) are `dict`s, like
`lazy_nodes.LazyNodes`: what was made so far and every write are their entries; a loaded entry
is made once (a flag per edge, per row), so one deleted after its first read stays deleted.
Iterating either makes every entry once (in serial order for the edge map) and then it is a
plain dict in all but type.

`MaterializingDict` is the `dict` subclass of the three lazy maps (these two and
`lazy_nodes.LazyNodes`): reads and writes by key go through the subclass's `_read` of a key the
dict misses; anything that reads the whole dict (iteration, views, copies, equality, ``|``)
first makes every entry (`materialize`), so it sees what a dict filled entry by entry would
hold.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, TypeVar

import numpy as np

from ..model.edge_records import EdgeRec, by_serial
from ..model.models import EdgeKey

__all__ = ["EdgeArrays", "LazyAdjacency", "LazyEdges", "MaterializingDict", "stable_order"]

_MISS: Any = object()
_K = TypeVar("_K")
_V = TypeVar("_V")
_new_key = tuple.__new__


class MaterializingDict(dict[_K, _V]):
    """The whole-dict reads of a lazily filled dict; a subclass gives `materialize` and its
    `_read` of a key the dict misses; the per-key reads and writes below go through it."""

    # -- reads and writes by key, over `_read` -------------------------------------------------

    _lock: threading.RLock

    def _read(self, key: Any) -> Any:
        """The value of `key` after the dict missed it (made from the load if it holds one not
        made yet), or `_MISS`."""
        raise NotImplementedError

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISS)
        if value is _MISS:
            value = self._read(key)
        return default if value is _MISS else value

    def __missing__(self, key: Any) -> Any:
        value = self._read(key)
        if value is _MISS:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or self._read(key) is not _MISS

    def pop(self, key: Any, default: Any = _MISS) -> Any:
        with self._lock:
            self._read(key)
            if dict.__contains__(self, key):
                return dict.pop(self, key)
            if default is _MISS:
                raise KeyError(key)
            return default

    def __delitem__(self, key: Any) -> None:
        self.pop(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        value = self.get(key, _MISS)
        if value is _MISS:
            self[key] = value = default
        return value

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    # -- whole-dict reads: every entry made first -----------------------------------------------

    def materialize(self) -> None:
        """Make every entry not made yet (a no-op once whole)."""
        raise NotImplementedError

    def __iter__(self) -> Iterator[_K]:
        self.materialize()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator[_K]:
        self.materialize()
        return dict.__reversed__(self)

    def keys(self) -> Any:
        self.materialize()
        return dict.keys(self)

    def values(self) -> Any:
        self.materialize()
        return dict.values(self)

    def items(self) -> Any:
        self.materialize()
        return dict.items(self)

    def copy(self) -> dict[_K, _V]:
        self.materialize()
        return dict(dict.items(self))

    __copy__ = copy

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self.copy(),))

    def popitem(self) -> tuple[_K, _V]:
        self.materialize()
        return dict.popitem(self)

    def clear(self) -> None:
        self.materialize()
        dict.clear(self)

    def __eq__(self, other: object) -> bool:
        self.materialize()
        if isinstance(other, MaterializingDict):
            other.materialize()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self.materialize()
        if isinstance(other, MaterializingDict):
            other.materialize()
        return dict.__ne__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: Any) -> Any:
        return self.copy() | other

    def __ror__(self, other: Any) -> Any:
        return dict(other) | self.copy()

    def __ior__(self, other: Any) -> Any:
        self.update(other)
        return self

    def __repr__(self) -> str:
        self.materialize()
        return f"{type(self).__name__}({dict.__repr__(self)})"


class EdgeArrays:
    """The loaded edges (deduplicated, stored form, serial order) as arrays, and the CSR
    indexes of their rows by source and by target."""

    __slots__ = ("ids", "row_of", "src", "dst", "code", "types", "code_of", "seq", "has_seq",
                 "out_ptr", "out_idx", "in_ptr", "in_idx")  # fmt: skip

    def __init__(
        self,
        ids: list[str],
        row_of: dict[str, int],
        src: np.ndarray,
        dst: np.ndarray,
        code: np.ndarray,
        types: list[str],
        seq: np.ndarray,
        has_seq: np.ndarray,
    ) -> None:
        self.ids = ids  # node row -> the node map's own id string
        self.row_of = row_of  # id -> node row (the node map's)
        self.src, self.dst, self.code = src, dst, code  # edge -> rows, type code
        self.types = types  # code -> interned lower-case type
        self.code_of = {t: i for i, t in enumerate(types)}
        self.seq, self.has_seq = seq, has_seq
        n = len(ids)
        self.out_ptr, self.out_idx = _csr(src, n)
        self.in_ptr, self.in_idx = _csr(dst, n)

    def __len__(self) -> int:
        return int(self.src.shape[0])

    def records(self, edges: np.ndarray) -> list[EdgeRec]:
        """The records of edges `edges` (indices), in that order."""
        ids, types = self.ids, self.types
        seqs = self.seq[edges].tolist()
        has = self.has_seq[edges].tolist()
        return [
            (ids[s], ids[t], types[c], q if h else None, e)
            for s, t, c, q, h, e in zip(
                self.src[edges].tolist(),
                self.dst[edges].tolist(),
                self.code[edges].tolist(),
                seqs,
                has,
                edges.tolist(),
                strict=True,
            )
        ]

    def find(self, key: Any) -> int | None:
        """The loaded edge of a key in stored form, or None."""
        row_of = self.row_of
        s = row_of.get(key[0])
        t = row_of.get(key[2])
        c = self.code_of.get(key[1])
        if s is None or t is None or c is None:
            return None
        cand = self.out_idx[self.out_ptr[s] : self.out_ptr[s + 1]]
        if not len(cand):
            return None
        hit = cand[(self.dst[cand] == t) & (self.code[cand] == c)]
        return int(hit[0]) if len(hit) else None

    def out_of(self, row: int) -> np.ndarray:
        return self.out_idx[self.out_ptr[row] : self.out_ptr[row + 1]]

    def in_of(self, row: int) -> np.ndarray:
        return self.in_idx[self.in_ptr[row] : self.in_ptr[row + 1]]


def stable_order(values: np.ndarray, bound: int) -> np.ndarray:
    """`np.argsort(values, kind="stable")` (int64) for integers in ``[0, bound)``: the order an
    open groups a chat's edges by end and its children by parent with. A stable `argsort` of
    int64 is a merge sort; numpy sorts 16-bit integers stably by radix, so values below 2**32
    are ordered by two radix passes (low half, then high half), larger ones by one plain sort
    of ``value << shift | position``."""
    if bound <= 1 << 16:  # one radix pass
        return np.argsort(values.astype(np.uint16), kind="stable").astype(np.int64, copy=False)
    if bound <= 1 << 32:  # low half, then high half (stable: ties keep the first pass' order)
        low = np.argsort((values & 0xFFFF).astype(np.uint16), kind="stable")
        high = (values >> 16).astype(np.uint16)[low]
        return low[np.argsort(high, kind="stable")].astype(np.int64, copy=False)
    m = len(values)
    shift = max(1, m.bit_length())
    if bound >= 1 << (62 - shift):  # pragma: no cover - past ~10**13 distinct values
        return np.argsort(values, kind="stable").astype(np.int64, copy=False)
    key = values.astype(np.int64) << shift
    key |= np.arange(m, dtype=np.int64)
    key.sort()
    key &= (1 << shift) - 1
    return key


def _csr(rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(row -> start, edges grouped by row): each row's edges in serial order."""
    order = stable_order(rows, n)
    counts = np.bincount(rows, minlength=n) if len(rows) else np.zeros(n, dtype=np.int64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, order


class LazyEdges(MaterializingDict[EdgeKey, EdgeRec]):
    """key -> record of a store loaded from columns: a loaded edge's record is made on the first
    read of its key (see the module docstring). Writes act as on a dict."""

    __slots__ = ("_arrays", "_made", "_pending", "_lock")

    def __init__(self, arrays: EdgeArrays) -> None:
        super().__init__()
        self._arrays: EdgeArrays | None = arrays if len(arrays) else None
        self._made = bytearray(len(arrays))  # loaded edges made (or written) so far
        self._pending = len(arrays)
        self._lock = threading.RLock()

    def _loaded(self, key: Any) -> int | None:
        """The loaded edge of `key` not made yet, or None."""
        arrays = self._arrays
        if arrays is None:
            return None
        e = arrays.find(key)
        return None if e is None or self._made[e] else e

    def _read(self, key: Any) -> Any:
        with self._lock:
            value = dict.get(self, key, _MISS)
            if value is not _MISS:
                return value
            e = self._loaded(key)
            if e is None:
                return _MISS
            rec = self._arrays.records(np.asarray([e]))[0]  # type: ignore[union-attr]
            self._made[e] = 1
            self._pending -= 1
            dict.__setitem__(self, _new_key(EdgeKey, (rec[0], rec[2], rec[1])), rec)
            return rec

    def __len__(self) -> int:
        return dict.__len__(self) + self._pending

    def __setitem__(self, key: EdgeKey, value: EdgeRec) -> None:
        with self._lock:
            if not dict.__contains__(self, key):
                e = self._loaded(key)
                if e is not None:  # written before its first read: the write wins
                    self._made[e] = 1
                    self._pending -= 1
            dict.__setitem__(self, key, value)

    def materialize(self) -> None:
        """Make every loaded record not made yet; entries in serial order; drop the arrays."""
        if self._arrays is None:
            return
        with self._lock:
            arrays = self._arrays
            if arrays is None:
                return
            todo = np.flatnonzero(np.frombuffer(bytes(self._made), dtype=np.uint8) == 0)
            items = list(dict.items(self))
            for rec in arrays.records(todo):
                items.append((_new_key(EdgeKey, (rec[0], rec[2], rec[1])), rec))
            items.sort(key=by_serial)
            dict.clear(self)
            dict.update(self, items)
            self._arrays = None
            self._pending = 0

    @property
    def complete(self) -> bool:
        return self._arrays is None


def _first_serial(item: tuple[str, list[EdgeRec]]) -> int:
    return item[1][0][4] if item[1] else -1


class LazyAdjacency(MaterializingDict[str, list[EdgeRec]]):
    """node id -> its edges' records (out or in, serial order) of a store loaded from columns,
    each list made on the first read of its id; a node without edges has no entry (as in a
    store built by writes). Writes act as on a dict."""

    __slots__ = ("_arrays", "_outgoing", "_made", "_lock")

    def __init__(self, arrays: EdgeArrays, *, outgoing: bool) -> None:
        super().__init__()
        self._arrays: EdgeArrays | None = arrays if len(arrays) else None
        self._outgoing = outgoing
        self._made = bytearray(len(arrays.ids))  # rows whose list was made (or written)
        self._lock = threading.RLock()

    def _read(self, key: Any) -> Any:
        arrays = self._arrays
        if arrays is None:
            return _MISS
        with self._lock:
            value = dict.get(self, key, _MISS)
            if value is not _MISS:
                return value
            row = arrays.row_of.get(key)
            if row is None or self._made[row]:
                return _MISS
            self._made[row] = 1
            edges = arrays.out_of(row) if self._outgoing else arrays.in_of(row)
            if not len(edges):
                return _MISS
            recs = arrays.records(edges)
            dict.__setitem__(self, arrays.ids[row], recs)
            return recs

    def __setitem__(self, key: str, value: list[EdgeRec]) -> None:
        with self._lock:
            arrays = self._arrays
            if arrays is not None and not dict.__contains__(self, key):
                row = arrays.row_of.get(key)
                if row is not None:
                    self._made[row] = 1  # written before its first read: the write wins
            dict.__setitem__(self, key, value)

    def materialize(self) -> None:
        """Make every list not made yet; then drop the arrays."""
        if self._arrays is None:
            return
        with self._lock:
            arrays = self._arrays
            if arrays is None:
                return
            ptr = arrays.out_ptr if self._outgoing else arrays.in_ptr
            idx = arrays.out_idx if self._outgoing else arrays.in_idx
            made = np.frombuffer(bytes(self._made), dtype=np.uint8).astype(bool)
            counts = np.diff(ptr)
            rows = np.flatnonzero(~made & (counts > 0))
            if len(rows):  # the edges of those rows, grouped by row as the CSR holds them
                at_row = np.repeat(np.arange(len(counts)), counts)
                recs = arrays.records(idx[~made[at_row]])
                ids, at = arrays.ids, 0
                for row, size in zip(rows.tolist(), counts[rows].tolist(), strict=True):
                    dict.__setitem__(self, ids[row], recs[at : at + size])
                    at += size
            # nodes in order of their first edge, as a store filled edge by edge has them
            entries = sorted(dict.items(self), key=_first_serial)
            dict.clear(self)
            dict.update(self, entries)
            self._arrays = None

    def __len__(self) -> int:
        self.materialize()
        return dict.__len__(self)
