"""Journal rows that point at a snapshot instead of holding their change.

An import (or a fork) replaces a chat's whole graph. Its state is written once, as a full
snapshot's row sets (node, edge, keyword, vector rows; `import_snapshot.py`), and then the
journal gets one small row of that version whose payload is
``{"snapshot": <head>, "counts": [put, removed, added, unlinked], "nodeIds", "nodeSeq",
"seqCounter"}`` (``nodeIds``: the nodes it put or removed, which `history` names as a plain row
does): the commit point, one append as before. The snapshot's `snapshots` head row is written after
it (derived, like any head), so a crash in between leaves the import committed and its state
found through the journal row (`rebased`). A crash before the journal row leaves row sets no
head or journal row names: orphans, deleted by a prune after `ORPHAN_GRACE_SECONDS`.

Readers that replay the journal (a load, a snapshot, the vectors) start from the newest such
row among the entries they read, as from a snapshot head (`rebased`); a prune keeps the row sets
journal rows still point at (`pinned_rowsets`), so history, rollback and export across an import
keep working after its head was pruned.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memgraph_plugin.storage.persistence import ChangeRecord, SnapshotRef

#: how a pointing row's payload begins (`change_payload` writes the key first)
REF_PREFIX = '{"snapshot":'
#: the head fields a pointing row keeps (the `snapshots` row's, less chat, version and time)
HEAD_FIELDS = (
    "seq",
    "node_count",
    "edge_count",
    "delta_rows",
    "node_seq",
    "seq_counter",
    "chain",
    "vec_profile",
    "vec_dim",
)


def ref_payload(change: ChangeRecord, ref: SnapshotRef) -> dict[str, Any]:
    """The journal payload of `change` stored as a pointer to its snapshot `ref`."""
    payload: dict[str, Any] = {
        "snapshot": {k: ref.head.get(k) for k in HEAD_FIELDS},
        "counts": list(change_sizes(change)),
        "nodeIds": [str(n["id"]) for n in change.nodes] + [str(i) for i in change.nodes_removed],
        "nodeSeq": change.node_seq,
        "seqCounter": change.seq_counter,
    }
    if change.note:
        payload["note"] = change.note
    return payload


def change_sizes(change: ChangeRecord) -> tuple[int, int, int, int]:
    """Nodes put, nodes removed, edges added, edges removed by `change` (read back from a
    pointing row: the counts it kept)."""
    items = change.nodes or change.nodes_removed or change.edges_added or change.edges_removed
    if change.snapshot is not None and not items:
        return change.snapshot.counts
    return (
        len(change.nodes),
        len(change.nodes_removed),
        len(change.edges_added),
        len(change.edges_removed),
    )


def ref_change(raw: Mapping[str, Any], *, applied: int, kind: str) -> ChangeRecord:
    """The change a pointing row's parsed payload stands for: no nodes or edges (they are in
    the snapshot), its counters, note and `SnapshotRef`."""
    counts = tuple(int(c) for c in raw.get("counts", (0, 0, 0, 0)))
    ids = tuple(str(i) for i in raw.get("nodeIds", ()))  # rows written before it: none
    return ChangeRecord(
        node_seq=int(raw.get("nodeSeq", 0)),
        seq_counter=int(raw.get("seqCounter", 0)),
        applied=applied,
        kind=kind,
        note=str(raw.get("note", "") or ""),
        snapshot=SnapshotRef(dict(raw["snapshot"]), counts, ids),  # type: ignore[arg-type]
    )


def parsed_ref(payload: Any) -> SnapshotRef | None:
    """The `SnapshotRef` of a journal payload that is a pointer (None: a plain change)."""
    if not isinstance(payload, str) or not payload.startswith(REF_PREFIX):
        return None
    return ref_change(json.loads(payload), applied=0, kind="import").snapshot


def head_of(ref: SnapshotRef, version: int, created_at: float) -> dict[str, Any]:
    """A snapshot head (as `SnapshotTables.head` gives it) for the pointing row of `version`."""
    return {**ref.head, "version": int(version), "created_at": float(created_at)}


def rebased(head: dict[str, Any] | None, entries: Sequence[Any]) -> tuple[Any, list[Any]]:
    """`(head, entries)` to read a chat from: when one of the journal `entries` (after `head`)
    points at a snapshot, the newest such one's snapshot and the entries after it; else as
    given."""
    for i in range(len(entries) - 1, -1, -1):
        entry = entries[i]
        if entry.snapshot is not None:
            return head_of(entry.snapshot, entry.version, entry.created_at), list(entries[i + 1 :])
    return head, list(entries)


def pinned_rowsets(journal: Any, chat_id: str) -> set[int]:
    """The row set ids the chat's journal rows point at (a prune keeps them)."""
    from memgraph_plugin.storage.database.escape import where_eq

    rows = journal.rows(
        journal.table,
        f"{where_eq(chat_id=chat_id)} AND payload LIKE '{REF_PREFIX}%'",
        ["payload"],
    )
    out: set[int] = set()
    for row in rows:
        ref = parsed_ref(row["payload"])
        if ref is not None:
            out.update(int(v) for v in ref.head.get("chain") or ())
    return out
