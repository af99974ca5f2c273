"""Coarse (IVF) lists of a snapshot's vector rows, made by the snapshot writer, so that an open
searches a large chat through lists at once instead of exactly until a build on a thread ends.

A full snapshot with at least `vector_coarse_threshold` vector rows gets centroids
(`embedding/coarse.py`: k-means on a sample) and each row its nearest one; its rows are written
in list order with their list in the `coarse_list` column and the centroids in `snap_coarse`.
An open then adopts the rows read as the index's base *and* its list-ordered rows (no copy, no
k-means). A full snapshot reuses the previous chain's centroids and the lists of the rows it
read with them while the row count stays within a factor of 1.5 of what they were trained for
and at least half of the rows keep theirs; only the other rows are assigned (one matrix product
each). A delta assigns its changed rows to its chain's centroids. A chain whose rows do not all
have a list (written before this layout, or below the threshold) opens as before: exact
searches until the index builds its lists on a thread.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pyarrow as pa

from memgraph_plugin.embedding.blas_threads import one_blas_thread
from memgraph_plugin.embedding.coarse import assign, assign_all, list_count, train
from memgraph_plugin.embedding.row_blocks import RowBlocks
from memgraph_plugin.storage.tables import LIST_COLUMN, SNAP_COARSE_SCHEMA

log = logging.getLogger(__name__)

REUSE_FACTOR = 1.5  # centroids are reused while their count is within this factor of the target
SEED = 0  # k-means seed: one snapshot's lists do not depend on chance


def full_lists(
    rows: RowBlocks,
    prior: np.ndarray | None,
    prior_centroids: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(centroids, list of each row) for a full snapshot's vector `rows`: the `prior` lists
    (-1: none) with their centroids when they still fit (see the module doc), else new ones.
    Runs beside other work (the import's keyword rows): its products on this thread only."""
    with one_blas_thread():
        return _full_lists(rows, prior, prior_centroids)


def _full_lists(
    rows: RowBlocks,
    prior: np.ndarray | None,
    prior_centroids: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    n, dim = rows.shape
    target = list_count(n)
    if prior is not None and prior_centroids is not None and prior.shape[0] == n:
        count = prior_centroids.shape[0]
        kept = np.flatnonzero(prior >= 0)
        if (
            prior_centroids.ndim == 2
            and prior_centroids.shape[1] == dim
            and target / REUSE_FACTOR <= count <= target * REUSE_FACTOR
            and 2 * kept.shape[0] >= n
            and (not kept.shape[0] or int(prior.max()) < count)
        ):
            lists = prior.astype(np.int32, copy=True)
            todo = np.flatnonzero(lists < 0)
            if todo.shape[0]:
                lists[todo] = assign(prior_centroids, rows.take, todo)
            return np.ascontiguousarray(prior_centroids, dtype=np.float32), lists
    centroids = train(rows.take, np.ones(n, dtype=bool), seed=SEED)
    return centroids, assign_all(centroids, rows)


def delta_lists(centroids: np.ndarray, matrix: np.ndarray, blank: np.ndarray) -> np.ndarray:
    """The list of each row of a delta's vector `matrix` among its chain's `centroids`
    (-1 for `blank` rows: placeholders without a vector)."""
    lists = np.full(matrix.shape[0], -1, dtype=np.int32)
    rows = np.flatnonzero(~blank)
    if rows.shape[0] and centroids.shape[1] == matrix.shape[1]:
        lists[rows] = assign(centroids, lambda r: np.take(matrix, r, axis=0), rows)
    return lists


def list_array(lists: np.ndarray | None, n: int) -> pa.Array:
    """The `coarse_list` column of `n` rows (null where a row has no list)."""
    if lists is None:
        return pa.nulls(n, pa.int32())
    lists = np.asarray(lists, dtype=np.int32)
    return pa.array(lists, pa.int32(), mask=lists < 0)


def lists_of(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A read `coarse_list` column as int32 (-1 for null)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return np.asarray(column.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int32)


def centroid_row(chat_id: str, rowset: int, centroids: np.ndarray) -> pa.Table:
    """The `snap_coarse` row of a full row set's centroids."""
    centroids = np.ascontiguousarray(centroids, dtype=np.float32)
    return pa.Table.from_pylist(
        [
            {
                "chat_id": chat_id,
                "snap": int(rowset),
                "dim": int(centroids.shape[1]),
                "count": int(centroids.shape[0]),
                "centroids": centroids.tobytes(),
            }
        ],
        schema=SNAP_COARSE_SCHEMA,
    )


def centroids_from(rows: pa.Table) -> np.ndarray | None:
    """The centroids of a `snap_coarse` read (its first row; None: no row)."""
    if not rows.num_rows:
        return None
    row = rows.slice(0, 1).to_pylist()[0]
    count, dim = int(row["count"]), int(row["dim"])
    matrix = np.frombuffer(row["centroids"], dtype=np.float32)
    if matrix.shape[0] != count * dim or not count:
        return None
    return matrix.reshape(count, dim)


def ensure_list_column(table: Any) -> bool:
    """Whether the vector `table` has the `coarse_list` column, adding it (all null, a metadata
    change) to a table made before it; False when that failed (logged: rows go without lists)."""
    for attempt in range(4):
        if LIST_COLUMN in table.schema.names:
            return True
        try:
            table.add_columns(pa.field(LIST_COLUMN, pa.int32()))
            return True
        except Exception as exc:  # another process added it meanwhile, or a commit conflict
            if attempt == 3:
                log.warning("cannot add column %r to vector table: %s", LIST_COLUMN, exc)
    return LIST_COLUMN in table.schema.names
