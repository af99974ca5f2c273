"""Node vectors in storage: the vector tables (`nodes`, `nodes_d<dim>`), a chat's vectors as of a
loaded state (snapshot rows, then journal rows), and the vector rows of a delta snapshot.

Vectors of two profiles are never mixed, and a vector never outlives its node's text: a node
changed after its last vector of a profile (by a writer with another or no profile) has none.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.embedding.row_blocks import RowBlocks
from memgraph_plugin.storage.database.tables import (
    nodes_schema,
    nodes_table_name,
    open_or_create,
    vector_table_dims,
)
from memgraph_plugin.storage.format.graph_columns import DeltaBuilder
from memgraph_plugin.storage.journal.journal import JournalEntry
from memgraph_plugin.storage.persistence import ChatState, VectorBlock
from memgraph_plugin.storage.snapshots.snapshots import SnapshotTables
from memgraph_plugin.storage.snapshots.vector_rows import vector_rows


class VectorTables:
    """The vector tables of one database, one per dimension, opened (or made) on first use."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self._open: dict[int, Any] = {}

    def table(self, dim: int) -> Any:
        table = self._open.get(dim)
        if table is None:
            table = open_or_create(self._db, nodes_table_name(dim), nodes_schema(dim))
            self._open[dim] = table
        return table

    def all(self) -> dict[int, Any]:
        """Every vector table in the database, those other processes made included."""
        for dim in vector_table_dims(self._db):
            self.table(dim)
        return dict(self._open)

    def clear(self) -> None:
        self._open.clear()


def _node_id_array(state: ChatState) -> pa.Array:
    if state.nodes is not None:
        return state.nodes["id"].combine_chunks()
    return pa.array(list(state.data["nodes"]), pa.string())


