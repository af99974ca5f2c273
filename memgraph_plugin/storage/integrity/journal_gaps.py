"""Closing a gap in a chat's journal (`repair.py`'s step 2): each lost version gets a placeholder
commit (an empty change of kind ``repair``), and the readable commits after the gap are kept as
long as their changes still apply to the state the kept commits give.

A commit still applies when every node and edge it needs is in that state: the nodes it removes,
the edges it removes, and both ends of each edge it adds (nodes it puts are whole rows, so a put
needs nothing). The first commit that needs a node or edge the state lacks (made by a lost
commit, say) is built on what was lost: it and every commit after it are removed. A commit that
points at a full snapshot (an import, a fork) needs nothing either: its state is that snapshot.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import attrs
import pyarrow as pa

from memgraph_plugin.storage.database.escape import where_eq
from memgraph_plugin.storage.database.tables import COMMITS_SCHEMA, SNAPSHOTS, table_names
from memgraph_plugin.storage.format.json_shapes import edge_key
from memgraph_plugin.storage.integrity.integrity import ChatDamage, ranges
from memgraph_plugin.storage.journal.change_codec import change_payload
from memgraph_plugin.storage.journal.journal_entry import JournalEntry
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.persistence import ChangeRecord, ChatState

#: the provenance `history` shows for a placeholder commit
PLACEHOLDER_NOTE = "lost in a damaged file; an empty commit put in its place by repair"

_COLUMNS = ["seq", "applied", "kind", "created_at", "payload", "vec_profile", "vec_ids", "vectors"]


@attrs.frozen
class GapRepair:
    """What closing one chat's gap did."""

    chat_id: str
    placeholders: tuple[int, ...]  # lost versions now empty commits
    kept: tuple[int, ...]  # readable commits after the first lost one, kept
    removed_from: int | None  # the first removed commit (every later one went with it)
    removed: int  # how many readable commits were removed
    why: str  # what the first removed commit needed that the state lacks

    def describe(self) -> str:
        said = (
            f"chat {self.chat_id!r}: commit(s) {ranges(self.placeholders)} lost, each now an "
            "empty commit marked 'repair' (their changes are gone)"
        )
        if self.kept:
            said += f"; kept the later commit(s) {ranges(self.kept)}"
        if self.removed_from is not None:
            said += (
                f"; removed {self.removed} commit(s) from version {self.removed_from} on "
                f"(version {self.removed_from} {self.why})"
            )
        return said


class _Graph:
    """The node ids and edge keys of a chat's state: what deciding whether a change applies
    needs."""

    def __init__(self, state: ChatState) -> None:
        data = state.data
        self.nodes = set(data["nodes"])
        self.edges = {edge_key(e) for e in data["edges"]}
        self.counters = state.counters
        self.seq = state.seq

    def missing(self, change: ChangeRecord) -> str | None:
        """What `change` needs that this graph lacks (None: it applies)."""
        put = {str(n["id"]) for n in change.nodes}
        for node_id in change.nodes_removed:
            if node_id not in self.nodes:
                return f"removes node {node_id!r}, which the kept commits do not hold"
        for key in change.edges_removed:
            if tuple(key) not in self.edges:
                return f"removes edge {tuple(key)!r}, which the kept commits do not hold"
        for edge in change.edges_added:
            for end in (str(edge["from"]), str(edge["to"])):
                if end not in self.nodes and end not in put:
                    return f"links node {end!r}, which the kept commits do not hold"
        return None

    def apply(self, change: ChangeRecord, seq: int) -> None:
        """As `StateBuilder.apply` does (puts, node removals, edge removals, edge additions)."""
        self.nodes.update(str(n["id"]) for n in change.nodes)
        self.nodes.difference_update(change.nodes_removed)
        self.edges.difference_update(tuple(k) for k in change.edges_removed)
        self.edges.update(edge_key(e) for e in change.edges_added)
        self.counters = (change.node_seq, change.seq_counter)
        self.seq = seq


