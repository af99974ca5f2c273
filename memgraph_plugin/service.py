"""`MemoryGraph`: the memory graph of one host (published as ``memory-graph`` in its registry).

It caches one `Store` per chat, keeps one `InjectionHub` per chat (whose updates fire
``memgraph_injection_changed``) and opens `Session` objects. Loading and persisting go through
two methods, `_load_store` and `_persist`, the seam where storage plugs in (`persistence`);
without persistence, stores live in memory for the life of the service.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from host.chat_ids import chat_id_problem

if TYPE_CHECKING:
    from host.protocols import HostLike

    from .api.session import Session
    from .engine.store import Changeset
    from .storage.chat_cache import PersistedChats
    from .storage.persistence import CommitRecord, Persistence

from .api.injection import InjectionHub, use_service_lookup
from .engine.results import CommitInfo
from .engine.schema import Schema, resolve_schema
from .engine.store import Store
from .engine.views import InjectionState
from .errors import MemoryGraphError, check_str_list

__all__ = ["SERVICE_NAME", "MemoryGraph", "memory_graph_for", "notify_hook"]

log = logging.getLogger(__name__)

#: The registry name the service is published under.
SERVICE_NAME = "memory-graph"

_SERVICES: weakref.WeakKeyDictionary[Any, MemoryGraph] = weakref.WeakKeyDictionary()


def memory_graph_for(host: Any) -> MemoryGraph | None:
    """The `MemoryGraph` of `host` (None when the plugin has not started on it)."""
    if host is None:
        return None
    try:
        found = _SERVICES.get(host)
    except TypeError:
        found = None
    if found is not None:
        return found
    registry = getattr(host, "registry", None)
    api = registry.get(SERVICE_NAME) if registry is not None else None
    return api if isinstance(api, MemoryGraph) else None


use_service_lookup(memory_graph_for)  # the injection hubs find a host's service through this


def checked_chat_id(chat_id: Any) -> str:
    """`chat_id` when usable, else ``BAD_ARGS`` with the one chat id rule's message."""
    problem = chat_id_problem(chat_id)
    if problem is not None:
        raise MemoryGraphError("BAD_ARGS", problem)
    return chat_id


async def notify_hook(host: HostLike | None, hook_name: str, **kwargs: Any) -> None:
    """Fire a notification hook through the host's one dispatch path, `Host.anotify`: every
    implementation runs guarded (sync ones off the loop, a deadline each) and a failure is
    recorded by plugin name. A service on no host (or on a bare identity object, as engine
    tests use) fires nothing."""
    anotify = getattr(host, "anotify", None)
    if anotify is None:
        return
    try:
        await anotify(hook_name, **kwargs)
    except Exception:  # the host's own dispatch must never break a write
        log.exception("firing %s failed", hook_name)


def notify_hook_sync(host: HostLike | None, hook_name: str, **kwargs: Any) -> None:
    """The synchronous form (injection updates are synchronous): `Host.notify_soon`, which in a
    running loop fires the hook as an ordered task (a slow plugin never blocks the loop) and
    without one fires it now."""
    notify_soon = getattr(host, "notify_soon", None)
    if notify_soon is None:
        return
    try:
        notify_soon(hook_name, **kwargs)
    except Exception:
        log.exception("firing %s failed", hook_name)


class _Applied:
    """How many ops a block of deferred writes applied (what `commit` counts)."""

    def __init__(self, count: int) -> None:
        self.applied = range(count)


