"""An import (or fork) stored once, as a full snapshot: the chat stored the way a
long-lived chat is (columns, keyword postings, vectors), so its next
open reads columns instead of replaying the graph from the journal, adopts the keyword
postings instead of tokenizing every node, and takes the vectors as stored.

The snapshot's row sets are written first (`write_import_rows`), then the journal row of the
import's version, which points at them instead of holding the graph (`snapshot_refs.py`): the
commit point, one append. Its head row comes last (`finish_import`); a crash or a failure
before it leaves the import committed, read through its journal row. A crash before the
journal row leaves orphan rows only (the chat as it was), deleted by a later prune.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from memgraph_plugin.storage.maintenance.checkpoints import Checkpoints
from memgraph_plugin.storage.persistence import ChangeRecord, ChatState, VectorBlock

log = logging.getLogger(__name__)

OldVectors = Callable[[str], VectorBlock | None]
"""The vectors of the chat's state before the import, made by a profile (None: none stored)."""


def merged_vectors(
    data: dict[str, Any], change: ChangeRecord, old: OldVectors, profile: str | None = None
) -> VectorBlock | None:
    """One vector per node of `data` where one is known: the change's (its nodes were just
    embedded) and, for nodes the import left as they were, the stored ones of the same
    profile (the change's, else `profile`: the embedder's, when the change has no vectors
    because it changed no node or its embedding failed). None when neither is known."""
    fresh = change.vectors
    if fresh is not None and not fresh.ids:
        fresh = None
    name = fresh.profile if fresh is not None else profile
    if name is None:
        return None
    wanted = data.get("nodes") or {}
    have = set(fresh.ids) if fresh is not None else set()
    missing = [nid for nid in wanted if nid not in have]
    if not missing:
        return fresh
    before = old(name)
    if before is None or not before.ids or (fresh is not None and before.dim != fresh.dim):
        return fresh  # the others are embedded by the first search that finds them missing
    rows = {nid: r for r, nid in enumerate(before.ids)}
    take = [(nid, rows[nid]) for nid in missing if nid in rows]
    if not take:
        return fresh
    kept = np.asarray(before.rows.take(np.asarray([r for _, r in take])), dtype=np.float32)
    ids = tuple(nid for nid, _ in take)
    if fresh is None:
        return VectorBlock(name, ids, kept)
    return VectorBlock(name, (*fresh.ids, *ids), np.concatenate([fresh.matrix, kept]))


def write_import_rows(
    checkpoints: Checkpoints,
    chat_id: str,
    data: dict[str, Any],
    version: int,
    change: ChangeRecord,
    old: OldVectors,
    profile: str | None = None,
    embed: Callable[[ChangeRecord], ChangeRecord] | None = None,
) -> tuple[dict[str, Any], ChangeRecord]:
    """Write the row sets of a full snapshot of `data` as the chat's version `version` (the
    import's, once committed), with every node's vector known (`merged_vectors`; `profile`:
    the embedder's); returns the head they need and `change` with its nodes' vectors. Raises
    when they cannot be written (nothing committed then). `embed`: what gives `change` its
    nodes' vectors, called once the node and edge rows are being written (LanceDB writes them
    meanwhile: `Checkpoints.write_full_rows`)."""
    state = ChatState(
        chat_id=chat_id,
        version=version,
        data=data,
        checkpoint_version=version,
        seq=int(change.seq_counter),
    )
    embedded = [change]

    def vectors() -> VectorBlock | None:
        if embed is not None:
            embedded.append(embed(change))
        return merged_vectors(data, embedded[-1], old, profile)

    return checkpoints.write_full_rows(chat_id, state, vectors), embedded[-1]


def finish_import(checkpoints: Checkpoints, chat_id: str, head: dict[str, Any]) -> bool:
    """Write the head row of a committed import's snapshot (and prune). False (and one
    warning) when it failed: the import's journal row still points at the rows."""
    try:
        checkpoints.finish(chat_id, head)
    except Exception:
        log.warning(
            "chat %r: the head row of its import's snapshot (version %d) was not written; the "
            "chat loads it through the import's journal row",
            chat_id,
            int(head["version"]),
            exc_info=True,
        )
        return False
    return True