def close_gap(storage: LanceStorage, db: Any, damage: ChatDamage) -> GapRepair:
    """Put a placeholder commit at each version of `damage.lost_state_versions` and keep the
    readable commits after the first one while they still apply (module docstring); `db`: a
    LanceDB connection to the same database (for the snapshots table)."""
    chat = damage.chat_id
    lost = damage.lost_state_versions
    first = min(lost)
    entries = _entries_from(storage, chat, first)
    newest = max([*entries, *lost])
    before = storage.state_at_sync(chat, version=first - 1)
    placeholders = _placeholders(before.counters, first, newest, entries)
    _append(storage, chat, placeholders)
    graph = _Graph(before)
    kept: list[int] = []
    for version in range(first, newest + 1):
        entry = entries.get(version)
        if entry is None:
            graph.apply(placeholders[version], graph.seq)
            continue
        if entry.snapshot is not None:  # a whole state of its own
            graph = _Graph(storage.state_at_sync(chat, version=version))
            kept.append(version)
            continue
        change = entry.change()
        why = graph.missing(change)
        if why is not None:
            removed = sum(1 for v in entries if v >= version)
            _remove_from(storage, db, chat, version)
            placed = tuple(v for v in lost if v < version)
            return GapRepair(chat, placed, tuple(kept), version, removed, why)
        graph.apply(change, entry.seq)
        kept.append(version)
    return GapRepair(chat, tuple(lost), tuple(kept), None, 0, "")


def _entries_from(storage: LanceStorage, chat: str, first: int) -> dict[int, JournalEntry]:
    rows = storage.journal.first_per_version(
        f"{where_eq(chat_id=chat)} AND version >= {int(first)}", _COLUMNS
    )
    return {v: JournalEntry(rows[v]) for v in sorted(rows)}


def _placeholders(
    counters: tuple[int, int], first: int, newest: int, entries: dict[int, JournalEntry]
) -> dict[int, ChangeRecord]:
    """An empty change for each version in `first..newest` that has no row, carrying the
    counters (node seq, message seq) of the version before it (`counters`: those of version
    `first - 1`), so a load of it gives its predecessor's."""
    out: dict[int, ChangeRecord] = {}
    for version in range(first, newest + 1):
        entry = entries.get(version)
        if entry is not None:
            counters = _counters_of(entry)
            continue
        out[version] = ChangeRecord(
            node_seq=counters[0], seq_counter=counters[1], kind="repair", note=PLACEHOLDER_NOTE
        )
    return out


def _counters_of(entry: JournalEntry) -> tuple[int, int]:
    if entry.snapshot is not None:
        head = entry.snapshot.head
        return int(head.get("node_seq") or 0), int(head.get("seq_counter") or 0)
    change = entry.change()
    return change.node_seq, change.seq_counter


def _append(storage: LanceStorage, chat: str, changes: dict[int, ChangeRecord]) -> None:
    """One journal row per placeholder, in one append."""
    if not changes:
        return
    writer, created = uuid.uuid4().hex, time.time()
    rows: list[dict[str, Any]] = [
        {
            "chat_id": chat,
            "version": version,
            "writer": writer,
            "seq": change.seq_counter,
            "applied": 0,
            "kind": change.kind,
            "created_at": created,
            "payload": change_payload(change),
            "vec_profile": None,
            "vec_ids": None,
            "vectors": None,
        }
        for version, change in sorted(changes.items())
    ]
    storage.journal.table.add(pa.Table.from_pylist(rows, schema=COMMITS_SCHEMA))


def _remove_from(storage: LanceStorage, db: Any, chat: str, version: int) -> None:
    """Delete the chat's commits (placeholders too) and snapshots from `version` on: they are
    of a state built on what was lost."""
    later = f"{where_eq(chat_id=chat)} AND version >= {int(version)}"
    storage.journal.table.delete(later)
    if SNAPSHOTS in table_names(db):
        db.open_table(SNAPSHOTS).delete(later)
