"""The commits of a deferred block (`MemoryGraph.deferred_commits`: a transcript ingest), one
per write as a live chat makes them: what each reports to ``memgraph_commit``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..engine.model.results import CommitInfo

if TYPE_CHECKING:
    from ..engine.graph.store import Changeset

__all__ = ["PendingCommit", "block_commit_infos"]

#: One write of a block not persisted yet: its changeset, how many ops it applied, its kind.
PendingCommit = tuple["Changeset", int, str]


def block_commit_infos(
    chat_id: str,
    items: Sequence[PendingCommit],
    versions: Sequence[tuple[int, int, bool]],
) -> list[CommitInfo]:
    """A `CommitInfo` per write of the block; `versions`: ``(version, seq, persisted)`` of each
    (the journal rows' with storage, the store's own in memory)."""
    return [
        CommitInfo(
            version=version,
            applied=applied,
            chat_id=chat_id,
            kind=kind,
            seq=seq,
            node_ids=tuple(n.id for n in changeset.nodes),
            edges_added=len(changeset.edges_added),
            edges_removed=len(changeset.edges_removed),
            persisted=persisted,
        )
        for (changeset, applied, kind), (version, seq, persisted) in zip(
            items, versions, strict=True
        )
    ]
