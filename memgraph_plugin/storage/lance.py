"""`LanceStorage`: the LanceDB implementation of `Persistence`, a facade over its parts.

Layout (one database, every chat in the same tables; `shards.py` splits chats over several):
- `commits`: the append-only journal, one row per committed batch (`journal.py`: the protocol).
- `snapshots`, `snap_nodes`, `snap_edges`: columnar, incremental snapshots (`snapshots.py` reads
  and writes them, `checkpoints.py` builds them from the journal).
- `nodes` (`nodes_d<dim>` for other dimensions): the snapshots' node vectors (`vectors.py`).

Loading (here) = the newest snapshot's columns + the journal rows after it, merged as columns
(`columns.py`). Snapshots, compaction (`table_compaction.py`) and cleanup run in the maintenance
process (`maintenance.py`), never in a commit.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import attrs

from memgraph_plugin.embedding.embedder import NodeEmbedder
from memgraph_plugin.engine.load import gc_paused
from memgraph_plugin.storage.database.table_reads import Database, on_own_thread
from memgraph_plugin.storage.database.tables import (
    COMMITS,
    SNAP_EDGES,
    SNAP_NODES,
    SNAPSHOTS,
    nodes_table_name,
    table_stats,
)
from memgraph_plugin.storage.errors import ConflictError, StorageError
from memgraph_plugin.storage.failures import translate_sync_methods
from memgraph_plugin.storage.format.graph_columns import (
    DeltaBuilder,
    empty_edges,
    empty_nodes,
    merge,
    picked,
)
from memgraph_plugin.storage.format.keyword_rows import split_keywords, with_unknown_keywords
from memgraph_plugin.storage.journal.change_codec import diff_states, empty_state
from memgraph_plugin.storage.journal.journal import Journal, JournalEntry
from memgraph_plugin.storage.journal.journal_compaction import JournalGate
from memgraph_plugin.storage.journal.snapshot_refs import rebased
from memgraph_plugin.storage.journal.state_diff import state_diff
from memgraph_plugin.storage.lance_async import AsyncTwins
from memgraph_plugin.storage.maintenance.checkpoints import Checkpoints
from memgraph_plugin.storage.maintenance.import_snapshot import finish_import, write_import_rows
from memgraph_plugin.storage.maintenance.maintenance import Maintenance
from memgraph_plugin.storage.maintenance.table_compaction import Compactor
from memgraph_plugin.storage.persistence import (
    ChangeRecord,
    ChatState,
    CommitRecord,
    SnapshotRef,
    VectorBlock,
)
from memgraph_plugin.storage.settings import StorageSettings
from memgraph_plugin.storage.snapshots.snapshots import SnapshotTables
from memgraph_plugin.storage.vectors.vectors import VectorTables, load_vectors

log = logging.getLogger(__name__)

Embedder = Callable[[list[dict[str, Any]]], VectorBlock | None]
"""Embeds node dicts (for rollback/import commits made by the storage layer itself)."""

ChatIdRule = Callable[[object], str | None]
"""What is wrong with a chat id (a sentence), or None: the host's one rule
(`host.chats.chat_ids.chat_id_problem`), handed in by whoever makes this storage an entry point."""


@translate_sync_methods  # a damaged file, a full disk, a read-only folder: one-line StorageError
class LanceStorage(AsyncTwins):
    """Chats in one LanceDB database. Sync methods do the work; async twins run them off-loop."""

    def __init__(
        self,
        settings: StorageSettings | str,
        *,
        embedder: Embedder | None = None,
        chat_id_rule: ChatIdRule | None = None,
    ) -> None:
        """`chat_id_rule`: applied to the chat id of every public call when this storage is
        itself an entry point (handed outside ids); None when the ids were checked at the edge
        above it (the memory-graph service checks them when a session opens)."""
        if isinstance(settings, str):
            settings = StorageSettings(uri=settings)
        self.settings = settings
        self.embedder = embedder
        self._chat_id_rule = chat_id_rule
        self._db = Database(settings)  # reads through pylance; LanceDB on the first write
        self.journal = Journal(
            self._db,
            Database(settings, consistent=False),
            JournalGate(settings.uri),
            single_writer=settings.single_writer,
        )
        self.vectors = VectorTables(self._db)
        self._snaps = SnapshotTables(self._db, self.vectors.table)
        self.checkpoints = Checkpoints(
            settings,
            self.journal,
            self._snaps,
            load=lambda chat, upto: self.load_sync(chat, upto=upto),
            load_vectors=lambda chat, state, profile: self.load_vectors_sync(
                chat, state, profile=profile
            ),
        )
        self._compactor = Compactor(
            settings.retention_seconds, journal_gate=JournalGate(settings.uri)
        )
        self._commits_since_optimize = 0
        self.maintenance = Maintenance(self)

    @property
    def _commits(self) -> Any:
        """The journal's LanceDB table (tests and benches reach in)."""
        return self.journal.table

    def _nodes_table(self, dim: int) -> Any:
        return self.vectors.table(dim)

    def shard_for(self, chat_id: str) -> LanceStorage:
        """The storage holding the chat's tables: this one (`shards.py` splits chats)."""
        return self

    def _checked(self, chat_id: str) -> str:
        """`chat_id`, or ``BAD_ARGS`` with the rule's sentence (only with a `chat_id_rule`)."""
        if self._chat_id_rule is not None:
            problem = self._chat_id_rule(chat_id)
            if problem is not None:
                raise StorageError(problem, code="BAD_ARGS")
        return chat_id

    # ------------------------------------------------------------------ reads

    def load_sync(self, chat_id: str, *, upto: int | None = None) -> ChatState:
        """The chat at its latest version (or `upto`): the newest snapshot's columns with the
        journal rows after it merged in."""
        return self._read_state(chat_id, upto)[0]

    def load_with_vectors_sync(
        self, chat_id: str, *, profile: str | None
    ) -> tuple[ChatState, VectorBlock | None]:
        """`load_sync` and `load_vectors_sync` of its state, with one read of the snapshot head
        and of the journal rows after it (an open's reads)."""
        state, vectors = self.open_sync(chat_id, profile=profile)
        return state, vectors()

    def open_sync(
        self, chat_id: str, *, profile: str | None
    ) -> tuple[ChatState, Callable[[], VectorBlock | None]]:
        """`load_with_vectors_sync` with its vectors still being read when it returns, and a
        function that waits for them. The snapshot's vector rows are read on a thread of their
        own from the moment its head is known: alongside its node and edge rows, then while the
        caller builds the store (LanceDB decodes on its own threads, mostly)."""
        early: list[tuple[dict[str, Any], Future[VectorBlock | None]]] = []

        def read_early(head: dict[str, Any]) -> None:
            if profile is not None and head.get("vec_dim") and head.get("vec_profile") == profile:
                early.append((head, on_own_thread(self._snaps.read_vectors, chat_id, head)))

        state, head, entries = self._read_state(chat_id, None, on_head=read_early)
        stored = next((f for h, f in early if h is head), None)  # not a head read before it

        def vectors() -> VectorBlock | None:
            read = None if stored is None else stored.result
            return load_vectors(self._snaps, head, entries, state, profile, read=read)

        return state, vectors

    def rows_at_sync(
        self, chat_id: str, version: int, node_ids: list[str], sources: list[str]
    ) -> ChatState:
        """The chat at `version` (> 0) with only the rows of nodes `node_ids` and of the edges
        from `sources`: what a rollback restores (`restored_values.py`), read without the rest."""
        return self._read_state(chat_id, version, pick=(node_ids, sources))[0]

    def _read_state(
        self,
        chat_id: str,
        upto: int | None,
        on_head: Callable[[dict[str, Any]], None] | None = None,
        pick: tuple[list[str], list[str]] | None = None,
    ) -> tuple[ChatState, dict[str, Any] | None, list[JournalEntry]]:
        """`load_sync`, with the snapshot head and the journal entries it read (`on_head` is
        told each head before its rows are read); `pick`: `rows_at_sync`'s node ids and edge
        sources (no keyword data then)."""

        def read(head: dict[str, Any]) -> tuple[Any, Any, Any]:
            if pick is None:
                return self._snaps.read_with_keywords(chat_id, head)
            return (*self._snaps.read_picked(chat_id, head, *pick), None)

        self._checked(chat_id)
        table_version = self.journal.current_version()
        vocab: tuple[str, list[Any]] | None = None
        for _attempt in range(5):
            head = self._snaps.head(chat_id, upto)
            if head is None:
                break
            if on_head is not None:
                on_head(head)
            nodes, edges, vocab = read(head)
            if self._snaps.still_there(chat_id, head):
                break  # else pruned by another process while read: read the newer one
        base_version = int(head["version"]) if head is not None else 0
        stored, entries = rebased(head, self.journal.entries(chat_id, base_version, upto))
        if stored is not head:  # an import's snapshot, named by its journal row (no head row)
            head, base_version = stored, int(stored["version"])
            if on_head is not None:
                on_head(head)
            nodes, edges, vocab = read(head)
        with gc_paused():  # decoding builds a few acyclic objects per changed node and edge
            if head is not None:
                node_seq, seq_counter = int(head["node_seq"]), int(head["seq_counter"])
                seq = int(head["seq"])
            else:
                nodes, edges, node_seq, seq_counter, seq = empty_nodes(), empty_edges(), 0, 0, 0
            delta = DeltaBuilder()
            for entry in entries:
                delta.apply(entry.change())
                seq = entry.seq
            if entries:
                dn, de = delta.tables()
                if pick is not None:
                    dn, de = picked(dn, de, *pick)
                if vocab is not None:  # journal rows: no token lists (indexed from text)
                    dn = with_unknown_keywords(dn)
                nodes, edges = merge(nodes, dn), merge(edges, de)
                node_seq, seq_counter = int(delta.node_seq or 0), int(delta.seq_counter or 0)
            nodes, keywords = split_keywords(nodes, vocab)
        version = entries[-1].version if entries else base_version
        if upto is not None and version < upto:
            raise self.journal.missing_version(chat_id, upto)
        if upto is None:
            self.journal.saw(chat_id, table_version, version)
            self.checkpoints.note(chat_id, base_version)
        state = ChatState(
            chat_id=chat_id,
            version=version,
            checkpoint_version=base_version,
            seq=seq,
            changed_since_checkpoint=frozenset(delta.nodes),
            nodes=nodes,
            edges=edges,
            node_seq=node_seq,
            seq_counter=seq_counter,
            chain=tuple(int(v) for v in head["chain"]) if head is not None else (),
            keywords=keywords,
        )
        return state, head, entries

    def _journal(self, chat_id: str, after: int, upto: int | None = None) -> list[JournalEntry]:
        """Journal rows of a chat with `after < version <= upto` (tests replay them)."""
        return self.journal.entries(chat_id, after, upto)

    def load_vectors_sync(
        self, chat_id: str, state: ChatState, *, profile: str | None = None
    ) -> VectorBlock | None:
        """Vectors of the nodes of `state` made by `profile` (`vectors.load_vectors`)."""
        self._checked(chat_id)
        head = self._snaps.head(chat_id, state.version)
        ckpt_version = int(head["version"]) if head is not None else 0
        head, entries = rebased(head, self.journal.entries(chat_id, ckpt_version, state.version))
        return load_vectors(self._snaps, head, entries, state, profile)

    def latest_version_sync(self, chat_id: str) -> int:
        return self.journal.latest_version(self._checked(chat_id))

    def has_changed_sync(self, chat_id: str, since_version: int) -> bool:
        """Cheap freshness check (`Journal.has_changed`)."""
        return self.journal.has_changed(self._checked(chat_id), since_version)

    def history_sync(self, chat_id: str, *, limit: int | None = None) -> tuple[CommitRecord, ...]:
        return self.journal.history(self._checked(chat_id), limit=limit)

    def marks_sync(self, chat_id: str) -> tuple[tuple[int, int, str], ...]:
        """``(version, seq, kind)`` of each commit of the chat, oldest first (`Journal.marks`)."""
        return self.journal.marks(self._checked(chat_id))

    async def marks(self, chat_id: str) -> tuple[tuple[int, int, str], ...]:
        return await asyncio.to_thread(self.marks_sync, chat_id)

    def version_for_seq_sync(self, chat_id: str, seq: int) -> int:
        """The newest version whose message seq is <= `seq` (`Journal.version_for_seq`)."""
        return self.journal.version_for_seq(self._checked(chat_id), seq)

    def state_at_sync(
        self, chat_id: str, *, version: int | None = None, seq: int | None = None
    ) -> ChatState:
        if (version is None) == (seq is None):
            raise StorageError("give exactly one of version= or seq=", code="BAD_ARGS")
        if seq is not None:
            version = self.version_for_seq_sync(chat_id, int(seq))
        assert version is not None
        if version < 0:
            raise StorageError(f"version must be >= 0, got {version}", code="BAD_ARGS")
        if version == 0:
            return ChatState(chat_id=chat_id, version=0, data=empty_state())
        return self.load_sync(chat_id, upto=version)

    def chats_sync(self) -> tuple[str, ...]:
        return self.journal.chats()

    # ------------------------------------------------------------------ checkpoints

    def note_checkpoint(self, chat_id: str, version: int) -> None:
        self.checkpoints.note(chat_id, version)

    def checkpointed_version(self, chat_id: str) -> int:
        """The newest checkpoint of `chat_id` this handle wrote or loaded (0: none known)."""
        return self.checkpoints.version(chat_id)

    def checkpoint_known(self, chat_id: str) -> bool:
        return self.checkpoints.known(chat_id)

    def snapshot_chain(self, chat_id: str, version: int) -> tuple[int, ...]:
        """The row set ids of the chat's snapshot at `version` (`(-1,)`: no such snapshot)."""
        return self.checkpoints.chain(chat_id, version)

    def snapshot_due(self, chat_id: str, version: int) -> bool:
        return self.checkpoints.due(chat_id, version)

    def snapshot_sync(self, chat_id: str) -> int | None:
        """Snapshot a chat at its latest version from storage alone (`Checkpoints.snapshot`)."""
        return self.checkpoints.snapshot(self._checked(chat_id))

    def checkpoint_sync(
        self, chat_id: str, state: ChatState, vectors: VectorBlock | None = None
    ) -> None:
        """Write a full snapshot of `state` (and its vectors); then prune older snapshots."""
        self.checkpoints.write_full(self._checked(chat_id), state, vectors)

    # ----------------------------------------------------------------- writes

    def commit_sync(
        self,
        chat_id: str,
        change: ChangeRecord,
        *,
        base_version: int,
    ) -> CommitRecord:
        """Append one journal row (atomic, durable on return) for version `base_version + 1`."""
        record = self.journal.append(self._checked(chat_id), change, base_version=base_version)
        self._commits_since_optimize += 1
        self.maintenance.note_commit(chat_id, record.version)  # snapshots etc.: elsewhere
        return record

    def commit_many_sync(
        self, chat_id: str, changes: list[ChangeRecord], *, base_version: int
    ) -> list[CommitRecord]:
        """One journal row per change, versions `base_version + 1` on, in one append
        (`Journal.append_many`): a block of messages keeps one version per message."""
        records = self.journal.append_many(
            self._checked(chat_id), changes, base_version=base_version
        )
        if records:
            self._commits_since_optimize += 1  # one append: one fragment to compact
            self.maintenance.note_commit(chat_id, records[-1].version)
        return records

    def rollback_sync(
        self,
        chat_id: str,
        *,
        version: int | None = None,
        seq: int | None = None,
        base_version: int | None = None,
    ) -> CommitRecord:
        """Make a new commit whose state equals the chat's state at `version` (or after `seq`).

        Without `base_version` (the CLI), another writer's commit landing meanwhile is not the
        caller's business: the rollback is recomputed on the new state, a few times at most."""
        target = self.state_at_sync(chat_id, version=version, seq=seq)

        def attempt() -> CommitRecord:
            current = self.load_sync(chat_id)
            if base_version is not None and base_version != current.version:
                raise ConflictError(chat_id, base_version, current.version)
            change = state_diff(current, target, kind="rollback")  # as columns: no dicts
            return self._commit_replacement(chat_id, change, current.version)

        return attempt() if base_version is not None else _retry_conflict(attempt, chat_id)

    def import_sync(
        self, chat_id: str, data: dict[str, Any], *, kind: str = "import", note: str = ""
    ) -> CommitRecord:
        """Replace a chat's graph by `data` (a store dict in the contract's shape) as one commit
        of `kind` (``import``, or ``fork``) with provenance `note`; recomputed on the new state
        when another writer committed meanwhile (a few times). The graph is stored once, as a
        full snapshot at the new version, and the journal row points at it
        (`import_snapshot.py`). The cyclic garbage collector is held off meanwhile
        (`gc_paused`: the graph's dicts are acyclic, and collections over them were half the
        time of a 100k-node import)."""
        with gc_paused():
            return self._import(chat_id, data, kind=kind, note=note)

    def _import(self, chat_id: str, data: dict[str, Any], *, kind: str, note: str) -> CommitRecord:
        heads: list[dict[str, Any]] = []

        def attempt() -> CommitRecord:
            current = self.load_sync(chat_id)
            change = attrs.evolve(diff_states(current.data, data, kind=kind), note=note)
            head, change = write_import_rows(  # the graph's one copy: a full snapshot's rows
                self.checkpoints,
                chat_id,
                data,
                current.version + 1,
                change,
                lambda profile: (
                    self.load_vectors_sync(chat_id, current, profile=profile)
                    if current.version
                    else None
                ),
                getattr(self.embedder, "name", None),
                lambda plain: self._embedded(chat_id, plain),  # while node rows are written
            )
            heads.append(head)
            # the commit point: one journal row pointing at those rows (`snapshot_refs.py`)
            ref = attrs.evolve(change, snapshot=SnapshotRef(head))
            return self.commit_sync(chat_id, ref, base_version=current.version)

        record = _retry_conflict(attempt, chat_id)
        finish_import(self.checkpoints, chat_id, heads[-1])  # its head row: derived
        return record

    def _commit_replacement(self, chat_id: str, change: ChangeRecord, base: int) -> CommitRecord:
        """Commit a rollback/import change with its nodes' vectors (without, if embedding fails:
        those nodes are re-embedded by the next search)."""
        return self.commit_sync(chat_id, self._embedded(chat_id, change), base_version=base)

    def _embedded(self, chat_id: str, change: ChangeRecord) -> ChangeRecord:
        """`change` with its nodes' vectors (unchanged when it has them, or if embedding
        fails: logged)."""
        if self.embedder is not None and change.nodes and change.vectors is None:
            try:
                copy = not isinstance(self.embedder, NodeEmbedder)  # it only reads the nodes
                block = self.embedder([dict(n) if copy else n for n in change.nodes])
                change = attrs.evolve(change, vectors=block)
            except Exception:
                log.exception("embedding failed; chat %r commits without vectors", chat_id)
        return change

    # ------------------------------------------------------------------ upkeep

    def maintain_sync(self, *, optimize: bool = True) -> None:
        """Run a maintenance pass now, on this thread: the snapshots due, then compaction."""
        self.maintenance.run_now(optimize=optimize)

    def optimize_sync(self, *, force: bool = True) -> list[str]:
        """Compact every table (`table_compaction.py`), vector tables other processes made
        included; without `force` (a background pass) only those that need it. Returns the
        names of the tables compacted."""
        self._commits_since_optimize = 0
        return self._compactor.compact(
            [self.journal.table, *self._snaps.tables(), *self.vectors.all().values()],
            force=force,
        )

    def stats_sync(self) -> dict[str, Any]:
        """Rows, fragments and versions of every table (vector tables other processes made
        included)."""
        snaps = self._snaps
        named = [
            (COMMITS, self.journal.table),
            (SNAPSHOTS, snaps.heads),
            (SNAP_NODES, snaps.nodes),
            (SNAP_EDGES, snaps.edges),
        ]
        vectors = [(nodes_table_name(d), t) for d, t in self.vectors.all().items()]
        return table_stats(named + vectors)

    def close(self) -> None:
        """Stop the maintenance thread (a pass under way finishes first)."""
        self.maintenance.stop()
        self.vectors.clear()
        self.journal.close()
        if self._compactor.journal_gate is not None:
            self._compactor.journal_gate.close()


def _retry_conflict(
    fn: Callable[[], CommitRecord], chat_id: str, attempts: int = 5
) -> CommitRecord:
    """`fn()`, again after a short backoff while another writer of the chat gets in first."""
    for attempt in range(attempts):
        try:
            return fn()
        except ConflictError:
            if attempt == attempts - 1:
                raise
            log.info("chat %r: another writer committed first; retrying", chat_id)
            time.sleep(0.02 * 2**attempt)
    raise AssertionError("unreachable")
