"""`PersistedChats`: the service's per-host cache of loaded chats, kept in step with storage.

A loaded chat is an engine `Store`, the journal version it reflects, and (when an embedding
profile is configured) its in-memory `VectorIndex`. Opening a cached chat costs one cheap
freshness check; a chat another writer has moved on is reloaded. Every persisted change embeds
the changed nodes, appends one journal row, then updates the index.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.embedding.embedder import NodeEmbedder
from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.embedding.profile import EmbeddingProfile
from memgraph_plugin.embedding.text import node_id
from memgraph_plugin.engine.gc_pause import gc_paused
from memgraph_plugin.engine.schema import is_diagnostic_type
from memgraph_plugin.engine.store_revert import revert
from memgraph_plugin.storage.codec import changeset_to_change
from memgraph_plugin.storage.errors import ConflictError
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.memory_budget import MB, MemoryBudget, chat_bytes
from memgraph_plugin.storage.persistence import ChatState, CommitRecord, VectorBlock
from memgraph_plugin.storage.recent_commits import RecentCommit, RecentCommits
from memgraph_plugin.storage.vector_ann import LanceAnn, hybrid_search

log = logging.getLogger(__name__)

StoreFactory = Callable[[Mapping[str, Any]], Any]
Progress = Callable[[int, int], None]


@attrs.define(eq=False)
class LoadedChat:
    """One chat held in memory."""

    chat_id: str
    store: Any
    version: int
    checkpoint_version: int
    seq: int = 0
    index: VectorIndex | None = None
    #: node id -> the version that changed it, for nodes whose vector may not be among the
    #: snapshot's vector rows (the ANN path searches them exactly); `UNSNAPSHOTTED`: never there
    dirty: dict[str, float] = attrs.field(factory=dict)
    unembedded: list[str] = attrs.field(factory=list)  # in the index without a stored vector
    lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    recent: RecentCommits = attrs.field(factory=RecentCommits)  # for rollbacks in memory

    def snapshot_seen(self, version: int) -> None:
        """A snapshot at `version` exists: nodes changed up to it are among its vector rows."""
        if version > self.checkpoint_version:
            self.checkpoint_version = version
            self.dirty = {k: v for k, v in self.dirty.items() if v > version}


UNSNAPSHOTTED = float("inf")


class PersistedChats:
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

    def forget(self, chat_id: str) -> None:
        """Drop a chat from the cache (the next open reloads it from storage)."""
        self._chats.pop(chat_id, None)
        self._checked.pop(chat_id, None)
        self.budget.drop(chat_id)

    # ------------------------------------------------------------- memory budget

    def _used(self, chat: LoadedChat) -> None:
        """`chat` was just used: most recent in the LRU order, its size re-estimated; then the
        coldest chats are evicted while the loaded ones exceed the budget."""
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
        collection walks them. The index is built here from the stored vectors (a numpy copy
        of a column), so the first search after an open costs what later ones do."""
        with gc_paused():
            state = storage.load_sync(chat_id)
            chat = self._from_state(state)
            if self.embedder is not None:
                self._load_index(storage, chat, state)
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

    def _load_index(self, storage: LanceStorage, chat: LoadedChat, state: ChatState) -> None:
        """The chat's vector index from its stored vectors; nodes without one are noted in
        `unembedded` (embedded by the first search)."""
        assert self.embedder is not None
        block = storage.load_vectors_sync(chat.chat_id, state, profile=self.embedder.name)
        index = self.embedder.new_index()
        nodes = chat.store
        if block is not None and block.dim == index.dim:  # every id is a node of `state`
            names, type_of_row, archived = _types_and_flags(state, block.ids, nodes)
            diagnostic = np.asarray([is_diagnostic_type(t) for t in names], dtype=bool)
            searchable = ~archived & ~diagnostic[type_of_row] if len(names) else archived
            index = VectorIndex.from_arrays(
                index.profile, block.ids, block.matrix, names, type_of_row, searchable
            )
        if len(index) != len(nodes):
            chat.unembedded = [n.id for n in nodes.iter_nodes() if n.id not in index]
        chat.index = index

    async def refresh(self, chat_id: str) -> LoadedChat:
        """Reload unconditionally (after a conflict, a rollback or an import)."""
        self.forget(chat_id)
        return await self.open(chat_id)

    # --------------------------------------------------------------- commit

    async def persist(
        self, chat_id: str, changeset: Any, *, applied: int, store: Any = None
    ) -> CommitRecord:
        """Make `changeset` (already applied to the cached store) durable as one journal row.

        On a conflict (another writer got there first) the cached chat is dropped, so the next
        open sees the other writer's state, and `ConflictError` propagates for a retry.
        """
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
                record = await self._commit(chat, changeset, applied)
            except BaseException:
                self.forget(chat_id)  # the store holds an unpersisted change: never reuse it
                raise
            self._checked[chat_id] = time.monotonic()
            self._used(chat)
            return record

    async def _commit(
        self, chat: LoadedChat, changeset: Any, applied: int, kind: str = "write"
    ) -> CommitRecord:
        """Embed, bring the live index up to date, append the journal row (and a snapshot)."""
        vectors = self._embed_changed(chat, changeset.nodes)
        removed = tuple(getattr(changeset, "nodes_removed", ()))
        if chat.index is not None and self.embedder is not None:
            # before the snapshot below: it must hold this write's vectors
            self.embedder.apply(chat.index, changeset.nodes, vectors)
            if removed:
                chat.index.remove(removed)
        change = changeset_to_change(changeset, applied=applied, kind=kind, vectors=vectors)
        version_before = chat.version
        record = await self.storage.commit(chat.chat_id, change, base_version=chat.version)
        chat.version = record.version
        chat.seq = record.seq
        stamp = float(record.version) if vectors is not None else UNSNAPSHOTTED
        for n in changeset.nodes:
            chat.dirty[node_id(n)] = stamp
        for nid in removed:  # stale in older snapshots' vector rows until the next one
            chat.dirty[nid] = float(record.version)
        before = getattr(changeset, "before", None)
        if before is None:
            chat.recent.clear()
        elif kind != "rollback":  # (rollback_recent updates the recent commits itself)
            chat.recent.note(
                RecentCommit(version_before, record.version, before.seq_counter, record.seq, before)
            )
        return record

    async def rollback_recent(
        self, chat_id: str, *, version: int | None = None, seq: int | None = None
    ) -> CommitRecord | None:
        """Roll the loaded chat back to `version` (or to after message `seq`) in memory, as one
        journal row, when the target is among its newest commits (`RecentCommits`) and no
        other writer has moved the chat on; None when it is not (the caller takes the storage
        path, which reloads the chat). Costs what the undone commits changed."""
        chat = self._chats.get(chat_id)
        if chat is None or not len(chat.recent):
            return None
        async with chat.lock:
            if self._chats.get(chat_id) is not chat:
                return None
            target = chat.recent.target(version=version, seq=seq)
            if target is None or chat.store.has_changes or chat.store.in_transaction:
                return None  # mid-write (never between writes): leave it to storage
            if await self.storage.latest_version(chat_id) != chat.version:
                return None  # another writer committed: the storage path sees its state
            revert(chat.store, chat.recent.befores_after(target))
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

    def _embed_changed(self, chat: LoadedChat, nodes: Any) -> VectorBlock | None:
        """Vectors of the changed nodes; a failing profile is logged by name and the write goes
        on without them (the live index is dropped, so the next search re-embeds)."""
        if self.embedder is None:
            return None
        try:
            return self.embedder(nodes)
        except Exception:
            log.exception(
                "embedding profile %r failed; chat %r commits without vectors",
                self.embedder.name,
                chat.chat_id,
            )
            chat.index = None
            return None

    # --------------------------------------------------------------- vectors

    async def ensure_index(self, chat: LoadedChat, progress: Progress | None = None) -> VectorIndex:
        """Build the chat's vector index: stored vectors of this profile, the rest embedded.

        Built under the chat's commit lock: a write landing meanwhile waits, then puts its
        vectors into the new index (loaded before it, the index would keep the old ones).
        """
        assert self.embedder is not None
        if chat.index is not None and not chat.unembedded:
            return chat.index
        async with chat.lock:
            if chat.index is not None and chat.unembedded:  # nodes stored without a vector
                missing = [n for n in map(chat.store.node, chat.unembedded) if n is not None]
                chat.unembedded = []
                await self._embed_into(chat.index, missing, progress, total=len(missing))
                chat.dirty.update(dict.fromkeys((n.id for n in missing), UNSNAPSHOTTED))
            if chat.index is not None:  # built at load, or by another search meanwhile
                return chat.index
            state = ChatState(chat.chat_id, chat.version, {"nodes": {}}, chat.checkpoint_version)
            nodes = list(chat.store.iter_nodes())
            state.data["nodes"] = {n.id: None for n in nodes}
            block = await self.storage.load_vectors(
                chat.chat_id, state, profile=self.embedder.name
            )
            index = self.embedder.new_index()
            have = set(block.ids) if block is not None else set()
            if block is not None and block.dim == index.dim:
                self.embedder.apply(index, nodes, block)
            else:
                have = set()
            missing = [n for n in nodes if n.id not in have]
            if len(missing) > 1000 and len(missing) * 2 > len(nodes):
                # stored with another profile (or none): embedded now, kept at the next snapshot
                log.warning(
                    "chat %r: embedding %d of %d nodes with profile %r (no stored vectors of it; "
                    "`memgraph-host reindex %s` does this ahead of time)",
                    chat.chat_id, len(missing), len(nodes), self.embedder.name, chat.chat_id,
                )
            await self._embed_into(index, missing, progress, total=len(nodes), done=len(have))
            # not among the snapshot's vector rows
            chat.dirty.update(dict.fromkeys((n.id for n in missing), UNSNAPSHOTTED))
            chat.index = index
            return index

    async def _embed_into(
        self,
        index: VectorIndex,
        nodes: list[Any],
        progress: Progress | None,
        *,
        total: int,
        done: int = 0,
        chunk: int = 512,
    ) -> None:
        assert self.embedder is not None
        if progress is not None:
            progress(done, total)
        for start in range(0, len(nodes), chunk):
            part = nodes[start : start + chunk]
            self.embedder.apply(index, part, self.embedder(part))
            done += len(part)
            if progress is not None:
                progress(done, total)
            await asyncio.sleep(0)

    async def vector_search(
        self, chat_id: str, *, query: str, types: Collection[str] | None, k: int
    ) -> list[tuple[str, float]]:
        """(node id, cosine) pairs, best first."""
        assert self.embedder is not None
        chat = self._chats.get(chat_id) or await self.open(chat_id)
        index = await self.ensure_index(chat)
        self._used(chat)  # its vectors count from now on
        chat.snapshot_seen(self.storage.checkpointed_version(chat_id))
        q = self.embedder.embed_query(query)
        if len(index) >= self.ann_threshold and chat.checkpoint_version > 0:
            ann = self._ann_for(index.dim)
            if ann is not None and await asyncio.to_thread(ann.ready):
                self.last_search_mode = "ann"
                return await asyncio.to_thread(
                    hybrid_search,
                    index,
                    ann,
                    chat_id=chat_id,
                    ckpt_version=self.storage.snapshot_chain(chat_id, chat.checkpoint_version),
                    profile=self.embedder.name,
                    dirty=set(chat.dirty),
                    query=q,
                    k=k,
                    types=types,
                )
            if ann is not None:
                self._build_ann(ann)
        self.last_search_mode = "exact"
        return index.search(q, k=k, types=types)

    def _build_ann(self, ann: LanceAnn) -> None:
        """Build LanceDB's vector index in the background (minutes at 100k+ rows); searches
        stay exact meanwhile instead of waiting for it."""
        if self._ann_build is not None and not self._ann_build.done():
            return
        self._ann_build = asyncio.ensure_future(asyncio.to_thread(ann.ensure_index))
        self._ann_build.add_done_callback(_log_build_failure)

    async def ann_built(self) -> bool:
        """Wait for a background vector-index build (if one runs); whether the index is ready."""
        if self._ann_build is not None:
            try:
                await asyncio.shield(self._ann_build)
            except Exception:  # logged by _log_build_failure
                return False
        return self._ann is not None and await asyncio.to_thread(self._ann.ready)

    def _ann_for(self, dim: int) -> LanceAnn | None:
        if self._ann is None or self._ann.dim != dim:
            self._ann = LanceAnn(self.storage._nodes_table(dim), dim, threshold=self.ann_threshold)
        return self._ann

    async def reindex(self, chat_id: str, progress: Progress | None = None) -> int:
        """Re-embed every node of a chat with the current profile and checkpoint the vectors.

        The snapshot is the chat as stored (the cached store may already hold a session's change
        that is still waiting to commit, and may never commit).
        """
        assert self.embedder is not None
        chat = await self.open(chat_id)
        async with chat.lock:
            state = await self.storage.load(chat_id)
            nodes = list(state.data["nodes"].values())
            index = self.embedder.new_index()
            await self._embed_into(index, nodes, progress, total=len(nodes))
            ids, matrix = index.items()
            await self.storage.checkpoint(
                chat_id, state, VectorBlock(self.embedder.name, ids, matrix)
            )
            if state.version == chat.version and self._chats.get(chat_id) is chat:
                chat.index = index  # a change still waiting to commit adds its vectors next
                chat.checkpoint_version = state.version
                chat.dirty.clear()
                chat.unembedded = []
            else:
                self.forget(chat_id)  # another writer moved on: reload next time
            return len(nodes)


