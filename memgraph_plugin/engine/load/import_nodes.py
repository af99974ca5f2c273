"""An import's nodes checked column by column: the usual file (an export) has every
node in the plain normal form (`node_to_dict`'s eleven keys, a ``supersededBy`` at most), and
then `import_pass`'s per-node loop takes each as it is. `plain_nodes` makes the same decision
for all of them at once: each key's values pulled out by C loops (``map`` of an
``itemgetter``, ``zip``), their types tested per column (``set(map(type, ...))``), names and
ids joined and tested once, links tested as set inclusions. Only the fields stay per node
(`store_import._fields_ok`, called through ``map``). Anything it is not sure of answers None,
and the per-node loop decides (and the full check names the problem), so the result is the
loop's.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model.json_records import NORMAL_NODE_KEYS
from ..model.values import INT_MAX, MAX_NAME_CHARS, Limits
from .import_hierarchy import positions_end_in_roots
from .store_import import _fields_ok, _json_native

__all__ = ["PlainNodes", "plain_nodes"]

_KEYS = NORMAL_NODE_KEYS
_ROW = itemgetter(*_KEYS)
_NATIVE = 2  # `_fields_ok`: clean, every value JSON-native without a float
_STR, _INT, _BOOL, _LIST, _DICT = {str}, {int}, {bool}, {list}, {dict}
_SEQ = {int, type(None)}


class PlainNodes:
    """What `import_pass` needs of nodes `plain_nodes` passed: the nodes (the caller's dicts,
    in order), each node's parent (``parentId`` set), whether no field holds a float, the
    largest message index (-1: none), the largest ``n_<k>`` id number (-1: none), and each
    key's values in node order (`store_import.PlainStore.node_columns`); and, for the edge
    check, the ids as a pyarrow array and each node's parent's position (-1: none)."""

    __slots__ = (
        "nodes",
        "parents",
        "float_free",
        "top_message",
        "top_id",
        "columns",
        "id_array",
        "parent_at",
    )

    def __init__(
        self,
        nodes: dict[str, dict[str, Any]],
        parents: dict[str, str],
        float_free: bool,
        top_message: int,
        top_id: int,
        columns: dict[str, Sequence[Any]],
        id_array: pa.Array,
        parent_at: np.ndarray,
    ) -> None:
        self.nodes = nodes
        self.parents = parents
        self.float_free = float_free
        self.top_message = top_message
        self.top_id = top_id
        self.columns = columns
        self.id_array = id_array
        self.parent_at = parent_at


def _names_ok(values: Any) -> bool:
    """`store_import._name_ok` of every value (strings already): printable ASCII, 1 to
    `MAX_NAME_CHARS` characters; tested on the values joined (both tests are per character)."""
    if not values:
        return True
    joined = "".join(values)
    if not (joined.isascii() and joined.isprintable()):
        return False
    lengths = list(map(len, values))  # (one pass for both bounds)
    return min(lengths) > 0 and max(lengths) <= MAX_NAME_CHARS


def _counts_ok(values: Any, *, none: bool) -> bool:
    """Ints (no bools) in 0..INT_MAX, or also None where `none`."""
    kinds = set(map(type, values))
    if not kinds <= (_SEQ if none else _INT):
        return False
    numbers = [v for v in values if v is not None] if none and type(None) in kinds else values
    return not numbers or (min(numbers) >= 0 and max(numbers) <= INT_MAX)


def _top_id(column: pa.Array) -> int | None:
    """The largest ``k`` of the ids ``n_<k>`` (a string array; ASCII digits: ids are ASCII),
    -1 for none; None when one is beyond 64 bits (the caller's loop reads it with Python
    ints)."""
    numbered = column.filter(pc.match_substring_regex(column, r"^n_[0-9]+$"))
    if not len(numbered):
        return -1
    try:
        numbers = pc.cast(pc.utf8_slice_codeunits(numbered, 2), pa.int64())
    except (pa.ArrowInvalid, OverflowError):
        return None
    return int(pc.max(numbers).as_py())


def plain_nodes(raw_nodes: dict[str, Any], limits: Limits) -> PlainNodes | None:
    """The nodes of a store, when every one passes the quick check of `import_pass`'s loop
    and is already in the plain normal form (no ``pinned``, a ``supersededBy`` only when it
    names a node); None for anything else (the loop then decides)."""
    rows = list(raw_nodes.values())
    n = len(rows)
    if not n or set(map(type, rows)) != _DICT:
        return None
    sup = list(map(dict.get, rows, repeat("supersededBy")))
    with_sup = n - sup.count(None)
    # each has the eleven keys (else KeyError); beyond them, exactly its supersededBy
    if sum(map(len, rows)) != len(_KEYS) * n + with_sup:
        return None
    try:
        columns = list(zip(*map(_ROW, rows), strict=True))
    except KeyError:
        return None
    ids, types, levels, titles, fields, parent, children, seq_to, depth, rollup, archived = columns
    keys = list(raw_nodes)
    if list(ids) != keys or set(map(type, ids)) != _STR or not _names_ok(ids):
        return None
    kinds = set(types)
    if set(map(type, kinds)) != _STR or not _names_ok(list(kinds)):
        return None
    if set(map(type, set(levels))) != _STR or "" in set(levels):
        return None
    if set(map(type, titles)) != _STR or set(map(type, parent)) != _STR:
        return None
    if set(map(type, fields)) != _DICT or set(map(type, children)) - _LIST:
        return None
    if not (_counts_ok(seq_to, none=True) and _counts_ok(depth, none=False)):
        return None
    if set(map(type, rollup)) != _BOOL or set(map(type, archived)) != _BOOL:
        return None
    known = raw_nodes.keys()
    parents = dict(filter(itemgetter(1), zip(ids, parent, strict=True)))
    # each node's parent by position (ids are unique and never empty: a root's "" is no id);
    # a parent that is no node: not sure
    id_array = pa.array(ids, pa.string())
    up = pc.index_in(pa.array(parent, pa.string()), value_set=id_array)
    if up.null_count != n - len(parents):
        return None
    parent_at = pc.fill_null(up, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    linked = list(chain.from_iterable(children))
    if linked and (set(map(type, linked)) != _STR or not all(map(known.__contains__, linked))):
        return None
    if with_sup:
        named = [s for s in sup if s is not None]
        if set(map(type, named)) != _STR or "" in named or not set(named) <= known:
            return None
    if parents and not positions_end_in_roots(parent_at):
        return None
    states = list(map(_fields_ok, fields, titles, repeat(limits)))
    float_free = True
    if min(states) < _NATIVE:
        if not min(states):
            return None
        for state, value in zip(states, fields, strict=True):
            if state != _NATIVE:
                if not _json_native(value):
                    return None  # the loop makes its normal form
                float_free = float_free and not _has_float(value)
    top_id = _top_id(id_array)
    if top_id is None:
        return None
    messages = list(map(dict.get, fields, repeat("message")))
    numbers = [m for m in messages if type(m) is int] if set(map(type, messages)) & _INT else []
    top_message = max(numbers) if numbers else -1
    named = dict(zip(_KEYS, columns, strict=True))
    named["supersededBy"] = sup
    return PlainNodes(
        dict(raw_nodes), parents, float_free, top_message, top_id, named, id_array, parent_at
    )


def _has_float(value: Any) -> bool:
    """Whether a float is anywhere in a JSON value (dicts, lists, scalars)."""
    kind = type(value)
    if kind is float:
        return True
    if kind is dict:
        return any(_has_float(v) for v in value.values())
    if kind is list or kind is tuple:
        return any(_has_float(v) for v in value)
    return False