def load_vectors(
    snaps: SnapshotTables,
    head: dict[str, Any] | None,
    entries: list[JournalEntry],
    state: ChatState,
    profile: str | None,
    *,
    read: Callable[[], VectorBlock | None] | None = None,
) -> VectorBlock | None:
    """Vectors of the nodes of `state` made by `profile`: the rows of snapshot `head`, then
    those of the journal `entries` after it. With `profile=None`, the profile of the newest
    stored vectors. Nodes without one are left out (the caller embeds them). `read`: gives
    the snapshot's rows (`SnapshotTables.read_vectors` of `head`) when they are being read
    already."""
    chat_id = state.chat_id
    ckpt_profile = head.get("vec_profile") if head is not None and head.get("vec_dim") else None
    if profile is None:
        newest = [e.vectors.profile for e in entries if e.vectors is not None]
        profile = newest[-1] if newest else ckpt_profile
        if profile is None:
            return None
    stored = None
    if head is not None and ckpt_profile == profile:
        stored = read() if read is not None else snaps.read_vectors(chat_id, head)
    later: dict[str, tuple[np.ndarray, int] | None] = {}  # journal: id -> (matrix, row)
    for entry in entries:
        block = entry.vectors
        rows: dict[str, int] = {}
        if block is not None and block.profile == profile:
            if stored is not None and stored.dim != block.dim:
                return None  # one profile, two dimensions: nothing to trust
            rows = {nid: r for r, nid in enumerate(block.ids)}
        for n in entry.change().nodes:  # changed without a vector of this profile: none
            nid = str(n["id"])
            r = rows.get(nid)
            later[nid] = None if r is None or block is None else (block.matrix, r)
    live_ids = _node_id_array(state)
    if stored is not None and not later and same_ids(stored, live_ids):
        return stored  # one stored row per node, in node order: nothing to drop
    ids: list[str] = []
    parts: list[RowBlocks] = []  # joined without copying the stored rows
    at: list[np.ndarray] = []  # each row's node row in `state` (`VectorBlock.state_rows`)
    if stored is not None:  # vectorised: no Python work per stored row
        sids = stored.id_column
        if sids is None or len(sids) != len(stored.ids):
            sids = pa.array(stored.ids, pa.string())
        where = pc.index_in(sids, value_set=live_ids)  # null: the node is gone
        keep = np.asarray(where.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        if later:
            changed = pc.is_in(sids, value_set=pa.array(list(later), pa.string()))
            keep &= ~np.asarray(changed.to_numpy(zero_copy_only=False), dtype=bool)
        every = bool(keep.all())
        node_rows = np.asarray(where.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
        if every and not later:  # the nodes' vectors, in another order
            return attrs.evolve(stored, state_rows=node_rows)
        ids.extend(stored.ids if every else compress(stored.ids, keep.tolist()))
        parts.append(stored.rows if every else stored.rows.filter(keep))
        at.append(node_rows if every else node_rows[keep])
    fresh = [nid for nid, v in later.items() if v is not None]
    if fresh:
        where = pc.index_in(pa.array(fresh, pa.string()), value_set=live_ids)
        alive = where.is_valid().to_pylist()
        fresh = [nid for nid, ok in zip(fresh, alive, strict=True) if ok]
        if fresh:
            picked = [later[nid] for nid in fresh]
            parts.append(RowBlocks.of(np.stack([p[0][p[1]] for p in picked if p is not None])))
            ids.extend(fresh)
            at.append(np.asarray(where.drop_null().to_numpy(zero_copy_only=False), np.int64))
    if not ids:
        return None
    rows = parts[0] if len(parts) == 1 else parts[0] + parts[1]  # stored, then journal rows
    return VectorBlock(
        profile=profile, ids=tuple(ids), matrix=rows, state_rows=np.concatenate(at)
    )


def same_ids(block: VectorBlock, ids: pa.Array | pa.ChunkedArray) -> bool:
    """Whether `block` holds one row per id of `ids`, in that order (compared as columns when
    the block's ids were read as one)."""
    if len(block.ids) != len(ids):
        return False
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    column = block.id_column
    if column is not None and column.type == ids.type:
        return bool(column.equals(ids))
    return list(block.ids) == ids.to_pylist()


def delta_vector_rows(
    chat_id: str,
    rowset: int,
    dim: int,
    profile: str,
    entries: list[JournalEntry],
    delta: DeltaBuilder,
    nodes: pa.Table,
) -> pa.Table:
    """Vector rows for the nodes a delta touches: each one's vector from its last journal
    change when that carried one of `profile`, else a placeholder (no vector)."""
    last: dict[str, np.ndarray | None] = {}
    for entry in entries:
        block = entry.vectors
        rows = (
            {nid: i for i, nid in enumerate(block.ids)}
            if block is not None and block.profile == profile and block.dim == dim
            else {}
        )
        for node in entry.change().nodes:
            nid = str(node["id"])
            i = rows.get(nid)
            last[nid] = None if i is None or block is None else block.matrix[i]
    ids = list(delta.nodes)
    matrix = np.full((len(ids), dim), np.nan, dtype=np.float32)
    for row, nid in enumerate(ids):
        vec = last.get(nid)
        if vec is not None and delta.nodes[nid][0] is not None:
            matrix[row] = vec
    return vector_rows(chat_id, rowset, dim, profile, ids, matrix, nodes)


def snapshot_vector_rows(
    chat_id: str, rowset: int, vectors: VectorBlock, nodes: pa.Table
) -> tuple[str, int, pa.Table]:
    """The vector rows of a full snapshot: those of `vectors` whose node is in `nodes`, in the
    order `vectors` holds them."""
    dim = vectors.dim
    id_array = vectors.id_column
    if id_array is None or len(id_array) != len(vectors.ids):
        id_array = pa.array(vectors.ids, pa.string())
    at = pc.index_in(id_array, value_set=nodes["id"])  # each vector's node row (null: none)
    keep = np.flatnonzero(np.asarray(at.is_valid().to_numpy(zero_copy_only=False), dtype=bool))
    if keep.shape[0] == len(vectors.ids):
        matrix = vectors.matrix
    else:
        picked = pa.array(keep)
        id_array, at, matrix = id_array.take(picked), at.take(picked), vectors.rows.take(keep)
    table = vector_rows(chat_id, rowset, dim, vectors.profile, id_array, matrix, nodes, at)
    return vectors.profile, dim, table
