"""The keyword index in columns: what a snapshot persists of it, and the arrays it is rebuilt into.

A snapshot stores, per node, its distinct token ids in order of first occurrence and their term
frequencies (what `KeywordIndex` would compute from the node's text), plus the vocabulary: the
token of each id, as parts that are each sorted (a full snapshot's vocabulary, then the tokens
each delta added, their ids continuing). `KeywordColumns` is that data as loaded (pyarrow);
`Vocabulary` looks tokens up in it without a Python dict of every token (`keyword_postings.py`
turns the per-node lists into postings).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["KeywordColumns", "Vocabulary"]

_MANY = 4096  # uncached look-ups past which a hash join over the vocabulary beats bisecting
_ABSENT = 65536  # tokens remembered as not stored, at most (then forgotten and counted anew)


@attrs.frozen(eq=False)
class KeywordColumns:
    """A chat's persisted keyword data, aligned with its loaded node table.

    `fingerprint`: the tokenizer and searchable fields that made it (`keyword_fingerprint`);
    `vocab`: the vocabulary parts in id order (each a sorted string array); `ids`, `tids`,
    `tfs`: per node its id, distinct token ids (first occurrence first) and their frequencies
    (chunked as read); a null list means "not known" (the node is indexed from its text).
    """

    fingerprint: str
    vocab: tuple[pa.Array, ...] = attrs.field(converter=lambda v: tuple(_array(p) for p in v))
    ids: pa.ChunkedArray = attrs.field(converter=lambda v: _chunked(v))
    tids: pa.ChunkedArray = attrs.field(converter=lambda v: _chunked(v))
    tfs: pa.ChunkedArray = attrs.field(converter=lambda v: _chunked(v))

    def fits(self, nodes: int) -> bool:
        """Whether the columns are whole: one row per node of the `nodes` loaded, frequency
        lists as long as token lists, token numbers inside the vocabulary."""
        tids, tfs = self.tids, self.tfs
        if not len(self.ids) == len(tids) == len(tfs) == nodes:
            return False
        if not tids.is_null().equals(tfs.is_null()):
            return False
        lengths = pc.fill_null(pc.list_value_length(tids), 0)
        if not lengths.equals(pc.fill_null(pc.list_value_length(tfs), 0)):
            return False
        flat = pc.list_flatten(tids)
        if not len(flat):
            return True
        lo_hi = pc.min_max(flat)
        size = sum(len(p) for p in self.vocab)
        return bool(
            lo_hi["min"].as_py() >= 0
            and lo_hi["max"].as_py() < size
            and pc.min(pc.list_flatten(tfs)).as_py() >= 1
        )

    @property
    def unknown_ids(self) -> list[str]:
        """Ids of the nodes whose tokens are not in the columns."""
        nulls = self.tids.is_null()
        if not pc.any(nulls).as_py():
            return []
        return self.ids.filter(nulls).to_pylist()


class Vocabulary:
    """token <-> token id: sorted parts looked up by bisection (ids `first .. first + len`),
    and a dict for tokens added in memory and the ones already looked up. A token the parts do
    not hold is remembered too (a recall asks for the same word forms turn after turn)."""

    def __init__(self, parts: Sequence[pa.Array] = ()) -> None:
        self._parts: list[tuple[int, pa.Array]] = []
        first = 0
        for part in parts:
            arr = _array(part)
            if len(arr):
                self._parts.append((first, arr))
            first += len(arr)
        self._stored = first  # ids below this are in the parts
        self.ids: dict[str, int] = {}  # tokens added or looked up (read-only outside)
        self._added: list[str] = []  # token of id `_stored + i`
        self._absent: set[str] = set()  # tokens the parts do not hold (and not added since)
        self._sorted: list[tuple[int, _Strings]] | None = None  # the parts, bisectable

    def __len__(self) -> int:
        return self._stored + len(self._added)

    @property
    def stored(self) -> int:
        """How many ids the persisted parts hold."""
        return self._stored

    def get(self, token: str) -> int | None:
        tid = self.ids.get(token)
        if tid is None and self._parts and token not in self._absent:
            tid = self._find(token)
            if tid is not None:
                self.ids[token] = tid
            else:
                if len(self._absent) >= _ABSENT:
                    self._absent.clear()
                self._absent.add(token)
        return tid

    def _find(self, token: str) -> int | None:
        if self._sorted is None:
            self._sorted = [(first, _Strings(part)) for first, part in self._parts]
        key = token.encode("utf-8")  # the parts are sorted by code point: UTF-8 byte order
        for first, part in self._sorted:
            i = bisect.bisect_left(part, key)
            if i < len(part) and part[i] == key:
                return first + i
        return None

    def resolve(self, tokens: Sequence[str]) -> None:
        """Look many tokens up at once (then `get` answers them from the dict)."""
        missing = [t for t in tokens if t not in self.ids]
        if len(missing) < _MANY or not self._parts:
            for t in missing:
                self.get(t)
            return
        for first, part in self._parts:
            wanted = pa.array(missing, part.type)
            at = pc.index_in(wanted, value_set=part).to_pylist()
            for token, i in zip(missing, at, strict=True):
                if i is not None:
                    self.ids[token] = first + i

    def add_new(self, token: str) -> int:
        """A new id for `token`, known not to have one (`resolve` said so)."""
        tid = self.ids[token] = self._stored + len(self._added)
        self._added.append(token)
        self._absent.discard(token)
        return tid

    def term(self, tid: int) -> str:
        if tid >= self._stored:
            return self._added[tid - self._stored]
        for first, part in reversed(self._parts):
            if tid >= first:
                return str(part[tid - first].as_py())
        raise IndexError(tid)


class _Strings:
    """A string array indexable like a list of its UTF-8 bytes (for `bisect`), read from its
    buffers: no pyarrow scalar per probe (a look-up of a word not in the vocabulary cost ~80 µs
    that way)."""

    __slots__ = ("_offsets", "_data", "_n")

    def __init__(self, arr: pa.Array) -> None:
        if arr.null_count:
            arr = pc.fill_null(arr, "")
        if not pa.types.is_large_string(arr.type):
            arr = arr.cast(pa.string())
        wide = pa.types.is_large_string(arr.type)
        buffers = arr.buffers()
        offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
        self._n = len(arr)
        self._offsets = offsets[arr.offset : arr.offset + self._n + 1]
        self._data = memoryview(buffers[2]) if buffers[2] is not None else memoryview(b"")

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> bytes:
        return bytes(self._data[int(self._offsets[i]) : int(self._offsets[i + 1])])


def _chunked(values: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    """As a chunked array (a table's column as read: its chunks are not copied together)."""
    return values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])


def _array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
