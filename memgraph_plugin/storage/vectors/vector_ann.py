"""The ANN path: a LanceDB IVF_PQ index over checkpointed node vectors, for very large chats.

Exact numpy search over the in-memory matrix stays the default (about 11 ms at 100k x 384 on
our machine, while IVF_PQ costs a minute to build at that size). Past `threshold` rows the
session asks LanceDB for candidates among the rows of the chat's latest checkpoint, searches the
nodes changed since that checkpoint exactly, and re-scores every candidate with the exact cosine
from the in-memory matrix, so scores stay exact and only recall can differ.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.storage.database.escape import where_eq

log = logging.getLogger(__name__)

MIN_TRAIN_ROWS = 256  # IVF_PQ needs this many rows to train


class LanceAnn:
    """Candidates from a LanceDB vector index on one `nodes` table (all chats share it)."""

    def __init__(self, table: Any, dim: int, *, threshold: int = 250_000) -> None:
        self.table = table
        self.dim = dim
        self.threshold = threshold
        self._lock = threading.Lock()
        self._indexed_rows = 0

    def _vector_index(self) -> Any | None:
        for ix in self.table.list_indices():
            if "vector" in list(getattr(ix, "columns", [])):
                return ix
        return None

    def has_index(self) -> bool:
        return self._vector_index() is not None

    def ready(self) -> bool:
        """Whether the index exists and covers at least half of the rows (else: (re)build it)."""
        found = self._vector_index()
        if found is None:
            return False
        if not self._indexed_rows:  # built by another process: take its size from LanceDB
            self._indexed_rows = int(getattr(found, "num_indexed_rows", 0) or 0)
        return self.table.count_rows() < 2 * max(self._indexed_rows, 1)

    def ensure_index(self) -> bool:
        """Build (or rebuild after strong growth) the IVF_PQ index; False below 256 rows."""
        with self._lock:
            rows = self.table.count_rows()
            if rows < MIN_TRAIN_ROWS:
                return False
            if self.ready():
                return True
            partitions = max(1, min(256, int(rows**0.5) // 2))
            sub_vectors = next(s for s in (48, 32, 24, 16, 12, 8, 6, 4, 2, 1) if self.dim % s == 0)
            self.table.create_index(
                "vector",
                config=_ivf_pq()(
                    distance_type="cosine",
                    num_partitions=partitions,
                    num_sub_vectors=sub_vectors,
                ),
                replace=True,
            )
            self._indexed_rows = rows
            return True

    def candidates(
        self,
        chat_id: str,
        ckpt_version: int | Sequence[int],
        query: np.ndarray,
        limit: int,
        profile: str | None = None,
    ) -> list[str]:
        """Ids of the nearest rows of one chat's checkpoint (made by `profile` when given)."""
        keys: dict[str, str] = {"chat_id": chat_id}
        if profile is not None:
            keys["profile"] = profile
        versions = (ckpt_version,) if isinstance(ckpt_version, int) else tuple(ckpt_version)
        listed = ", ".join(str(int(v)) for v in versions)
        where = f"{where_eq(**keys)} AND ckpt_version IN ({listed})"
        arrow = (
            self.table.search(np.asarray(query, dtype=np.float32), vector_column_name="vector")
            .metric("cosine")
            .where(where, prefilter=True)
            .nprobes(20)
            .refine_factor(4)
            .select(["id"])
            .limit(limit)
            .to_arrow()
        )
        return arrow.column("id").to_pylist()


def hybrid_search(
    index: VectorIndex,
    ann: LanceAnn,
    *,
    chat_id: str,
    ckpt_version: int | Sequence[int],
    dirty: Collection[str],
    query: np.ndarray,
    k: int,
    types: Collection[str] | None = None,
    profile: str | None = None,
) -> list[tuple[str, float]]:
    """ANN candidates from the checkpoint + exact search over `dirty` ids, exact scores.

    `dirty`: every id whose vector is not in the checkpoint's rows of `profile` (changed since,
    or embedded afresh); those are only ever found by the exact part.
    """
    dirty = set(dirty)
    found: dict[str, float] = dict(index.search(query, k=k, types=types, only=dirty))
    fetch = max(4 * k, k + 32)
    for node_id in ann.candidates(chat_id, ckpt_version, query, fetch, profile):
        if node_id in dirty or node_id in found or not index.accepts(node_id, types):
            continue
        found[node_id] = index.score(node_id, query)
    ranked = sorted(found.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:k]


def _ivf_pq() -> Any:
    """LanceDB's IVF_PQ index config class (LanceDB imported on first use: `table_reads.py`)."""
    from lancedb.index import IvfPq

    return IvfPq