class MemoryGraph:
    """One host's memory graph: stores and injection hubs per chat, sessions, persistence."""

    def __init__(
        self,
        host: HostLike | None = None,
        *,
        persistence: PersistedChats | None = None,
        schema: Any = None,
        settings: Any = None,
    ) -> None:
        self.host = host
        self.persistence = persistence
        self.settings = dict(settings if settings is not None else getattr(host, "settings", {}))
        self._schema_source = schema if schema is not None else self.settings.get("schema")
        self._schema: Schema | None = None
        self._stores: dict[str, Store] = {}
        self._hubs: dict[str, InjectionHub] = {}
        self._locks: weakref.WeakKeyDictionary[Any, dict[str, asyncio.Lock]] = (
            weakref.WeakKeyDictionary()
        )
        self._deferred: dict[str, int] = {}  # chat -> ops applied since its deferred commits began
        self._pinned: dict[str, Any] = {}  # chat -> the store a deferred block writes to
        self.closed = False

    # -- registration ------------------------------------------------------------------------

    def attach(self) -> MemoryGraph:
        """Make `memory_graph_for(self.host)` find this service."""
        if self.host is not None:
            _SERVICES[self.host] = self
        return self

    def detach(self) -> None:
        if self.host is not None and _SERVICES.get(self.host) is self:
            del _SERVICES[self.host]

    # -- schema, stores, hubs -------------------------------------------------------------------

    @property
    def schema(self) -> Schema:
        """The active schema (settings ``schema``: a list of specs or a TOML/JSON path)."""
        if self._schema is None:
            self._schema = resolve_schema(self._schema_source)
        return self._schema

    def hub(self, chat_id: str) -> InjectionHub:
        """The chat's injection hub (created on first use); updates fire the hook."""
        hub = self._hubs.get(chat_id)
        if hub is None:
            hub = self._hubs[chat_id] = InjectionHub(chat_id, forward=self._injection_changed)
        return hub

    def unsubscribe_where(self, predicate: Callable[[Any], bool]) -> int:
        """Drop the injection listeners ``predicate`` accepts, in every chat; returns how many.

        Hot reload calls it with "defined in the replaced plugin's code".
        """
        return sum(hub.unsubscribe_where(predicate) for hub in list(self._hubs.values()))

    def injection_state(self, chat_id: str) -> InjectionState:
        return self.hub(chat_id).state

    def _injection_changed(self, chat_id: str | None, state: InjectionState) -> None:
        notify_hook_sync(self.host, "memgraph_injection_changed", chat_id=chat_id, state=state)

    def lock(self, chat_id: str) -> asyncio.Lock:
        """Serialises writes (apply + persist) of one chat (one lock per event loop)."""
        loop = asyncio.get_running_loop()
        locks = self._locks.get(loop)
        if locks is None:
            locks = self._locks[loop] = {}
        lock = locks.get(chat_id)
        if lock is None:
            lock = locks[chat_id] = asyncio.Lock()
        return lock

    def cached_store(self, chat_id: str) -> Store | None:
        if self.persistence is not None:
            chat = self.persistence.cached(chat_id)
            return None if chat is None else chat.store
        return self._stores.get(chat_id)

    def loaded_store(self, chat_id: str) -> Store | None:
        """The store this process holds for the chat now (a deferred block's, else the cached
        one), without loading it or asking storage whether it moved on; None when not loaded."""
        pinned = self._pinned.get(chat_id)
        if pinned is not None:
            return pinned
        return self.cached_store(chat_id)

    async def store_for(self, chat_id: str) -> Store:
        """The chat's store (loaded through `_load_store` and cached)."""
        return await self._load_store(chat_id)

    async def _load_store(self, chat_id: str) -> Store:
        """Load (or reuse) a chat's store. Storage overrides this seam (persistence.load)."""
        pinned = self._pinned.get(chat_id)
        if pinned is not None:
            return pinned  # holds the block's unpersisted writes: never reload
        if self.persistence is not None:  # storage: cached, refreshed when another writer moved on
            # kept by persistence only: a chat it unloads (memory budget) is not held here
            store = (await self.persistence.open(chat_id)).store
            if chat_id in self._deferred:
                self._pinned[chat_id] = store
            return store
        store = self._stores.get(chat_id)
        if store is None:
            store = self._stores[chat_id] = Store(schema=self.schema)
        if chat_id in self._deferred:
            self._pinned[chat_id] = store
        return store

    def journal_version(self, chat_id: str, store: Store) -> int:
        """The version of the chat's newest commit as this store knows it (the journal version
        with storage, the store's own version in memory): what a write result reports."""
        cached = getattr(self.persistence, "cached", None)
        chat = cached(chat_id) if cached is not None else None
        if chat is not None and chat.store is store:
            return int(chat.version)
        return int(store.version)

    async def _persist(
        self, chat_id: str, store: Store, changeset: Changeset, *, applied: int, kind: str
    ) -> tuple[int, bool]:
        """Make a changeset durable; returns ``(commit version, persisted)``.

        In memory the version is the store's; storage overrides this seam.
        """
        if self.persistence is not None:  # storage: one journal row, durable before returning
            try:
                record = await self.persistence.persist(
                    chat_id, changeset, applied=applied, store=store
                )
            except BaseException:
                self._stores.pop(chat_id, None)  # holds an unpersisted change: reload next time
                raise
            return record.version, True
        return store.version, False

    # -- sessions --------------------------------------------------------------------------------

    async def open_session(self, ctx: Any) -> Session | None:
        """A session on ctx's chat; None without a chat target or when the store fails to load."""
        from .api.session import Session

        if ctx is None or self.closed:
            return None
        chat_id = getattr(ctx, "chat_id", None)
        if chat_id is None or chat_id == "":  # no chat target
            return None
        chat_id = checked_chat_id(chat_id)
        try:
            store = await self._load_store(chat_id)
        except Exception as exc:
            log.warning("memory graph: the store of chat %r failed to load: %s", chat_id, exc)
            return None
        if store is None:
            log.warning("memory graph: no store for chat %r", chat_id)
            return None
        return Session(self, ctx, chat_id, store)

    @contextlib.asynccontextmanager
    async def deferred_commits(self, chat_id: str) -> AsyncIterator[None]:
        """Writes to `chat_id` inside the block change the store at once but are persisted (and
        announced by ``memgraph_commit``) as ONE commit when it ends: a transcript ingest pays
        one journal row and one embedding call per block, not per message. Its history has one
        version for the block (a rollback lands before or after all of it)."""
        if chat_id in self._deferred:
            yield
            return
        self._deferred[chat_id] = 0
        try:
            yield
        finally:
            applied = self._deferred.pop(chat_id)
            store = self._pinned.pop(chat_id, None)
            if store is not None:
                async with self.lock(chat_id):
                    commit = await self.commit(chat_id, store, _Applied(applied), "deferred")
                if commit is not None:
                    await self.fire_commit(chat_id, commit)

    async def commit(self, chat_id: str, store: Store, result: Any, kind: str) -> CommitInfo | None:
        """Persist what a write changed; returns the `CommitInfo` (None: nothing to commit, or
        the chat's commits are deferred: see `deferred_commits`)."""
        if chat_id in self._deferred:
            self._deferred[chat_id] += len(getattr(result, "applied", ()) or ())
            return None
        changeset = store.take_changeset()
        if changeset is None:
            return None
        applied = len(getattr(result, "applied", ()) or ())
        version, persisted = await self._persist(
            chat_id, store, changeset, applied=applied, kind=kind
        )
        return CommitInfo(
            version=version,
            applied=applied,
            chat_id=chat_id,
            kind=kind,
            seq=store.seq_counter,
            node_ids=tuple(n.id for n in changeset.nodes),
            edges_added=len(changeset.edges_added),
            edges_removed=len(changeset.edges_removed),
            persisted=persisted,
        )

    # -- history (storage) -----------------------------------------------------------------------

    def _storage(self) -> Persistence:
        storage = getattr(self.persistence, "storage", None)
        if storage is None:
            raise MemoryGraphError("STORAGE_ERROR", "no storage: this graph keeps no history")
        return storage

    async def history(self, chat_id: str, *, limit: int | None = None) -> tuple[CommitRecord, ...]:
        """The chat's commits, oldest first (`CommitRecord`: version, seq, kind, applied, ...)."""
        checked_chat_id(chat_id)
        return await self._storage().history(chat_id, limit=limit)

    async def rollback(
        self, chat_id: str, *, version: int | None = None, seq: int | None = None
    ) -> Any:
        """Give the chat its state after commit `version` (or after message `seq`) as a new
        commit; fires ``memgraph_commit`` and returns its `CommitInfo`."""
        checked_chat_id(chat_id)
        storage = self._storage()
        if self.persistence is not None and chat_id not in self._deferred:
            async with self.lock(chat_id):  # the newest commits: undone in memory, no reload
                record = await self.persistence.rollback_recent(chat_id, version=version, seq=seq)
            if record is not None:
                return await self._announce(chat_id, "rollback", record)
        return await self._replace(
            chat_id, "rollback", lambda: storage.rollback(chat_id, version=version, seq=seq)
        )

    async def import_graph(self, chat_id: str, data: Any) -> Any:
        """Replace the chat's graph by `data` (a store in the original's JSON shape, checked
        whole first: ``BAD_ARGS`` naming the field, nothing changed) as one commit anchored to
        the chat's newest message seq (`store_file.anchor_store`: chatting on never reads it
        as deleted messages); fires ``memgraph_commit``, returns its `CommitInfo`."""
        from .engine.store_file import anchor_store, store_problems
        from .engine.values import Limits

        checked_chat_id(chat_id)
        storage = self._storage()
        problems = store_problems(data, Limits.from_settings(self.settings))
        if problems:
            raise MemoryGraphError("BAD_ARGS", "; ".join(problems))
        normalised = anchor_store(
            Store.from_dict(data, schema=self.schema).to_dict(), self.message_seq(chat_id)
        )
        return await self._replace(
            chat_id, "import", lambda: storage.import_dict(chat_id, normalised)
        )

    def message_seq(self, chat_id: str) -> int:
        """The seq of the chat's newest message on the host (0 without messages or a host)."""
        chat = getattr(self.host, "chat", None)
        if chat is None:
            return 0
        messages = chat(chat_id).messages
        return int(messages[-1].seq) if messages else 0

    async def _replace(self, chat_id: str, kind: str, run: Callable[[], Any]) -> Any:
        """Run a storage-made commit under the chat's write lock; cached stores are dropped."""
        async with self.lock(chat_id):
            try:
                record = await run()
            finally:  # sessions opened from now on load the new state
                self.persistence.forget(chat_id)
                self._stores.pop(chat_id, None)
        return await self._announce(chat_id, kind, record)

    async def _announce(self, chat_id: str, kind: str, record: CommitRecord) -> CommitInfo:
        """The `CommitInfo` of a commit storage made, fired as ``memgraph_commit``."""
        commit = CommitInfo(
            version=record.version,
            applied=record.applied,
            chat_id=chat_id,
            kind=kind,
            seq=record.seq,
            node_ids=record.node_ids,
            edges_added=record.edges_added,
            edges_removed=record.edges_removed,
            persisted=True,
        )
        await self.fire_commit(chat_id, commit)
        return commit

    async def fire_commit(self, chat_id: str, commit: CommitInfo) -> None:
        """``memgraph_commit(chat_id, commit)`` on every plugin, delivered by a task in commit
        order (`Host.notify_soon`): a write never waits for its notifications (`Host.drain`
        waits for them; failures are logged and recorded, never raised)."""
        notify_hook_sync(self.host, "memgraph_commit", chat_id=chat_id, commit=commit)

    async def vector_search(self, session: Any, *, query: str, types: Any, k: int) -> Any:
        """Embedding search seam; without an embedding profile: ``NO_EMBEDDING_PROFILE``."""
        wanted = check_str_list("types", types)  # as keyword_search: a list, never a bare str
        if getattr(self.persistence, "embedder", None) is not None:  # storage's vector index
            from .engine.views import RankedView

            if not query.strip():
                return ()
            hits = await self.persistence.vector_search(
                session.chat_id, query=query, types=wanted, k=k
            )
            views = ((session.store.view(node_id), score) for node_id, score in hits)
            return tuple(
                RankedView.from_view(view, score, "vector") for view, score in views if view
            )
        raise MemoryGraphError(
            "NO_EMBEDDING_PROFILE", "no embedding profile is configured (setting embedding_profile)"
        )

    # -- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Forget stores and hubs; later `open_session` calls return None."""
        self.closed = True
        close = getattr(self.persistence, "close", None)
        if close is not None:
            try:
                close()
            except Exception:
                log.exception("memory graph: closing persistence failed")
        self._stores.clear()
        self.detach()
