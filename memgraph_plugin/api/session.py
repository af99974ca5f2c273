"""`Session`: one chat's memory graph behind the session facade (``open_session(ctx)``).

A session is the chat's `ReadApi` and `WriteApi` in one object: every read and write is the
API's own method (one signature, one docstring). What differs is where a write lands: each change
of the store and its commit run under the chat's write lock (`WriteApi._writing`), and a write
that changed the store is committed (persisted when storage is on) and then
``memgraph_commit(chat_id, commit)`` fires, outside the chat's write lock, so a plugin reacting
to a commit may write again. The lock, the commit and the announcement are the ones the service
handed the session when it opened (`SessionWiring`); the session holds no service. Its vector
search asks storage's vector index of the chat.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from ..engine.model.results import CommitInfo
from ..engine.model.views import RankedView
from ..errors import check_int
from .read import ReadApi
from .session_wiring import SessionWiring
from .write import WriteApi

__all__ = ["Session"]


class Session(ReadApi, WriteApi):
    """The read API's layers A-D and the write API (the session facade's 16 methods, a
    person's corrections `pin_node`, `unpin_node`, `restore_node`, `merge_nodes`, and the
    lower-level reads) on one chat, plus `get_retrieval_status`."""

    def __init__(self, ctx: Any, chat_id: str, store: Any, wiring: SessionWiring) -> None:
        ReadApi.__init__(self, store, ctx, schema=store.schema, injection_hub=wiring.hub)
        WriteApi.__init__(self, store, ctx, on_commit=self._record_commit, version=wiring.version)
        self._wiring = wiring
        self.ctx = ctx
        self.chat_id = chat_id
        self._pending: list[CommitInfo] = []
        self.last_commit: CommitInfo | None = None

    # -- commit path ---------------------------------------------------------------------------

    async def _record_commit(self, store: Any, result: Any, kind: str) -> CommitInfo | None:
        commit = await self._wiring.commit(store, result, kind)
        if commit is not None:
            self._pending.append(commit)
        return commit

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[None]:
        """The change and its commit under the chat's write lock; then, the lock let go, one
        ``memgraph_commit`` per commit made (none when the write raised)."""
        async with self._wiring.lock:
            try:
                yield
            finally:
                commits, self._pending = self._pending, []
        for commit in commits:
            self.last_commit = commit
            await self._wiring.announce(commit)

    # -- the session's own reads -----------------------------------------------------------------

    async def _nearest(self, query: str, types: list[str] | None, k: int) -> tuple[RankedView, ...]:
        """The `k` nodes nearest `query` in storage's vector index of this chat."""
        return await self._wiring.vector_search(self, query=query, types=types, k=k)

    def get_retrieval_status(self, *, window: int = 100) -> Any:
        """The chat's hybrid-retrieval status (`RetrievalStatus`): rollout mode, graph-expansion
        flag, and the fallback reasons of its newest ``window`` recalls with their rates."""
        check_int("window", window, minimum=1)
        return self._wiring.status(window)