def _types_and_flags(
    state: ChatState, ids: tuple[str, ...], store: Any
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """`(type names, type of each id as an index into them, archived flag of each id)`, from
    the state's columns (vectorised); from the store for nodes held as raw JSON, or for all of
    them when the state has no columns."""
    if state.nodes is None:
        recs = [store.node(i) for i in ids]
        names = sorted({n.type for n in recs})
        at = {t: k for k, t in enumerate(names)}
        return (
            names,
            np.asarray([at[n.type] for n in recs], dtype=np.int64),
            np.asarray([n.archived for n in recs], dtype=bool),
        )
    rows = pc.index_in(pa.array(ids, pa.string()), value_set=state.nodes["id"])
    types = state.nodes["type"].take(rows)
    archived = state.nodes["archived"].take(rows)
    raw = [i for i, t in enumerate(types.to_pylist()) if t is None] if types.null_count else []
    if raw:  # raw rows: their records know
        fixed_t, fixed_a = types.to_pylist(), archived.to_pylist()
        for i in raw:
            rec = store.node(ids[i])
            fixed_t[i], fixed_a[i] = rec.type, rec.archived
        types, archived = pa.array(fixed_t, pa.string()), pa.array(fixed_a, pa.bool_())
    encoded = pc.dictionary_encode(types).combine_chunks() if hasattr(types, "chunks") else (
        pc.dictionary_encode(types)
    )
    names = encoded.dictionary.to_pylist()
    type_of_row = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    flags = np.asarray(archived.to_numpy(zero_copy_only=False), dtype=bool)
    return names, type_of_row, flags


def _log_build_failure(task: asyncio.Future[bool]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("building the LanceDB vector index failed", exc_info=task.exception())
