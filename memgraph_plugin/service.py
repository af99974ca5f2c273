"""`MemoryGraph`: the memory graph of one host (published as ``memory-graph`` in its registry).

It caches one `Store` per chat, keeps one `InjectionHub` per chat (whose updates fire
``memgraph_injection_changed``) and opens `Session` objects, handing each what it needs once
(`SessionWiring`: hub, write lock, commit, announce, status). Loading and persisting go through
two methods, `_load_store` and `_persist`, the seam where storage plugs in (`persistence`);
without persistence, stores live in memory for the life of the service.

The plugin (`plugin.py`) makes one per host and hands it to what needs it (the turn pipeline,
the commands, the LLM plugins); `memory_graph_for(host)` is for code outside the plugin (tests,
scripts), and the plugin's own modules never call it (tests/test_import_graph.py checks).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from host.protocols import HostLike

    from .api.session import Session
    from .chats.chat_cache import PersistedChats
    from .engine.graph.store import Changeset

from .api.injection import PUBLISHED_AS, InjectionHub
from .api.session_wiring import RetrievalStatusOf, SessionWiring, no_status
from .api.write import CURATION_KINDS
from .engine.graph.store import Store
from .engine.model.results import CommitInfo
from .engine.model.schema import Schema, resolve_schema
from .engine.model.views import InjectionState, RankedView
from .errors import MemoryGraphError
from .versions.chat_versions import ChatHistory, checked_chat_id
from .versions.deferred_block import PendingCommit, block_commit_infos
from .versions.fork import ChatFork

__all__ = ["SERVICE_NAME", "MemoryGraph", "checked_chat_id", "memory_graph_for", "notify_hook"]

log = logging.getLogger(__name__)

#: The registry name the service is published under.
SERVICE_NAME = PUBLISHED_AS

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


class MemoryGraph(ChatHistory, ChatFork):
    """One host's memory graph: stores and injection hubs per chat, sessions, persistence;
    history, rollbacks and imports (`ChatHistory`), forks (`ChatFork`)."""

    def __init__(
        self,
        host: HostLike | None = None,
        *,
        persistence: PersistedChats | None = None,
        schema: Any = None,
        settings: Any = None,
        retrieval_status: Callable[..., Any] | None = None,
    ) -> None:
        """`retrieval_status`: ``(chat_id, *, data_dir, settings, window) -> RetrievalStatus``
        (the plugin hands `memgraph_plugin.recall.status.retrieval_status`); sessions answer
        ``get_retrieval_status`` with it."""
        self.host = host
        self.retrieval_status = retrieval_status
        self.persistence = persistence
        self.settings = dict(settings if settings is not None else getattr(host, "settings", {}))
        self._schema_source = schema if schema is not None else self.settings.get("schema")
        self._schema: Schema | None = None
        self._stores: dict[str, Store] = {}
        self._hubs: dict[str, InjectionHub] = {}
        self._locks: weakref.WeakKeyDictionary[Any, dict[str, asyncio.Lock]] = (
            weakref.WeakKeyDictionary()
        )
        #: chat -> the commits of its deferred block not persisted yet: (changeset, applied, kind)
        self._deferred: dict[str, list[PendingCommit]] = {}
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
            cached = getattr(self.persistence, "cached", None)
            if cached is not None and cached(chat_id) is None:  # a first open: read ahead
                store = await self._open_reading_messages(chat_id)
            else:
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

    async def _open_reading_messages(self, chat_id: str) -> Store:
        """A chat's store loaded (its own thread) while the host reads the chat's message file
        (another thread) when nothing read it yet: the chat's first turn needs both, and the
        store's columns decode outside the GIL, so the two overlap. A file that fails to read
        is left to the reader that needs it, which reports it."""
        assert self.persistence is not None
        chat_of = getattr(self.host, "chat", None)
        chat = chat_of(chat_id) if chat_of is not None else None
        if chat is None or getattr(chat, "read_yet", True):
            return (await self.persistence.open(chat_id)).store

        def read() -> None:
            try:
                chat.read_ahead()
            except Exception:  # noqa: BLE001 - the turn reading the chat reports it
                log.debug("reading chat %r's messages ahead failed", chat_id, exc_info=True)

        opened, _ = await asyncio.gather(self.persistence.open(chat_id), asyncio.to_thread(read))
        return opened.store

    def journal_version(self, chat_id: str, store: Store) -> int:
        """The version of the chat's newest commit as this store knows it (the journal version
        with storage, the store's own version in memory): what a write result reports."""
        cached = getattr(self.persistence, "cached", None)
        chat = cached(chat_id) if cached is not None else None
        if chat is not None and chat.store is store:
            return int(chat.version)
        return int(store.version)

    async def _persist(
        self,
        chat_id: str,
        store: Store,
        changeset: Changeset,
        *,
        applied: int,
        kind: str,
        journal_kind: str = "write",
    ) -> tuple[int, bool]:
        """Make a changeset durable; returns ``(commit version, persisted)``.

        In memory the version is the store's; storage overrides this seam.
        """
        if self.persistence is not None:  # storage: one journal row, durable before returning
            try:
                record = await self.persistence.persist(
                    chat_id, changeset, applied=applied, store=store, kind=journal_kind
                )
            except BaseException:
                self._stores.pop(chat_id, None)  # holds an unpersisted change: reload next time
                raise
            return record.version, True
        return store.version, False

    # -- sessions --------------------------------------------------------------------------------

    async def open_session(self, ctx: Any) -> Session | None:
        """A session on ctx's chat; None without a chat target or when the store fails to load."""
        if ctx is None or self.closed:
            return None
        chat_id = getattr(ctx, "chat_id", None)
        if chat_id is None or chat_id == "":  # no chat target
            return None
        return await self.session_for(ctx, checked_chat_id(chat_id))

    async def session_for(self, ctx: Any, chat_id: str) -> Session | None:
        """`open_session` for a chat id already checked: the host's context (`get_context`
        checked it, as the turn pipeline's are) or the public `open_session`. No check again."""
        from .api.session import Session

        if self.closed:
            return None
        try:
            store = await self._load_store(chat_id)
        except Exception as exc:
            log.warning("memory graph: the store of chat %r failed to load: %s", chat_id, exc)
            return None
        if store is None:
            log.warning("memory graph: no store for chat %r", chat_id)
            return None
        return Session(ctx, chat_id, store, self._wiring(chat_id, store))

    def _wiring(self, chat_id: str, store: Store) -> SessionWiring:
        """What a session of `chat_id` on `store` uses from this service, bound once."""

        async def commit(store: Store, result: Any, kind: str) -> CommitInfo | None:
            journal = "edit" if kind in CURATION_KINDS else "write"  # `history` names them
            return await self.commit(chat_id, store, result, kind, journal_kind=journal)

        async def announce(commit: CommitInfo) -> None:
            await self.fire_commit(chat_id, commit)

        return SessionWiring(
            hub=self.hub(chat_id),
            lock=self.lock(chat_id),
            commit=commit,
            announce=announce,
            version=lambda: self.journal_version(chat_id, store),
            vector_search=self.vector_search,
            status=self._status_of(chat_id),
        )

    def _status_of(self, chat_id: str) -> RetrievalStatusOf:
        """The chat's retrieval status as a function of the window (see `retrieval_status`)."""
        status = self.retrieval_status
        if status is None:
            return no_status
        host = self.host

        def of(window: int) -> Any:
            return status(
                chat_id,
                data_dir=getattr(host, "data_dir", "."),
                settings=getattr(host, "settings", None) or {},
                window=window,
            )

        return of

    @contextlib.asynccontextmanager
    async def deferred_commits(self, chat_id: str) -> AsyncIterator[None]:
        """Writes to `chat_id` inside the block change the store at once but are persisted (and
        announced) when it ends, each its own commit as in a live chat, in ONE journal append:
        an ingest pays one append and one embedding call per block, and its history still has
        one version per write (a rollback to after message N lands after message N)."""
        if chat_id in self._deferred:
            yield
            return
        self._deferred[chat_id] = []
        try:
            yield
        finally:
            try:
                await self._flush_deferred(chat_id)
            finally:
                self._deferred.pop(chat_id, None)

    async def _flush_deferred(self, chat_id: str) -> None:
        """Persist the deferred block's writes so far (at its end, or before a rollback); the
        next load pins the store again while the block goes on."""
        pending = self._deferred.get(chat_id)
        store = self._pinned.pop(chat_id, None)
        if pending is None or store is None:
            return
        items, pending[:] = list(pending), []
        async with self.lock(chat_id):
            if (rest := store.take_changeset()) is not None:  # written without a commit call
                items.append((rest, 0, "write"))
            commits = await self._persist_block(chat_id, store, items)
        for commit in commits:
            await self.fire_commit(chat_id, commit)

    async def _persist_block(
        self, chat_id: str, store: Store, items: list[PendingCommit]
    ) -> list[CommitInfo]:
        """One commit per item in one append (rows of kind ``write``, as a live write's)."""
        if not items:
            return []
        if self.persistence is not None:
            try:
                rows = [(changeset, applied, "write") for changeset, applied, _ in items]
                records = await self.persistence.persist_block(chat_id, rows, store=store)
            except BaseException:
                self._stores.pop(chat_id, None)
                raise
            versions = [(r.version, r.seq, True) for r in records]
        else:
            versions = [(c.version, c.seq_counter, False) for c, _, _ in items]
        return block_commit_infos(chat_id, items, versions)

    async def commit(
        self, chat_id: str, store: Store, result: Any, kind: str, *, journal_kind: str = "write"
    ) -> CommitInfo | None:
        """Persist what a write changed; returns the `CommitInfo` (None: nothing to commit, or
        the chat's commits are deferred: see `deferred_commits`). `journal_kind` is the kind
        `history` shows (``write``; the explorer's corrections are ``edit``)."""
        applied = len(getattr(result, "applied", ()) or ())
        if chat_id in self._deferred:
            changeset = store.take_changeset()
            if changeset is not None:
                self._deferred[chat_id].append((changeset, applied, kind))
            return None
        changeset = store.take_changeset()
        if changeset is None:
            return None
        version, persisted = await self._persist(
            chat_id, store, changeset, applied=applied, kind=kind, journal_kind=journal_kind
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

    async def fire_commit(self, chat_id: str, commit: CommitInfo) -> None:
        """``memgraph_commit(chat_id, commit)`` on every plugin, delivered by a task in commit
        order (`Host.notify_soon`): a write never waits for its notifications (`Host.drain`
        waits for them; failures are logged and recorded, never raised)."""
        notify_hook_sync(self.host, "memgraph_commit", chat_id=chat_id, commit=commit)

    async def vector_search(
        self, session: Any, *, query: str, types: list[str] | None, k: int
    ) -> tuple[Any, ...]:
        """Storage's vector index of the session's chat, for arguments the session checked (a
        non-blank query); without an embedding profile: ``NO_EMBEDDING_PROFILE``."""
        if getattr(self.persistence, "embedder", None) is None:
            raise MemoryGraphError(
                "NO_EMBEDDING_PROFILE",
                "no embedding profile is configured (setting embedding_profile)",
            )
        hits = await self.persistence.vector_search(session.chat_id, query=query, types=types, k=k)
        views = ((session.store.view(node_id), score) for node_id, score in hits)
        return tuple(RankedView.from_view(view, score, "vector") for view, score in views if view)

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
