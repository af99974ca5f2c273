"""The change between two states of a chat, found column by column: a rollback through storage.

`change_codec.diff_states` compares two store dicts, so a rollback through storage made a dict
per node and edge of both states: about a second at 100k nodes, minutes at 1M. `state_diff`
compares their state tables a column at a time (pyarrow). A row whose every column equals the
other state's row of its id (or edge key) is the same. The few that differ are made into dicts
on both sides and compared as `diff_states` compares them, since a text column can differ
where the value does not (a field's key order, a float's spelling): the change is
`diff_states`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.storage.format.graph_columns import KEY_SEP, edge_dicts, node_dicts, row_keys
from memgraph_plugin.storage.persistence import ChangeRecord, ChatState

__all__ = ["state_diff"]

_FLAGS = ("removed", "moved")  # (a state table's rows are neither)


def state_diff(current: ChatState, target: ChatState, *, kind: str) -> ChangeRecord:
    """The change that turns `current` into `target` (`diff_states` of their dicts)."""
    cur_nodes, cur_edges = current.tables()
    tgt_nodes, tgt_edges = target.tables()
    changed, removed = _compared(tgt_nodes, cur_nodes)
    added, gone = _compared(tgt_edges, cur_edges)
    nodes = tuple(node_dicts(_kept(changed, cur_nodes, node_dicts)).values())
    edges = tuple(edge_dicts(_kept(added, cur_edges, edge_dicts)))
    node_seq, seq_counter = target.counters
    gone_keys = tuple(
        zip(gone["src"].to_pylist(), gone["type"].to_pylist(), gone["dst"].to_pylist(), strict=True)
    )
    removed_ids = tuple(removed["id"].to_pylist())
    return ChangeRecord(
        nodes=nodes,
        nodes_removed=removed_ids,
        edges_added=edges,
        edges_removed=gone_keys,
        node_seq=node_seq,
        seq_counter=seq_counter,
        applied=len(nodes) + len(removed_ids) + len(edges) + len(gone_keys),
        kind=kind,
    )


def _compared(target: pa.Table, current: pa.Table) -> tuple[pa.Table, pa.Table]:
    """The target's rows that are new or differ from the current row of their key in some
    column (with a ``_at`` column: that row's position in `current`, -1 for none), and the
    current rows whose key the target lacks."""
    tk, ck = row_keys(target), row_keys(current)
    at = pc.index_in(tk, value_set=ck)
    found = pc.is_valid(at).to_numpy(zero_copy_only=False)
    pos = pc.fill_null(at, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    same = np.zeros(target.num_rows, dtype=bool)
    rows = np.flatnonzero(found)
    if rows.shape[0]:
        names = [n for n in target.column_names if n in current.column_names and n not in _FLAGS]
        same[rows] = _same_rows(target.take(rows), current.take(pos[rows]), names)
    differ = np.flatnonzero(~same)
    out = target.take(differ).append_column("_at", pa.array(pos[differ], pa.int64()))
    lacking = pc.invert(pc.is_in(ck, value_set=tk))
    return out, current.filter(lacking)


def _same_rows(a: pa.Table, b: pa.Table, names: list[str]) -> np.ndarray:
    """Per row, whether `a` and `b` hold the same values in every column of `names` (two nulls
    are the same; a list column compared as its items joined)."""
    same = np.ones(a.num_rows, dtype=bool)
    for name in names:
        x, y = _comparable(a[name]), _comparable(b[name])
        if x.type != y.type:
            y = y.cast(x.type)
        equal = pc.fill_null(pc.equal(x, y), False)
        both_null = pc.and_(pc.is_null(x), pc.is_null(y))
        same &= pc.or_(equal, both_null).to_numpy(zero_copy_only=False).astype(bool)
    return same


def _comparable(column: Any) -> Any:
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        return pc.binary_join(column, KEY_SEP)
    return column


def _kept(rows: pa.Table, current: pa.Table, to_dicts: Any) -> pa.Table:
    """Those of `rows` (`_compared`'s) whose value differs from the current one as `to_dicts`
    makes them (`node_dicts` or `edge_dicts`; new rows: all), in their order."""
    at = rows["_at"].to_numpy(zero_copy_only=False)
    rows = rows.drop_columns(["_at"])
    both = np.flatnonzero(at >= 0)
    keep = at < 0
    if both.shape[0]:
        mine, theirs = to_dicts(rows.take(both)), to_dicts(current.take(at[both]))
        if isinstance(mine, dict):  # (nodes: id -> dict)
            mine, theirs = list(mine.values()), list(theirs.values())
        keep[both] = [a != b for a, b in zip(mine, theirs, strict=True)]
    return rows.take(pa.array(np.flatnonzero(keep), pa.int64()))
