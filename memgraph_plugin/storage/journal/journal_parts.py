"""Journal rows of bounded size: a large change (an import, a fork, a rollback far back) is stored
as several rows of one version, written by one append (so still all or nothing), each holding at
most `PART_ITEMS` nodes, removals and edges with their nodes' vectors (without it an imported
100k-node graph would be one row of about 100 MB of JSON and vectors).

The rows of a version are told apart by the stable row id LanceDB gives them in commit order:
the winner of a version is the writer of its smallest row id (`journal.py`), and its parts are
that writer's rows of the version, in row id order. Readers merge them back into one change.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import numpy as np

from memgraph_plugin.storage.persistence import ChangeRecord, VectorBlock

#: At most this many nodes + removed nodes + added + removed edges in one journal row.
PART_ITEMS = 4096


def split_change(change: ChangeRecord, limit: int | None = None) -> list[ChangeRecord]:
    """`change` as parts of at most `limit` (default `PART_ITEMS`) items each (itself when it
    fits). Every part keeps the change's counters, kind, `applied` and note; the vectors go
    with their nodes."""
    limit = PART_ITEMS if limit is None else max(1, int(limit))
    items = (
        len(change.nodes)
        + len(change.nodes_removed)
        + len(change.edges_added)
        + len(change.edges_removed)
    )
    if items <= limit:
        return [change]
    chunks: list[dict[str, list[Any]]] = []
    current: dict[str, list[Any]] = {}
    size = 0
    for name in ("nodes", "nodes_removed", "edges_added", "edges_removed"):
        for item in getattr(change, name):
            if size == limit:
                chunks.append(current)
                current, size = {}, 0
            current.setdefault(name, []).append(item)
            size += 1
    chunks.append(current)
    rows = _vector_rows(change.vectors)
    parts = []
    for chunk in chunks:
        nodes = tuple(chunk.get("nodes", ()))
        parts.append(
            attrs.evolve(
                change,
                nodes=nodes,
                nodes_removed=tuple(chunk.get("nodes_removed", ())),
                edges_added=tuple(chunk.get("edges_added", ())),
                edges_removed=tuple(chunk.get("edges_removed", ())),
                vectors=_vectors_of(change.vectors, rows, nodes),
            )
        )
    return parts


def _vector_rows(block: VectorBlock | None) -> dict[str, int]:
    return {} if block is None else {nid: r for r, nid in enumerate(block.ids)}


def _vectors_of(
    block: VectorBlock | None, rows: dict[str, int], nodes: Iterable[Any]
) -> VectorBlock | None:
    """The rows of `block` for `nodes` (None: no block, or none of them has a vector)."""
    if block is None:
        return None
    ids = [str(n["id"]) for n in nodes if str(n["id"]) in rows]
    if not ids:
        return None
    matrix = block.rows.take(np.asarray([rows[i] for i in ids], dtype=np.int64))
    return VectorBlock(block.profile, tuple(ids), matrix)


def merge_changes(parts: list[ChangeRecord]) -> ChangeRecord:
    """The change the parts of one journal version make up (the first part's counters)."""
    if len(parts) == 1:
        return parts[0]
    blocks = [p.vectors for p in parts if p.vectors is not None and p.vectors.ids]
    vectors = None
    if blocks and all(b.profile == blocks[0].profile and b.dim == blocks[0].dim for b in blocks):
        vectors = VectorBlock(
            blocks[0].profile,
            tuple(i for b in blocks for i in b.ids),
            np.concatenate([b.matrix for b in blocks]),
        )
    return attrs.evolve(
        parts[0],
        nodes=tuple(n for p in parts for n in p.nodes),
        nodes_removed=tuple(n for p in parts for n in p.nodes_removed),
        edges_added=tuple(e for p in parts for e in p.edges_added),
        edges_removed=tuple(e for p in parts for e in p.edges_removed),
        vectors=vectors,
    )


def group_versions(rows: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Rows (with ``version``, ``writer`` and ``_rowid``) -> the winning row of each version
    (the smallest row id), with its writer's other rows of that version under ``_parts`` (in
    row id order) when it has any."""
    first: dict[int, dict[str, Any]] = {}
    for row in rows:
        v = int(row["version"])
        if v not in first or row["_rowid"] < first[v]["_rowid"]:
            first[v] = row
    for row in rows:
        win = first[int(row["version"])]
        if row is not win and row.get("writer") == win.get("writer"):
            win.setdefault("_parts", []).append(row)
    for win in first.values():
        if "_parts" in win:
            win["_parts"].sort(key=lambda r: r["_rowid"])
    return first


def row_parts(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows one version's change is stored in (the winner first)."""
    return [row, *row.get("_parts", ())]
