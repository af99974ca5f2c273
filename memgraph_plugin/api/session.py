"""`Session`: one chat's memory graph behind the session facade (``open_session(ctx)``).

Reads are plain methods delegating to the `ReadApi` (`SessionReads`); writes are coroutines
delegating to the `WriteApi` under the chat's write lock. Each is written out with its API
method's signature and docstring (``tests/engine/test_write_api_session.py`` checks they match).
A write that changed the store is committed (persisted when storage is on) and then
``memgraph_commit(chat_id, commit)`` fires, outside the chat's write lock, so a plugin reacting
to a commit may write again. The lock, the commit and the announcement are the ones the service
handed the session when it opened (`SessionWiring`); the session holds no service.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from ..engine.model.results import (
    BatchResult,
    CommitInfo,
    CompactResult,
    CreateResult,
    DeleteLinksResult,
    DeleteResult,
    EditResult,
    UpsertLinksResult,
)
from ..errors import MemoryGraphError, check_int, check_str, check_str_list
from .checked_calls import checked_call
from .read import ReadApi
from .session_reads import SessionReads
from .session_wiring import SessionWiring
from .write import WriteApi

__all__ = ["Session"]


class Session(SessionReads):
    """The 16 methods of the session facade, a person's corrections (`pin_node`,
    `unpin_node`, `restore_node`, `merge_nodes`), plus the read API's lower-level reads (those
    in `SessionReads`)."""

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

    # -- writes: each the `WriteApi` method of the same name, under the chat's write lock ------

    @checked_call
    async def create_node(
        self,
        *,
        type: str,
        title: str | None = None,
        fields: Mapping[str, Any] | None = None,
        links: Iterable[Mapping[str, Any]] | None = None,
        ref: str | None = None,
    ) -> CreateResult:
        """Create a node (or merge into the latest-only node of that name); raises OP_FAILED."""
        return await self._writing(
            lambda: self._write.create_node(
                type=type, title=title, fields=fields, links=links, ref=ref
            )
        )

    @checked_call
    async def edit_node(
        self,
        *,
        id: str,
        set_fields: Mapping[str, Any] | None = None,
        clear_fields: Iterable[str] | None = None,
        title: str | None = None,
    ) -> EditResult:
        """Patch a node; `ok` False (no throw) when it is missing, archived or the edit skipped."""
        return await self._writing(
            lambda: self._write.edit_node(
                id=id, set_fields=set_fields, clear_fields=clear_fields, title=title
            )
        )

    @checked_call
    async def delete_node(self, *, id: str) -> DeleteResult:
        """Archive a node (soft delete: edges and children stay); `ok` False when not active."""
        return await self._writing(lambda: self._write.delete_node(id=id))

    @checked_call
    async def upsert_links(
        self, *, source: Mapping[str, str], links: Iterable[Mapping[str, Any]]
    ) -> UpsertLinksResult:
        """Add relation edges from `source`; `applied` counts the edges actually added."""
        return await self._writing(lambda: self._write.upsert_links(source=source, links=links))

    @checked_call
    async def delete_links(
        self,
        *,
        source: Mapping[str, str],
        target: Mapping[str, str],
        relation: str,
        direction: str = "bidirectional",
    ) -> DeleteLinksResult:
        """Remove the `relation` edges between source and target; `removed` counts them."""
        return await self._writing(
            lambda: self._write.delete_links(
                source=source, target=target, relation=relation, direction=direction
            )
        )

    @checked_call
    async def compact_nodes(
        self,
        *,
        type: str,
        child_ids: Iterable[str],
        summary: str,
        fields: Mapping[str, Any] | None = None,
    ) -> CompactResult:
        """Roll `child_ids` up into a new rollup node of `type` (BAD_ARGS / CHILD_* errors)."""
        return await self._writing(
            lambda: self._write.compact_nodes(
                type=type, child_ids=child_ids, summary=summary, fields=fields
            )
        )

    @checked_call
    async def apply_extraction_batch(
        self, *, ops: Iterable[Any], max_seq: int | None = None
    ) -> BatchResult:
        """Apply ops as one batch (refs resolve inside it; failures land in `rejected`)."""
        return await self._writing(
            lambda: self._write.apply_extraction_batch(ops=ops, max_seq=max_seq)
        )

    async def compact_groups(
        self, *, type: str, groups: Iterable[tuple[Any, ...]]
    ) -> tuple[CompactResult | MemoryGraphError, ...]:
        """Roll each `(child_ids, summary)` or `(child_ids, summary, fields)` group up as
        `compact_nodes` does (all or nothing per group), in one commit: a catch-up over
        thousands of groups (a large imported graph) is one journal row, not one per group. One
        outcome per group, in order: its result, or the error that left it out
        (CHILD_HAS_PARENT when someone compacted meanwhile, ...)."""
        return await self._writing(lambda: self._write.compact_groups(type=type, groups=groups))

    @checked_call
    async def pin_node(self, *, id: str) -> EditResult:
        """Pin an active node: recall injects it every turn (within the budget, first)."""
        return await self._writing(lambda: self._write.pin_node(id=id))

    @checked_call
    async def unpin_node(self, *, id: str) -> EditResult:
        """Unpin a node: recall picks it only when it is relevant again."""
        return await self._writing(lambda: self._write.unpin_node(id=id))

    @checked_call
    async def restore_node(self, *, id: str) -> EditResult:
        """Restore an archived node (its edges and children stayed); `ok` False when active."""
        return await self._writing(lambda: self._write.restore_node(id=id))

    @checked_call
    async def merge_nodes(self, *, keep: str, absorb: str) -> EditResult:
        """Merge `absorb` into `keep` (same type): edges move, names become aliases, `absorb`
        is archived (superseded by `keep`); `ok` False with the rejection otherwise."""
        return await self._writing(lambda: self._write.merge_nodes(keep=keep, absorb=absorb))

    # -- the session's own reads -----------------------------------------------------------------

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
