"""`Session`: one chat's memory graph behind the session facade (``open_session(ctx)``).

Reads are plain methods delegating to the `ReadApi`; writes are coroutines delegating to the
`WriteApi`. A write that changed the store is committed (persisted when storage is on) and then
``memgraph_commit(chat_id, commit)`` fires, outside the chat's write lock, so a plugin reacting
to a commit may write again. The lock, the commit and the announcement are the ones the service
handed the session when it opened (`SessionWiring`); the session holds no service.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..engine.model.results import CommitInfo
from ..errors import check_int, check_str, check_str_list
from .read import ReadApi
from .session_wiring import SessionWiring
from .write import WriteApi

__all__ = ["Session"]

#: Reads the session hands to its `ReadApi` unchanged (the session table, then the lower level).
READ_METHODS: tuple[str, ...] = (
    "list_visible_candidates",
    "get_edge_summary",
    "get_node_brief",
    "get_node_briefs",
    "expand_from_seeds",
    "get_schema",
    "keyword_search",
    "find_by_name",
    "compaction_candidates",
    "list_nodes",
    "get_node",
    "list_edges",
    "get_neighbors",
    "get_ancestor",
    "get_descendants",
    "get_nearest_visible_ancestor",
    "project_edges",
    "get_node_exposure",
    "on_injection_changed",
)
#: Writes the session runs through its `WriteApi` under the chat's write lock.
WRITE_METHODS: tuple[str, ...] = (
    "create_node",
    "edit_node",
    "delete_node",
    "upsert_links",
    "delete_links",
    "compact_nodes",
    "apply_extraction_batch",
    "compact_groups",
)


def _delegate_read(name: str) -> Callable[..., Any]:
    """A session method that is the `ReadApi` method `name` (same signature and docstring)."""

    @functools.wraps(getattr(ReadApi, name))
    def method(self: Session, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._read, name)(*args, **kwargs)

    return method


def _delegate_write(name: str) -> Callable[..., Awaitable[Any]]:
    """A session coroutine that runs the `WriteApi` method `name` under the chat's write lock
    and fires the commits it produced (same signature and docstring)."""

    @functools.wraps(getattr(WriteApi, name))
    async def method(self: Session, *args: Any, **kwargs: Any) -> Any:
        return await self._writing(lambda: getattr(self._write, name)(*args, **kwargs))

    return method


class Session:
    """The 16 methods of the session facade, plus the read API's lower-level reads."""

    def __init__(self, ctx: Any, chat_id: str, store: Any, wiring: SessionWiring) -> None:
        self._wiring = wiring
        self.ctx = ctx
        self.chat_id = chat_id
        self.store = store
        self._pending: list[CommitInfo] = []
        self._hub = wiring.hub
        self._read = ReadApi(store, ctx, schema=store.schema, injection_hub=self._hub)
        self._write = WriteApi(store, ctx, on_commit=self._on_commit, version=wiring.version)
        self.last_commit: CommitInfo | None = None

    def read_api(self) -> ReadApi:
        """The `ReadApi` this session reads through."""
        return self._read

    def write_api(self) -> WriteApi:
        """The `WriteApi` this session writes through (its commits persist and fire hooks)."""
        return self._write

    # -- commit path ---------------------------------------------------------------------------

    async def _on_commit(self, store: Any, result: Any, kind: str) -> CommitInfo | None:
        commit = await self._wiring.commit(store, result, kind)
        if commit is not None:
            self._pending.append(commit)
        return commit

    async def _writing(self, call: Callable[[], Awaitable[Any]]) -> Any:
        async with self._wiring.lock:
            try:
                result = await call()
            finally:
                commits, self._pending = self._pending, []
        for commit in commits:
            self.last_commit = commit
            await self._wiring.announce(commit)
        return result

    # -- reads and writes (delegated; see READ_METHODS, WRITE_METHODS) ------------------------

    async def vector_search(
        self, *, query: str, types: Iterable[str] | None = None, k: int = 20
    ) -> tuple[Any, ...]:
        """Embedding search; raises ``NO_EMBEDDING_PROFILE`` when no profile is configured."""
        check_str("query", query)
        wanted = check_str_list("types", types)  # a bare string is refused, as keyword_search does
        check_int("k", k, minimum=1)
        if not query.strip():  # the docs: an empty query resolves to [] (profile or not)
            return ()
        return await self._wiring.vector_search(self, query=query, types=wanted, k=k)

    def get_retrieval_status(self, *, window: int = 100) -> Any:
        """The chat's hybrid-retrieval status (`RetrievalStatus`): rollout mode, graph-expansion
        flag, and the fallback reasons of its newest ``window`` recalls with their rates."""
        check_int("window", window, minimum=1)
        return self._wiring.status(window)

    def get_injection_state(self) -> Any:
        """The chat's current frozen `InjectionState`."""
        return self._hub.state


for _name in READ_METHODS:
    setattr(Session, _name, _delegate_read(_name))
for _name in WRITE_METHODS:
    setattr(Session, _name, _delegate_write(_name))
del _name
