"""The snapshot an import (or fork) writes right after its journal row: the chat stored the way a
long-lived chat is (columns, keyword postings, vectors with their coarse lists), so its next
open reads columns instead of replaying one giant journal row, adopts the keyword postings
instead of tokenizing every node, and takes the vectors as stored (issue 31).

The journal row stays the commit point (one append: all or nothing); the snapshot is derived
data written after it with the usual crash-safe order (rows first, head last). A crash in
between leaves the chat readable from its journal, and the next maintenance pass snapshots it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from memgraph_plugin.storage.maintenance.checkpoints import Checkpoints
from memgraph_plugin.storage.persistence import ChangeRecord, ChatState, CommitRecord, VectorBlock

log = logging.getLogger(__name__)

OldVectors = Callable[[str], VectorBlock | None]
"""The vectors of the chat's state before the import, made by a profile (None: none stored)."""


def merged_vectors(
    data: dict[str, Any], change: ChangeRecord, old: OldVectors
) -> VectorBlock | None:
    """One vector per node of `data` where one is known: the change's (its nodes were just
    embedded) and, for nodes the import left as they were, the stored ones of the same
    profile. None when the change carries no vectors (no profile, or embedding failed)."""
    fresh = change.vectors
    if fresh is None or not fresh.ids:
        return None
    wanted = data.get("nodes") or {}
    have = set(fresh.ids)
    missing = [nid for nid in wanted if nid not in have]
    if not missing:
        return fresh
    before = old(fresh.profile)
    if before is None or before.dim != fresh.dim or not before.ids:
        return fresh  # the others are embedded by the first search that finds them missing
    rows = {nid: r for r, nid in enumerate(before.ids)}
    take = [(nid, rows[nid]) for nid in missing if nid in rows]
    if not take:
        return fresh
    kept = before.rows.take(np.asarray([r for _, r in take], dtype=np.int64))
    matrix = np.concatenate([fresh.matrix, np.asarray(kept, dtype=np.float32)])
    return VectorBlock(fresh.profile, (*fresh.ids, *(nid for nid, _ in take)), matrix)


def snapshot_replacement(
    checkpoints: Checkpoints,
    chat_id: str,
    data: dict[str, Any],
    record: CommitRecord,
    change: ChangeRecord,
    old: OldVectors,
) -> bool:
    """Write a full snapshot of `data` at the import's version `record.version`. False (and
    one warning) when it failed: the chat then loads from its journal until maintenance
    snapshots it."""
    state = ChatState(
        chat_id=chat_id,
        version=record.version,
        data=data,
        checkpoint_version=record.version,
        seq=record.seq,
    )
    try:
        checkpoints.write_full(chat_id, state, merged_vectors(data, change, old))
    except Exception:
        log.warning(
            "chat %r: the snapshot of its import (version %d) was not written; the chat "
            "loads from its journal until the next maintenance pass snapshots it",
            chat_id,
            record.version,
            exc_info=True,
        )
        return False
    return True
