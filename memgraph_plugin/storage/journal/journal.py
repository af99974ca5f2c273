"""The journal: the append-only `commits` table, one row per committed batch of a chat.

A row holds the change as JSON plus the changed nodes' vectors; one LanceDB append per batch, so
a batch is all-or-nothing. Two writers of one chat are detected optimistically: a commit appends
version `base + 1`; the row committed first (the smallest stable row id; scan order is not
commit order once compaction has run) wins, a loser deletes its row and raises `ConflictError`.
The append's own table version says whether anything but this handle's appends to other chats
landed since the chat was last seen at `base`; only then is the version read back to find the
winner (`_uncontested`).

Versions other writers made in such a gap are checked for having added rows at all, by their
row counts (`_added_no_rows`): the maintenance process's compactions and pruning add none, so a
commit after them is not read back.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from typing import Any

import numpy as np
import pyarrow as pa

from memgraph_plugin.storage.database.escape import sql_literal, where_eq
from memgraph_plugin.storage.errors import ConflictError, StorageError
from memgraph_plugin.storage.journal.change_codec import change_payload
from memgraph_plugin.storage.journal.fragment_hints import FragmentHints
from memgraph_plugin.storage.journal.journal_compaction import JournalGate
from memgraph_plugin.storage.journal.journal_entry import JournalEntry, _row_change
from memgraph_plugin.storage.journal.journal_parts import group_versions, split_change
from memgraph_plugin.storage.journal.snapshot_refs import change_sizes
from memgraph_plugin.storage.journal.table_head import NextVersionProbe
from memgraph_plugin.storage.persistence import ChangeRecord, CommitRecord, VectorBlock

__all__ = ["Journal", "JournalEntry", "commit_record"]
from memgraph_plugin.storage.database.tables import COMMITS, COMMITS_SCHEMA, open_or_create

#: Own appends remembered for `_uncontested` (a longer gap is checked by reading back).
_OWN_COMMITS_KEPT = 4096
#: At most this many other writers' versions in a gap are checked for having added no rows.
_FOREIGN_VERSIONS_CHECKED = 8
#: `classify_foreign` looks at most this many versions back.
_CLASSIFIED_PER_CALL = 64

_ENTRY_COLUMNS = [
    *("seq", "applied", "kind", "created_at", "payload"),
    *("vec_profile", "vec_ids", "vectors"),
]


def _vectors_to_columns(
    block: VectorBlock | None,
) -> tuple[str | None, list[str] | None, bytes | None]:
    if block is None or not block.ids:
        return None, None, None
    matrix = np.ascontiguousarray(block.matrix, dtype=np.float32)
    if matrix.shape[0] != len(block.ids):
        raise StorageError("vector block: one row per id expected", code="BAD_ARGS")
    return block.profile, list(block.ids), matrix.tobytes()


def commit_record(
    chat_id: str, version: int, row: dict[str, Any], change: ChangeRecord
) -> CommitRecord:
    """A history row: journal columns `seq, applied, kind, created_at` plus the change's size
    (read back from a row pointing at a snapshot: the sizes and node ids it kept)."""
    put, removed, added, unlinked = change_sizes(change)
    node_ids = (*(str(n["id"]) for n in change.nodes), *change.nodes_removed)
    if not node_ids and change.snapshot is not None:
        node_ids = change.snapshot.node_ids
    return CommitRecord(
        chat_id=chat_id,
        version=version,
        seq=int(row["seq"]),
        applied=int(row["applied"]),
        kind=str(row["kind"]),
        created_at=float(row["created_at"]),
        nodes_changed=put + removed,
        edges_changed=added + unlinked,
        node_ids=node_ids,
        edges_added=added,
        edges_removed=unlinked,
        note=change.note,
    )


def _own_version(before: int, reported: int | None) -> int | None:
    """The commits table version an append made, when certain; None when not.

    LanceDB's `add` reports the table's version after the append, which under concurrent
    commits can be ANOTHER writer's later version (two processes appending 150 rows each
    side by side: 2-3 appends reported a version that was not theirs). Taking that version
    as ours hid the other writer's commits between ours and it from the next commit's
    `_uncontested` check: it skipped the read-back and acknowledged a write that lost its
    version (a lost write with two session processes on one chat). Our append made a version
    after `before` (the newest version before it) and at or before the one reported, so it is
    the one reported only when that is `before + 1`.
    """
    if reported is None or reported != before + 1:
        return None
    return reported


class Journal:
    """The `commits` table of one database, and what this handle knows of it."""

    def __init__(
        self,
        db: Any,
        inspect_db: Any | None = None,
        gate: JournalGate | None = None,
        *,
        single_writer: bool = False,
    ) -> None:
        """`db`: a connection whose reads see the newest commit; `inspect_db`: one that is not
        kept consistent (its handle travels to old versions; none: gaps are read back);
        `gate`: held shared around each append (`journal_compaction.py`); `single_writer`:
        each chat is written by one process at a time (hosts holding a chat lease), so an
        append based on the version this handle last loaded or committed is not read back."""
        self.table = open_or_create(db, COMMITS, COMMITS_SCHEMA)
        self._gate = gate
        #: a handle that travels to old versions to count their rows (`_added_no_rows`)
        self._inspector = None if inspect_db is None else inspect_db.open_table(COMMITS)
        self._inspect_lock = threading.Lock()
        self._no_rows: set[int] = set()  # other writers' versions known to have added no rows
        self._classified_upto = 0  # `classify_foreign` looked at the versions up to this one
        self._lock = threading.RLock()
        self._seen: dict[str, tuple[int, int]] = {}  # chat -> (commits table version, version)
        self._single_writer = single_writer
        #: chat -> the version this handle last loaded or committed (`single_writer`)
        self._versions: dict[str, int] = {}
        self._own: dict[int, str] = {}  # commits table version -> chat, of this handle's appends
        self._head = 0  # the newest commits table version this handle knows of
        self._probe = NextVersionProbe(self.table)
        #: where each chat's rows are (`fragment_hints.py`): with one writer per chat only
        self.hints = FragmentHints() if single_writer else None
        if single_writer and hasattr(self.table, "append_at_latest"):
            self.table.append_at_latest = False  # no other writer's row to be after

    # ------------------------------------------------------------------ reads

    def rows(self, table: Any, where: str, columns: list[str]) -> list[dict[str, Any]]:
        return table.search().where(where).select(columns).limit(None).to_arrow().to_pylist()

    def first_per_version(self, where: str, columns: list[str]) -> dict[int, dict[str, Any]]:
        """Journal rows matching `where`, the first committed row of each version only (with
        its writer's other rows of the version, the parts of a large change, under ``_parts``:
        `journal_parts.group_versions`).

        Stable row ids grow in commit order and survive compaction: the smallest wins.
        """
        names = ["version", *(c for c in ("writer", *columns) if c != "version")]
        rows = (
            self.table.search()
            .where(where)
            .select(list(dict.fromkeys(names)))
            .with_row_id(True)
            .limit(None)
            .to_arrow()
            .to_pylist()
        )
        return group_versions(rows)

    def entries(self, chat_id: str, after: int, upto: int | None = None) -> list[JournalEntry]:
        """Journal rows of a chat with `after < version <= upto`, first row per version wins."""
        where = f"{where_eq(chat_id=chat_id)} AND version > {int(after)}"
        if upto is not None:
            where += f" AND version <= {int(upto)}"
        first = None
        if upto is None and self.hints is not None:
            first = self.hints.load(self.table, chat_id, after, where, _ENTRY_COLUMNS)
        if first is None:
            first = self.first_per_version(where, _ENTRY_COLUMNS)
        entries = [JournalEntry(first[v]) for v in sorted(first)]
        expected = after + 1
        for entry in entries:
            if entry.version != expected:
                raise StorageError(
                    f"journal of chat {chat_id!r} has a gap: version {expected} is missing "
                    f"(found {entry.version}); history before it was pruned?"
                )
            expected += 1
        return entries

    def applied_between(self, chat_id: str, after: int, upto: int) -> int | None:
        """How many nodes and edges the chat's commits with `after < version <= upto` changed
        in all (their ``applied`` counts: no change read); None when one is missing."""
        where = f"{where_eq(chat_id=chat_id)} AND version > {int(after)} AND version <= {int(upto)}"
        first = self.first_per_version(where, ["applied"])
        if len(first) != upto - after:
            return None
        return sum(int(row["applied"]) for row in first.values())

    def latest_version(self, chat_id: str) -> int:
        table_version = self._knew(self.table.version)
        rows = self.rows(self.table, where_eq(chat_id=chat_id), ["version"])
        latest = max((int(r["version"]) for r in rows), default=0)
        self._seen[chat_id] = (table_version, latest)
        self._versions[chat_id] = latest
        return latest

    def has_changed(self, chat_id: str, since_version: int) -> bool:
        """Cheap freshness check: compares the journal table's version first (no scan); table
        versions that are this handle's own appends to other chats do not count. On a local
        table, "no version after the newest one known" is one file lookup (`table_head.py`)
        instead of LanceDB's listing of every kept version."""
        seen = self._seen.get(chat_id)
        if seen is not None and seen[1] == since_version:
            known = max(seen[0], self._head)
            if self._probe.newer_than(known) is False and self._only_own_appends(
                chat_id, seen[0], known + 1
            ):
                return False
        table_version = self._knew(self.table.version)
        if (
            seen is not None
            and seen[1] == since_version
            and self._only_own_appends(chat_id, seen[0], table_version + 1)
        ):
            return False
        rows = self.rows(
            self.table,
            f"{where_eq(chat_id=chat_id)} AND version > {int(since_version)}",
            ["version"],
        )
        if rows:
            return True
        self._seen[chat_id] = (table_version, since_version)
        self._versions[chat_id] = since_version
        return False

    def current_version(self) -> int:
        """The commits table's version now: the newest this handle knows of, or the few after
        it, when the folder says no manifest follows (a file lookup each, `table_head.py`),
        else LanceDB's answer (which lists every kept version). Never newer than the newest
        version at the call (a version cleaned up meanwhile can make it older)."""
        head = self._head
        if head:
            newest = self._probe.newest_from(head)
            if newest is not None:
                return self._knew(newest)
        return self._knew(self.table.version)

    def saw(self, chat_id: str, table_version: int, version: int) -> None:
        """Remember that the chat was at `version` as of commits table version
        `table_version` (a load read it)."""
        self._seen[chat_id] = (table_version, version)
        self._versions[chat_id] = version
        self._knew(table_version)

    def _knew(self, table_version: int) -> int:
        """Note a commits table version this handle saw exist; returns it."""
        if table_version > self._head:
            self._head = table_version
        return table_version

    def missing_version(self, chat_id: str, version: int) -> StorageError:
        """The clear error for a version that cannot be rebuilt: never written, or pruned."""
        kept = [
            int(r["version"]) for r in self.rows(self.table, where_eq(chat_id=chat_id), ["version"])
        ]
        latest = max(kept, default=0)
        if version > latest:
            return StorageError(f"chat {chat_id!r} has no version {version} (latest is {latest})")
        return StorageError(
            f"chat {chat_id!r}: version {version} was pruned (history is kept from version "
            f"{min(kept)}; storage_history_seconds)"
        )

    def history(self, chat_id: str, *, limit: int | None = None) -> tuple[CommitRecord, ...]:
        first = self.first_per_version(
            where_eq(chat_id=chat_id), ["seq", "applied", "kind", "created_at", "payload"]
        )
        out = [commit_record(chat_id, v, first[v], _row_change(first[v])) for v in sorted(first)]
        if limit is not None:
            out = out[-limit:] if limit > 0 else []
        return tuple(out)

    def marks(self, chat_id: str) -> tuple[tuple[int, int, str], ...]:
        """``(version, seq, kind)`` of each of the chat's commits, oldest first: `history`
        without reading the changes (what finding a rollback's target needs)."""
        first = self.first_per_version(where_eq(chat_id=chat_id), ["seq", "kind"])
        return tuple((v, int(first[v]["seq"]), str(first[v]["kind"])) for v in sorted(first))

    def version_for_seq(self, chat_id: str, seq: int) -> int:
        """The newest version whose message seq is <= `seq` (0: before the first commit).

        A seq older than a pruned journal's first kept row is an error, never "before the first
        commit" (which would empty the chat).
        """
        marks = self.marks(chat_id)
        best = 0
        for version, at, _kind in marks:
            if at <= seq:
                best = version
        if best == 0 and marks and marks[0][0] > 1:
            raise StorageError(
                f"chat {chat_id!r}: the state after message seq {seq} was pruned (history is "
                f"kept from version {marks[0][0]}; storage_history_seconds)"
            )
        return best

    def chats(self) -> tuple[str, ...]:
        rows = self.table.search().select(["chat_id"]).limit(None).to_arrow()
        return tuple(sorted(set(rows.column("chat_id").to_pylist())))

    # ----------------------------------------------------------------- writes

    def append(self, chat_id: str, change: ChangeRecord, *, base_version: int) -> CommitRecord:
        """Append one journal row (atomic, durable on return) for version `base_version + 1`."""
        return self.append_many(chat_id, [change], base_version=base_version)[0]

    def append_many(
        self, chat_id: str, changes: list[ChangeRecord], *, base_version: int
    ) -> list[CommitRecord]:
        """Append one journal row per change, versions `base_version + 1` on, in ONE LanceDB
        append (atomic, durable on return): a transcript ingest keeps one version per message
        and pays one append per block. Another writer's row at any of these versions first:
        every row of this append is deleted and `ConflictError` raised (a writer that saw our
        first row saw them all, so winning `base + 1` wins them all; each is checked anyway)."""
        if not changes:
            return []
        first_version = int(base_version) + 1
        writer = uuid.uuid4().hex
        created = time.time()
        rows: dict[str, list[Any]] = {name: [] for name in COMMITS_SCHEMA.names}
        fields_of: list[dict[str, Any]] = []
        for offset, change in enumerate(changes):
            fields = {
                "seq": int(change.seq_counter),
                "applied": int(change.applied),
                "kind": change.kind,
                "created_at": created,
            }
            fields_of.append(fields)
            # rows of bounded size, one version; a change stored in a snapshot: one small row
            parts = [change] if change.snapshot is not None else split_change(change)
            for part in parts:
                vectors = None if part.snapshot is not None else part.vectors  # in the snapshot
                profile, vec_ids, blob = _vectors_to_columns(vectors)
                row = {
                    "chat_id": chat_id,
                    "version": first_version + offset,
                    "writer": writer,
                    **fields,
                    "payload": change_payload(part),
                    "vec_profile": profile,
                    "vec_ids": vec_ids,
                    "vectors": blob,
                }
                for name in rows:
                    rows[name].append(row[name])
        table = pa.table(rows, schema=COMMITS_SCHEMA)
        last_version = first_version + len(changes) - 1
        with self._lock:
            seen = self._seen.get(chat_id)
            with self._gate.shared() if self._gate is not None else contextlib.nullcontext():
                before = self._head if self._single_writer else self.current_version()
                added = self.table.add(table)
            table_version = _own_version(before, getattr(added, "version", None))
            if table_version is None and isinstance(getattr(added, "version", None), int):
                self._knew(added.version)  # exists, though it may be another writer's
            if not self._uncontested(chat_id, base_version, seen, table_version):
                span = f"version >= {first_version} AND version <= {last_version}"
                winners = self.first_per_version(
                    f"{where_eq(chat_id=chat_id)} AND {span}", ["writer"]
                )
                if any(
                    winners.get(v, {}).get("writer") != writer
                    for v in range(first_version, last_version + 1)
                ):
                    self.table.delete(
                        f"{where_eq(chat_id=chat_id)} AND writer = {sql_literal(writer)}"
                    )
                    latest = self.latest_version(chat_id)
                    raise ConflictError(chat_id, base_version, latest)
            if self.hints is not None:
                self.hints.appended(chat_id, self.table, table.num_rows, last_version)
            self._note_own_commit(chat_id, table_version, last_version)
        return [
            commit_record(chat_id, first_version + offset, fields, change)
            for offset, (fields, change) in enumerate(zip(fields_of, changes, strict=True))
        ]

    def _uncontested(
        self, chat_id: str, base: int, seen: tuple[int, int] | None, table_version: int | None
    ) -> bool:
        """Whether the append that made commits table version `table_version` is certainly the
        first row of version `base + 1` of the chat, without reading it back.

        True when this handle knew the chat at `base` as of table version `seen[0]` and every
        table version since then, up to the append, is an append of this handle to another chat:
        no other writer committed in between, so no row of `base + 1` can precede ours.
        Otherwise (another writer's commit, a compaction, a delete in between) the caller reads
        the version back.
        """
        if self._single_writer and self._versions.get(chat_id) == base:
            return True  # no other writer of the chat (its lease), and this handle knew `base`
        if seen is None or table_version is None or seen[1] != base:
            return False
        return self._only_own_appends(chat_id, seen[0], table_version)

    def _only_own_appends(self, chat_id: str, after: int, before: int) -> bool:
        """Whether no commits table version strictly between `after` and `before` added a row
        of `chat_id`: each one is an append of this handle to another chat, or another
        writer's version that added no rows at all (the maintenance process's compaction,
        pruning and index updates; `_added_no_rows`)."""
        gap = range(after + 1, before)
        if len(gap) > len(self._own) + _FOREIGN_VERSIONS_CHECKED:
            return False
        foreign = [v for v in gap if v not in self._own]
        if any(self._own.get(v) == chat_id for v in gap):
            return False
        return not foreign or self._added_no_rows(foreign)

    def _added_no_rows(self, versions: list[int]) -> bool:
        """Whether each of these commits table versions holds no more rows than the version
        before it: so none is an append (our journal's rows are only ever appended, deleted by
        pruning, or rewritten by compaction; never updated in place). A row count is read off a
        version's manifest (~1 ms, against ~10 ms for reading the rows back); versions already
        classified (`classify_foreign`) cost nothing. False when it cannot tell (too many
        versions, or one already cleaned up)."""
        unknown = [v for v in versions if v not in self._no_rows]
        if not unknown:
            return True
        if self._inspector is None or len(unknown) > _FOREIGN_VERSIONS_CHECKED:
            return False
        return self._classify(unknown) is False

    def _classify(self, versions: list[int]) -> bool | None:
        """Whether any of `versions` grew the table (an append), by the row counts of each and
        of the version before it; the others are remembered as having added no rows. None when
        a count cannot be read (cleaned up, say). The inspector is locked per version, so a
        commit never waits for a whole `classify_foreign`."""
        assert self._inspector is not None
        counts: dict[int, int] = {}
        try:
            for v in sorted({u - d for u in versions for d in (0, 1)}):
                with self._inspect_lock:
                    self._inspector.checkout(v)
                    counts[v] = int(self._inspector.count_rows())
        except Exception:
            return None
        grew = {v for v in versions if counts[v] > counts[v - 1]}
        self._remember_no_rows(v for v in versions if v not in grew)
        return bool(grew)

    def _remember_no_rows(self, versions: Any) -> None:
        self._no_rows.update(versions)
        while len(self._no_rows) > _OWN_COMMITS_KEPT:
            self._no_rows.discard(min(self._no_rows))

    def classify_foreign(self) -> None:
        """Classify the commits table versions other writers made since the last call (the
        maintenance process's compactions and pruning, mostly), so that a later commit finds
        them known. Called off the write path, after each maintenance pass; at most
        `_CLASSIFIED_PER_CALL` versions, the newest."""
        if self._inspector is None:
            return
        head = self.current_version()
        low = max(self._classified_upto, head - _CLASSIFIED_PER_CALL, 1)  # v1: no v0 to compare
        versions = [v for v in range(low + 1, head + 1) if v not in self._own]
        if self._classify(versions) is not None:  # else (cleaned up, say): the next call
            self._classified_upto = max(self._classified_upto, head)

    def _note_own_commit(self, chat_id: str, table_version: int | None, version: int) -> None:
        """Remember that table version `table_version` is this handle's winning append."""
        self._versions[chat_id] = version
        if table_version is None:  # no version reported: the next commit reads back
            self._seen.pop(chat_id, None)
            return
        self._seen[chat_id] = (table_version, version)
        self._versions[chat_id] = version
        self._own[table_version] = chat_id
        self._knew(table_version)
        while len(self._own) > _OWN_COMMITS_KEPT:
            del self._own[next(iter(self._own))]

    def close(self) -> None:
        """Let go of the gate's lock file (the handle is not used again)."""
        if self._gate is not None:
            self._gate.close()

    def prune(self, chat_id: str, before_version: int, cutoff: float) -> None:
        """Delete the chat's rows older than `before_version` and created before `cutoff`."""
        self.table.delete(
            f"{where_eq(chat_id=chat_id)} AND version < {int(before_version)}"
            f" AND created_at < {cutoff!r}"
        )
