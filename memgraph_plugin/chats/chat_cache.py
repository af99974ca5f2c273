"""`PersistedChats`: the service's per-host cache of loaded chats, kept in step with storage.

A loaded chat is an engine `Store`, the journal version it reflects, and (when an embedding
profile is configured) its in-memory `VectorIndex`. Opening a cached chat costs one cheap
freshness check; a chat another writer has moved on is reloaded. Every persisted change embeds
the changed nodes (on a worker thread when their text is large: `OFF_LOOP_TEXT_CHARS`), appends
one journal row, then updates the index (a block of deferred writes: one row per write, in one
append; `block_commit`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from memgraph_plugin.chats.chat_vectors import ChatVectors
from memgraph_plugin.chats.loaded_chat import UNSNAPSHOTTED, LoadedChat
from memgraph_plugin.chats.memory_budget import MB, MemoryBudget, chat_bytes
from memgraph_plugin.chats.recent_commits import RecentCommit
from memgraph_plugin.chats.stored_rollback import stored_befores
from memgraph_plugin.embedding.embedder import NodeEmbedder
from memgraph_plugin.embedding.profile import EmbeddingProfile, VectorBlock
from memgraph_plugin.embedding.text import node_id
from memgraph_plugin.engine.graph.store_revert import revert
from memgraph_plugin.engine.graph.store_transactions import Changeset
from memgraph_plugin.engine.index.deferred import build_soon
from memgraph_plugin.engine.load import gc_paused
from memgraph_plugin.storage.errors import ConflictError
from memgraph_plugin.storage.journal.block_commit import BlockItem, embed_block
from memgraph_plugin.storage.journal.change_codec import changeset_to_change
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.persistence import ChatState, CommitRecord
from memgraph_plugin.storage.vectors.vector_ann import LanceAnn

log = logging.getLogger(__name__)

StoreFactory = Callable[[Mapping[str, Any]], Any]

#: indices a loaded store defers that a chat's first turn reads whole: built on a thread of
#: their own from the open on, in the order the turn reads them (the name index, ~0.16 s at
#: 100k; the type pools the extraction's newest event reads; the pool map, anchors and visible
#: set its first write updates: ~1.4 s together at 1M nodes, which the first turn waited for)
FIRST_TURN_INDICES = ("_names", "_type_pools", "_pool_of", "_anchor", "_visible")


#: text (characters) of a block's changed nodes from which their embedding runs on a worker
#: thread: below it, embedding takes about a millisecond and a thread hop would cost more
OFF_LOOP_TEXT_CHARS = 64_000


def _text_chars(changesets: Sequence[Changeset]) -> int:
    """About how much text embedding the changesets' nodes reads: their titles and their
    fields' top-level strings (a bound on the work, not `node_text` itself)."""
    total = 0
    for changeset in changesets:
        for node in changeset.nodes:
            total += len(node.title or "")
            total += sum(len(v) for v in node.fields.values() if isinstance(v, str))
    return total


