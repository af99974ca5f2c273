"""`LazyNodes`: a loaded store's id -> `Node` map over its snapshot's node columns, making each
`Node` on the first read of its id (most nodes of a long chat are never read in a session).

`NodeColumns` holds the columns of the node state table and makes the records of a block of
rows (`BLOCK` at a time: a pyarrow slice per column costs about what a few records do; reads
by id are scattered, so a block is small, and a whole-map read makes runs of blocks at once).
`LazyNodes` is a `dict` (the store's hot loops keep `dict` reads): records made so far and every
write are its entries; the rows not yet read are counted, found and made on demand. Reads by id
(`get`, `[]`, `in`, `len`) never make more than the read id's block; iterating it (`keys`,
`values`, `items`, `iter`, comparisons, copies) makes every record once and puts the entries in
the order a `dict` filled row by row and then written would have, after which the columns are
dropped and it is a plain dict in all but type. Reads that have made 7/8 of the blocks do that
too, so a chat read almost whole holds its nodes once, not also their columns.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model.frozen import EMPTY, JsonFields
from ..model.models import Node
from .lazy_edges import _MISS, MaterializingDict

__all__ = ["BLOCK", "LazyNodes", "NodeColumns"]

#: rows made at once by a read of one id: a block costs ~15-20 us plus ~2.7 us per record, so 16
#: makes a scattered read (a recall's ~1,000 nodes over ~130 blocks) ~3x cheaper than 64 did
BLOCK = 16
_new = object.__new__
_set = object.__setattr__


class NodeColumns:
    """The columns of a node state table (rows stored as columns, not as raw JSON) and what the
    load computed over them; `records(lo, hi)` makes the `Node`s of rows ``lo:hi``."""

    __slots__ = (
        "ids",
        "row_of",
        "_types",
        "_type_code",
        "_levels",
        "_level_code",
        "_parent_rows",
        "_cols",
        "_seqs",
    )

    def __init__(
        self,
        table: pa.Table,
        ids: list[str],
        row_of: dict[str, int],
        types: list[str],
        type_code: np.ndarray,
        levels: list[str],
        level_code: np.ndarray,
        parent_rows: np.ndarray,
    ) -> None:
        self.ids = ids  # row -> the id string every structure of the store shares
        self.row_of = row_of  # id -> row
        self._types, self._type_code = types, type_code  # interned distinct values, codes
        self._levels, self._level_code = levels, level_code
        self._parent_rows = parent_rows  # row of each row's parent (-1: none / not a node)
        names = (
            "title",
            "fields",
            "parent_id",
            "children_ids",
            "seq_to",
            "semantic_depth",
            "semantic_rollup",
            "archived",
            "superseded_by",
        )
        self._cols = {name: table[name] for name in names}  # sliced as they are: no copy
        self._seqs: dict[int, int] = {}  # one int object per seq_to value

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, name: str) -> pa.ChunkedArray | None:
        """A node column as loaded (`records` reads it), None once released."""
        return self._cols.get(name)

    def release(self) -> None:
        """Drop the columns (every record is made: only the ids and their rows are read)."""
        self._cols = {}

    def records(self, lo: int, hi: int) -> list[Node]:
        """The `Node`s of rows ``lo:hi`` (fields left as their JSON text: `JsonFields`)."""
        cols = self._cols
        size = hi - lo

        def part(name: str) -> list[Any]:
            return cols[name].slice(lo, size).to_pylist()  # type: ignore[no-any-return]

        ids, row_of = self.ids, self.row_of
        types = [self._types[c] for c in self._type_code[lo:hi].tolist()]
        levels = [self._levels[c] for c in self._level_code[lo:hi].tolist()]
        titles, texts, parents, kids = (
            part("title"),
            part("fields"),
            part("parent_id"),
            part("children_ids"),
        )
        seqs, depths, rollups = part("seq_to"), part("semantic_depth"), part("semantic_rollup")
        archived, sups = part("archived"), part("superseded_by")
        prow = self._parent_rows[lo:hi].tolist()
        share = self._seqs.setdefault
        out: list[Node] = []
        for i in range(size):
            node = _new(Node)
            _set(node, "id", ids[lo + i])
            _set(node, "type", types[i])
            _set(node, "level", levels[i])
            _set(node, "title", titles[i])
            text = texts[i]
            if text is None or text == "{}":
                _set(node, "fields", EMPTY)
            else:  # JsonFields(text), without the call
                fields = _new(JsonFields)
                _set(fields, "_text", text)
                _set(fields, "_hash", None)
                _set(node, "fields", fields)
            p = prow[i]
            _set(node, "parent_id", ids[p] if p >= 0 else parents[i])
            k = kids[i]
            if k:
                _set(
                    node,
                    "children_ids",
                    tuple([ids[r] if (r := row_of.get(c)) is not None else c for c in k]),
                )
            else:
                _set(node, "children_ids", ())
            seq = seqs[i]
            _set(node, "seq_to", None if seq is None else share(seq, seq))
            _set(node, "semantic_depth", depths[i])
            _set(node, "semantic_rollup", rollups[i])
            _set(node, "archived", archived[i])
            _set(node, "floor_range", None)
            _set(node, "superseded_by", sups[i] or None)
            _set(node, "pinned", False)  # pinned nodes are stored as raw rows
            out.append(node)
        return out


class LazyNodes(MaterializingDict[str, Node]):
    """id -> `Node` of a store loaded from columns: records are made on first read of their id
    (see the module docstring). Writes (`[k] = v`, `del`, `pop`) act as on a dict."""

    __slots__ = ("_source", "_made", "_blocks", "_pending", "_moved", "_lock")

    def __init__(self, source: NodeColumns) -> None:
        super().__init__()
        self._source: NodeColumns | None = source if len(source) else None
        self._made = bytearray(-(-len(source) // BLOCK))  # blocks whose records exist
        self._blocks = 0  # how many
        self._pending = len(source)  # loaded ids neither made, written nor deleted yet
        self._moved: set[str] = set()  # loaded ids deleted since (their row order is gone)
        # held while records are made and by `materialize` (which empties and refills the
        # dict): a read that misses the dict waits for it, so it never sees that half done
        self._lock = threading.RLock()

    # -- reads by id -----------------------------------------------------------------------------

    def _unread_row(self, key: Any) -> int | None:
        """The row of a loaded id whose record was not made, written or deleted yet."""
        source = self._source
        if source is None:
            return None
        row = source.row_of.get(key)
        if row is None or self._made[row // BLOCK] or dict.__contains__(self, key):
            return None
        if self._moved and key in self._moved:
            return None
        return row

    def _read(self, key: Any) -> Any:
        """The record of `key` after the dict missed it: made with its block, or `_MISS`.
        Once 7/8 of the blocks are made, the rest are made too and the columns dropped
        (`materialize`): a chat read that widely keeps no second copy of its nodes."""
        with self._lock:
            value = dict.get(self, key, _MISS)
            if value is not _MISS:
                return value
            row = self._unread_row(key)
            if row is None:
                return _MISS
            self._make_block(row)
            value = dict.get(self, key, _MISS)
            ripe = self._source is not None and self._blocks * 8 >= len(self._made) * 7
        if ripe:
            self.materialize()
        return value

    def own_id(self, key: str) -> str:
        """The id string the store keeps for node `key` (the same object everywhere), without
        making its record; KeyError when there is no such node."""
        node = dict.get(self, key)
        if node is not None:
            return node.id
        with self._lock:
            node = dict.get(self, key)
            if node is not None:
                return node.id
            row = self._unread_row(key)
            if row is None:
                raise KeyError(key)
            return self._source.ids[row]  # type: ignore[union-attr]

    def _make_block(self, row: int) -> None:
        b = row // BLOCK
        self._make_blocks(b, b + 1)

    def _make_blocks(self, first: int, end: int) -> None:
        """Make the records of blocks ``first:end`` (none of them made yet)."""
        with self._lock:  # two threads reading one block make it once
            source = self._source
            if source is None or self._made[first]:
                return
            for b in range(first, end):
                self._made[b] = 1
            self._blocks += end - first
            if self._pending == 0:  # every record of it was written before being read
                return
            lo = first * BLOCK
            hi = min(end * BLOCK, len(source))
            moved, has, put = self._moved, dict.__contains__, dict.__setitem__
            made = 0
            for node in source.records(lo, hi):
                nid = node.id
                if has(self, nid) or (moved and nid in moved):
                    continue  # written or deleted before its first read
                put(self, nid, node)
                made += 1
            self._pending -= made
            if self._pending == 0:  # every loaded record made or replaced: columns unneeded
                source.release()

    def field_and_rollup(self, ids: Sequence[str], field: str) -> list[tuple[Any, bool]]:
        """For each of `ids` (nodes of this map): the value of its field `field` (None when it
        has none) and whether it is a rollup. Records not made yet are answered from the
        columns (only the texts holding `field` are parsed) and stay unmade."""
        with self._lock:
            out: list[tuple[Any, bool]] = [(None, False)] * len(ids)
            unread: list[int] = []  # positions in `ids`
            rows: list[int] = []
            for at, nid in enumerate(ids):
                node = dict.get(self, nid)
                if node is None and (row := self._unread_row(nid)) is not None:
                    unread.append(at)
                    rows.append(row)
                elif node is not None:
                    out[at] = (node.fields.get(field), bool(node.semantic_rollup))
            if rows:
                source = self._source
                assert source is not None  # rows are unread only while it is there
                take = pa.array(rows, pa.int64())
                texts = source.column("fields").take(take)  # type: ignore[union-attr]
                rollups = source.column("semantic_rollup").take(take).to_pylist()  # type: ignore[union-attr]
                holding = pc.match_substring(texts, f'"{field}"').to_pylist()
                for k, at in enumerate(unread):
                    value = None
                    if holding[k]:
                        value = json.loads(texts[k].as_py()).get(field)
                    out[at] = (value, bool(rollups[k]))
            return out

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        with self._lock:
            return dict.__contains__(self, key) or self._unread_row(key) is not None

    def __len__(self) -> int:
        return dict.__len__(self) + self._pending

    # -- writes ----------------------------------------------------------------------------------

    def __setitem__(self, key: str, value: Node) -> None:
        with self._lock:
            if self._unread_row(key) is not None:
                self._pending -= 1  # written before its first read: the write's record wins
                if self._pending == 0:
                    self._source.release()  # type: ignore[union-attr]
            dict.__setitem__(self, key, value)

    def pop(self, key: str, default: Any = _MISS) -> Any:
        with self._lock:
            if not dict.__contains__(self, key) and self._unread_row(key) is not None:
                self._make_block(self._unread_row(key))  # type: ignore[arg-type]
            if dict.__contains__(self, key):
                value = dict.pop(self, key)
            elif default is _MISS:
                raise KeyError(key)
            else:
                return default
            if self._source is not None and key in self._source.row_of:
                self._moved.add(key)
            return value

    # -- everything else: every record made, in row order ------------------------------------------

    def materialize(self) -> None:
        """Make every record not read yet and put the entries in the order of a dict filled row
        by row and then written to; then drop the columns."""
        if self._source is None:
            return
        with self._lock:
            source = self._source
            if source is None:
                return
            made, b, blocks = self._made, 0, len(self._made)
            while b < blocks:  # each run of blocks not made yet, in one `records` call
                if made[b]:
                    b += 1
                    continue
                end = made.find(1, b)
                end = blocks if end < 0 else end
                self._make_blocks(b, end)
                b = end
            row_of, moved = source.row_of, self._moved
            get = dict.get
            ordered = [
                (nid, node)
                for nid in source.ids
                if (node := get(self, nid, _MISS)) is not _MISS and nid not in moved
            ]
            rest = [
                (nid, node) for nid, node in dict.items(self) if nid not in row_of or nid in moved
            ]
            dict.clear(self)
            dict.update(self, ordered)
            dict.update(self, rest)
            self._source = None
            self._moved = set()
            self._pending = 0

    def column_ids(self) -> tuple[list[str], dict[str, int]] | None:
        """The loaded id column and its id -> row map (read only) while records are still read
        from the columns; None once `materialize` dropped them."""
        source = self._source
        return None if source is None else (source.ids, source.row_of)

    def loaded_column(self, name: str) -> pa.ChunkedArray | None:
        """A column of the loaded rows (row order: `column_ids`) while records are still read
        from the columns; None once they are dropped."""
        source = self._source
        return None if source is None else source.column(name)

    @property
    def complete(self) -> bool:
        """Whether every record is made (the map is then a plain dict in all but type)."""
        return self._source is None

    def ids(self) -> Iterator[str]:
        """Every id, without making records (loaded ids in row order first, then the rest;
        the order `keys()` gives)."""
        source = self._source
        if source is None:
            return iter(list(dict.keys(self)))
        moved, row_of = self._moved, source.row_of
        loaded = [nid for nid in source.ids if not moved or nid not in moved]
        rest = [nid for nid in dict.keys(self) if nid not in row_of or nid in moved]
        return iter(loaded + rest)
