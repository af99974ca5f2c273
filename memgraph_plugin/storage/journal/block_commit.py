"""A block of changesets persisted as consecutive journal rows in one append: a transcript ingest
keeps one version per message (so a rollback to "after message N" lands on message N, as in a
live chat) while it pays one journal append and one embedding call per block.

Only the final state of a node is embedded, on the row of its last change in the block; its
earlier rows in the block carry no vector for it (a state loaded at such a row embeds the node
then, as for any node stored without one: `vectors.load_vectors`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from memgraph_plugin.embedding.profile import VectorBlock
from memgraph_plugin.embedding.text import node_id
from memgraph_plugin.engine.graph.store_transactions import Changeset

__all__ = ["BlockItem", "embed_block"]


@attrs.frozen
class BlockItem:
    """One commit of a deferred block: what it changed, how many ops it applied, its kind."""

    changeset: Changeset
    applied: int
    kind: str = "write"


def embed_block(
    changesets: Sequence[Changeset], embed: Callable[[list[Any]], VectorBlock | None]
) -> list[VectorBlock | None] | None:
    """Per changeset, the vectors of the nodes whose last change in the block it holds, from ONE
    `embed` call over those final states; None when `embed` gave nothing (no profile, or it
    failed: the rows commit without vectors)."""
    last: dict[str, int] = {}
    for position, changeset in enumerate(changesets):
        for node in changeset.nodes:
            last[node_id(node)] = position
    finals = [
        node
        for position, changeset in enumerate(changesets)
        for node in changeset.nodes
        if last[node_id(node)] == position
    ]
    block = embed(finals) if finals else None
    if block is None:
        return None if finals else [None] * len(changesets)
    row_of = {nid: row for row, nid in enumerate(block.ids)}
    out: list[VectorBlock | None] = []
    for position, changeset in enumerate(changesets):
        ids = [
            nid
            for nid in (node_id(n) for n in changeset.nodes)
            if last[nid] == position and nid in row_of
        ]
        if not ids:
            out.append(None)
            continue
        rows = [row_of[nid] for nid in ids]
        out.append(VectorBlock(profile=block.profile, ids=tuple(ids), matrix=block.matrix[rows]))
    return out
