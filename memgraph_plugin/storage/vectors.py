"""Node vectors in storage: the vector tables (`nodes`, `nodes_d<dim>`), a chat's vectors as of a
loaded state (snapshot rows, then journal rows), and the vector rows of a delta snapshot.

Vectors of two profiles are never mixed, and a vector never outlives its node's text: a node
changed after its last vector of a profile (by a writer with another or no profile) has none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.embedding.row_blocks import RowBlocks
from memgraph_plugin.storage.columns import DeltaBuilder
from memgraph_plugin.storage.journal import JournalEntry
from memgraph_plugin.storage.persistence import ChatState, VectorBlock
from memgraph_plugin.storage.snapshots import SnapshotTables, vector_rows
from memgraph_plugin.storage.tables import (
    nodes_schema,
    nodes_table_name,
    open_or_create,
    vector_table_dims,
)


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
    if stored is not None:  # vectorised: no Python work per stored row
        sids = pa.array(stored.ids, pa.string())
        keep = pc.and_(
            pc.is_in(sids, value_set=live_ids),
            pc.invert(pc.is_in(sids, value_set=pa.array(list(later), pa.string()))),
        ).to_numpy(zero_copy_only=False)
        keep = np.asarray(keep, dtype=bool)
        ids.extend(pc.filter(sids, pa.array(keep)).to_pylist())
        parts.append(stored.rows.filter(keep) if not keep.all() else stored.rows)
    fresh = [nid for nid, v in later.items() if v is not None]
    if fresh:
        alive = pc.is_in(pa.array(fresh, pa.string()), value_set=live_ids).to_pylist()
        fresh = [nid for nid, ok in zip(fresh, alive, strict=True) if ok]
        if fresh:
            picked = [later[nid] for nid in fresh]
            parts.append(RowBlocks.of(np.stack([p[0][p[1]] for p in picked if p is not None])))
            ids.extend(fresh)
    if not ids:
        return None
    rows = parts[0] if len(parts) == 1 else parts[0] + parts[1]  # stored, then journal rows
    return VectorBlock(profile=profile, ids=tuple(ids), matrix=rows)


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
    """The vector rows of a full snapshot: those of `vectors` whose node is in `nodes`."""
    dim = vectors.dim
    present = pc.is_in(pa.array(vectors.ids, pa.string()), value_set=nodes["id"])
    keep = np.asarray(present.to_numpy(zero_copy_only=False), dtype=bool)
    ids = [nid for nid, ok in zip(vectors.ids, keep, strict=True) if ok]
    matrix = vectors.matrix[keep] if not keep.all() else vectors.matrix
    return vectors.profile, dim, vector_rows(chat_id, rowset, dim, vectors.profile, ids, matrix,
                                             nodes)