class PersistedChats(ChatVectors):
    """Loaded chats of one host over one `LanceStorage`."""

    def __init__(
        self,
        storage: LanceStorage | Callable[[], LanceStorage],
        *,
        store_from_dict: StoreFactory,
        store_from_state: Callable[[ChatState], Any] | None = None,
        schema: Any = None,
        profile: EmbeddingProfile | None = None,
        ann_threshold: int = 250_000,
        refresh_interval: float = 0.0,
        memory_budget_mb: float | None = None,
    ) -> None:
        """`storage` and `schema` may be zero-argument factories, resolved on first use.
        `memory_budget_mb`: loaded chats beyond it are evicted, least recently used first."""
        self._storage = storage if isinstance(storage, LanceStorage) else None
        self._storage_factory = None if isinstance(storage, LanceStorage) else storage
        self.store_from_dict = store_from_dict
        self.store_from_state = store_from_state
        self._schema = schema
        self._profile = profile
        self._embedder: NodeEmbedder | None = None
        self.ann_threshold = ann_threshold
        self.refresh_interval = refresh_interval
        self._chats: dict[str, LoadedChat] = {}
        self._checked: dict[str, float] = {}
        self._ann: LanceAnn | None = None
        self._ann_build: asyncio.Future[bool] | None = None
        self.last_search_mode = "exact"  # how the last vector_search ran: "exact" or "ann"
        self._loading: weakref.WeakKeyDictionary[Any, dict[str, asyncio.Lock]] = (
            weakref.WeakKeyDictionary()
        )
        self.budget = MemoryBudget(None if memory_budget_mb is None else int(memory_budget_mb * MB))
        #: store of an evicted chat -> the chat as it was, without store and index (a session
        #: still holding the store can make it the loaded chat again: `_readopt`)
        self._evicted: weakref.WeakKeyDictionary[Any, LoadedChat] = weakref.WeakKeyDictionary()

    @property
    def storage(self) -> LanceStorage:
        """The database handle (connected on first use; a bad URI raises here)."""
        if self._storage is None:
            assert self._storage_factory is not None
            self._storage = self._storage_factory()
            if self.embedder is not None and self._storage.embedder is None:
                self._storage.embedder = self.embedder
        return self._storage

    @property
    def embedder(self) -> NodeEmbedder | None:
        if self._embedder is None and self._profile is not None:
            schema = self._schema() if callable(self._schema) else self._schema
            self._embedder = NodeEmbedder(self._profile, schema)
            if self._storage is not None and self._storage.embedder is None:
                self._storage.embedder = self._embedder
        return self._embedder

    @property
    def profile(self) -> EmbeddingProfile | None:
        return self._profile

    def close(self) -> None:
        self._chats.clear()
        self.budget = MemoryBudget(self.budget.limit)
        if self._storage is not None:
            self._storage.close()

    def cached(self, chat_id: str) -> LoadedChat | None:
        return self._chats.get(chat_id)

    def recheck(self, chat_id: str) -> None:
        """The next open of the chat asks storage whether another writer committed, however
        recently it last asked (``storage_refresh_seconds``): a process that took the chat's
        lock from another one writes on the newest version."""
        self._checked.pop(chat_id, None)

    def forget(self, chat_id: str) -> None:
        """Drop a chat from the cache (the next open reloads it from storage)."""
        self._chats.pop(chat_id, None)
        self._checked.pop(chat_id, None)
        self.budget.drop(chat_id)

    # ------------------------------------------------------------- memory budget

    def _used(self, chat: LoadedChat) -> None:
        """`chat` was just used: most recent in the LRU order, its size re-estimated; then the
        coldest chats are evicted while the loaded ones exceed the budget."""
        chat.used_at = time.monotonic()  # background work on it waits for a pause in its turns
        if self._chats.get(chat.chat_id) is not chat:
            return
        self.budget.use(chat.chat_id, chat_bytes(chat.store, chat.index))
        for chat_id in self.budget.victims(self._busy):
            self.evict(chat_id)

    def _busy(self, chat_id: str) -> bool:
        """A commit of the chat is in flight (it must not be unloaded under it)."""
        chat = self._chats.get(chat_id)
        return chat is not None and chat.lock.locked()

    def evict(self, chat_id: str) -> bool:
        """Unload a chat to free its memory; the next open loads it again from storage.

        A session that still holds the chat's store keeps it (and its memory) alive: its reads
        see the chat as it was, and its next write commits normally when no commit reached the
        chat meanwhile (`_readopt`), else it gets `CONFLICT` like any stale session.
        """
        chat = self._chats.get(chat_id)
        if chat is None or chat.lock.locked():
            return False
        self.forget(chat_id)
        self._evicted[chat.store] = attrs.evolve(chat, store=None, index=None)
        self.budget.evictions += 1
        log.debug("chat %r evicted (memory budget)", chat_id)
        return True

    def _readopt(self, chat_id: str, store: Any, current: LoadedChat | None) -> LoadedChat | None:
        """The chat again, with `store` (a session's store of an evicted chat) as its store,
        when nothing was committed to the chat since the eviction; None when something was (or
        `store` is not an evicted store of this chat)."""
        was = self._evicted.get(store)
        if was is None or was.chat_id != chat_id:
            return None
        if current is not None and (current.version != was.version or current.lock.locked()):
            return None
        if current is not None:  # reopened since: its store's sessions are now the stale ones
            self._evicted[current.store] = attrs.evolve(current, store=None, index=None)
        del self._evicted[store]
        chat = attrs.evolve(was, store=store, index=None, unembedded=[], lock=asyncio.Lock())
        self._chats[chat_id] = chat
        self._checked[chat_id] = 0.0
        return chat

    # ----------------------------------------------------------------- open

    async def open(self, chat_id: str) -> LoadedChat:
        """The chat, loaded or cached; reloaded when another writer committed since.

        Openers of one chat load it once (the others wait and share it), and an open waits for a
        commit of this process in flight: a session holding the store it replaced would
        otherwise get a needless `ConflictError` on its next write.
        """
        chat = await self._fresh_cached(chat_id)
        if chat is not None:
            self._used(chat)
            return chat
        async with self._load_lock(chat_id):
            chat = await self._fresh_cached(chat_id)  # another opener may have loaded it
            if chat is not None:
                self._used(chat)
                return chat
            chat = await asyncio.to_thread(self._load, self.storage, chat_id)
            self._chats[chat_id] = chat
            self._checked[chat_id] = time.monotonic()
            self._used(chat)
            return chat

    async def _fresh_cached(self, chat_id: str) -> LoadedChat | None:
        """The cached chat if no other writer moved it on (None: load it)."""
        chat = self._chats.get(chat_id)
        if chat is None:
            return None
        if chat.lock.locked():  # a commit of ours is in flight: its row is not another writer's
            async with chat.lock:
                pass
            chat = self._chats.get(chat_id)
            if chat is None:
                return None
        now = time.monotonic()
        if now - self._checked.get(chat_id, 0.0) < self.refresh_interval:
            return chat
        if not self.storage.has_changed_sync(chat_id, chat.version):
            self._checked[chat_id] = now
            return chat
        log.info("chat %r changed in storage since version %s: reloading", chat_id, chat.version)
        return None

    def _load_lock(self, chat_id: str) -> asyncio.Lock:
        """One lock per chat and event loop, held while the chat loads."""
        locks = self._loading.setdefault(asyncio.get_running_loop(), {})
        lock = locks.get(chat_id)
        if lock is None:
            lock = locks[chat_id] = asyncio.Lock()
        return lock

    def _load(self, storage: LanceStorage, chat_id: str) -> LoadedChat:
        """Read a chat's columns, build its store and its vector index, off the event loop.
        One collector pause spans it all: the decoded columns are garbage by its end, so no
        collection walks them. The index is built here from the stored vectors (adopted as
        read, no copy: `RowBlocks`), so the first search after an open embeds and builds
        nothing; they are read while the store is built. The
        young objects the load made are collected once, when the pause ends (`gc_paused`):
        left to the collector, the first collections after the load (on the event loop, in
        the chat's first reads) traversed them twice (young, then middle generation)."""
        with gc_paused():
            if self.embedder is None:
                chat = self._from_state(storage.load_sync(chat_id))
                build_soon(chat.store, *FIRST_TURN_INDICES)
            else:
                state, vectors = storage.open_sync(chat_id, profile=self.embedder.name)
                self._check_ann_soon(state)
                chat = self._from_state(state)  # while the vectors are read (own thread)
                build_soon(chat.store, *FIRST_TURN_INDICES)
                self._load_index(storage, chat, state, vectors())
                if chat.index is not None:  # the first write's id map, on its own thread
                    chat.index.map_ids_soon()
        return chat

    def _from_state(self, state: ChatState) -> LoadedChat:
        if self.store_from_state is not None and state.nodes is not None:
            store = self.store_from_state(state)
        else:
            store = self.store_from_dict(state.data)
        return LoadedChat(
            chat_id=state.chat_id,
            store=store,
            version=state.version,
            checkpoint_version=state.checkpoint_version,
            seq=state.seq,
            dirty=dict.fromkeys(state.changed_since_checkpoint, float(state.version)),
        )

    async def refresh(self, chat_id: str) -> LoadedChat:
        """Reload unconditionally (after a conflict, a rollback or an import)."""
        self.forget(chat_id)
        return await self.open(chat_id)

    # --------------------------------------------------------------- commit

    async def persist(
        self,
        chat_id: str,
        changeset: Changeset,
        *,
        applied: int,
        store: Any = None,
        kind: str = "write",
    ) -> CommitRecord:
        """Make `changeset` (already applied to the cached store) durable as one journal row
        of `kind` (``write``; ``edit`` for a person's correction in the explorer).

        On a conflict (another writer got there first) the cached chat is dropped, so the next
        open sees the other writer's state, and `ConflictError` propagates for a retry.
        """
        records = await self.persist_block(
            chat_id, [BlockItem(changeset, applied, kind)], store=store
        )
        return records[0]

    async def persist_block(
        self,
        chat_id: str,
        items: Sequence[BlockItem | tuple[Changeset, int, str]],
        *,
        store: Any = None,
    ) -> list[CommitRecord]:
        """Make consecutive changesets (already applied to the cached store, in order) durable
        as one journal row each, in one append (`block_commit`); as `persist` otherwise. An
        item is a `BlockItem` or its ``(changeset, applied, kind)``."""
        items = [i if isinstance(i, BlockItem) else BlockItem(*i) for i in items]
        chat = self._chats.get(chat_id)
        if store is not None and (chat is None or store is not chat.store):
            # a session holding the store of an evicted chat: its store is the chat again
            chat = self._readopt(chat_id, store, chat) or chat
        if chat is None or (store is not None and store is not chat.store):
            # a session still holding a store that was dropped or replaced: it is stale
            raise ConflictError(
                chat_id,
                -1 if chat is None else chat.version,
                await self.storage.latest_version(chat_id),
            )
        async with chat.lock:
            if self._chats.get(chat_id) is not chat:  # an earlier commit failed meanwhile
                raise ConflictError(chat_id, chat.version, chat.version)
            try:
                records = await self._commit_block(chat, items)
            except BaseException:
                self.forget(chat_id)  # the store holds an unpersisted change: never reuse it
                raise
            self._checked[chat_id] = time.monotonic()
            self._used(chat)
            return records

    async def _commit(
        self, chat: LoadedChat, changeset: Changeset, applied: int, kind: str = "write"
    ) -> CommitRecord:
        """Embed, bring the live index up to date, append the journal row (and a snapshot)."""
        return (await self._commit_block(chat, [BlockItem(changeset, applied, kind)]))[0]

    async def _commit_block(self, chat: LoadedChat, items: list[BlockItem]) -> list[CommitRecord]:
        """Embed (each node's final state once), bring the live index up to date, append one
        journal row per item in one append."""
        changesets = [item.changeset for item in items]

        def embed() -> list[VectorBlock | None] | None:
            return embed_block(changesets, lambda nodes: self._embed_changed(chat, nodes))

        if self.embedder is not None and _text_chars(changesets) > OFF_LOOP_TEXT_CHARS:
            # seconds of embedding for a several-MB message: on a worker thread, so other
            # chats are answered meanwhile (the nodes are frozen records, the profiles are
            # called from threads already; this chat's lock is held, so nothing else of it
            # commits or reads its index until the vectors are in)
            vectors = await asyncio.to_thread(embed)
        else:
            vectors = embed()
        blocks = vectors if vectors is not None else [None] * len(items)
        if chat.index is not None and self.embedder is not None:
            # before the snapshot below: it must hold this write's vectors
            for changeset, block in zip(changesets, blocks, strict=True):
                self.embedder.apply(chat.index, changeset.nodes, block)
                if changeset.nodes_removed:
                    chat.index.remove(changeset.nodes_removed)
        changes = [
            changeset_to_change(item.changeset, applied=item.applied, kind=item.kind, vectors=b)
            for item, b in zip(items, blocks, strict=True)
        ]
        version_before = chat.version
        if len(changes) == 1:  # the live path: one commit per write
            records = [
                await self.storage.commit(chat.chat_id, changes[0], base_version=chat.version)
            ]
        else:
            records = await self.storage.commit_many(
                chat.chat_id, changes, base_version=chat.version
            )
        chat.version = records[-1].version
        chat.seq = records[-1].seq
        for item, record in zip(items, records, strict=True):
            changeset = item.changeset
            stamp = float(record.version) if vectors is not None else UNSNAPSHOTTED
            for n in changeset.nodes:
                chat.dirty[node_id(n)] = stamp
            for nid in changeset.nodes_removed:  # stale in older snapshots' vector rows
                chat.dirty[nid] = float(record.version)
            before = changeset.before
            if before is None:
                chat.recent.clear()
            elif item.kind != "rollback":  # (rollback_recent updates the recent commits itself)
                chat.recent.note(
                    RecentCommit(
                        version_before, record.version, before.seq_counter, record.seq, before
                    )
                )
            version_before = record.version
        return records

    async def rollback_recent(
        self, chat_id: str, *, version: int | None = None, seq: int | None = None
    ) -> CommitRecord | None:
        """Roll the loaded chat back to `version` (or to after message `seq`) in memory, as one
        journal row, when no other writer has moved the chat on: by what its newest commits
        replaced (`RecentCommits`), else (a `version` before them, or commits of an earlier
        process) by what storage says the undone commits replaced (`stored_befores`). None
        when it cannot (the caller takes the storage path, which reloads the chat). Costs what
        the undone commits changed, and for commits of an earlier process a filtered read of
        the target's rows they touched."""
        chat = self._chats.get(chat_id)
        if chat is None:
            return None
        async with chat.lock:
            if self._chats.get(chat_id) is not chat:
                return None
            target = chat.recent.target(version=version, seq=seq)
            if chat.store.has_changes or chat.store.in_transaction:
                return None  # mid-write (never between writes): leave it to storage
            if target is None and (version is None or not 0 <= version < chat.version):
                return None
            if await self.storage.latest_version(chat_id) != chat.version:
                return None  # another writer committed: the storage path sees its state
            if target is not None:
                befores = chat.recent.befores_after(target)
            else:  # commits this process did not make (a restart since): read what they replaced
                target = int(version)  # type: ignore[arg-type]  # (checked above)
                stored = await stored_befores(self.storage, chat, target)
                if stored is None:
                    return None
                befores = [stored]
            revert(chat.store, befores)
            changeset = chat.store.take_changeset()
            if changeset is None:
                return None
            applied = (
                len(changeset.nodes)
                + len(changeset.nodes_removed)
                + len(changeset.edges_added)
                + len(changeset.edges_removed)
            )
            try:
                record = await self._commit(chat, changeset, applied, kind="rollback")
            except BaseException:
                self.forget(chat_id)  # the store holds an unpersisted change: never reuse it
                raise
            chat.recent.rolled_back(target, record.version)
            self._checked[chat_id] = time.monotonic()
            self._used(chat)
            return record
