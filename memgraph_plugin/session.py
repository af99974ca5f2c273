"""`Session`: one chat's memory graph behind the session facade (``open_session(ctx)``).

Reads are plain methods delegating to the `ReadApi`; writes are coroutines delegating to the
`WriteApi`. A write that changed the store is committed by the service (persisted when storage
is on) and then ``memgraph_commit(chat_id, commit)`` fires, outside the chat's write lock, so a
plugin reacting to a commit may write again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from .errors import check_int, check_str
from .results import (
    BatchResult,
    CommitInfo,
    CompactResult,
    CreateResult,
    DeleteLinksResult,
    DeleteResult,
    EditResult,
    UpsertLinksResult,
)
from .write_api import WriteApi

__all__ = ["Session"]


class Session:
    """The 16 methods of the session facade, plus the read API's lower-level reads."""

    def __init__(self, service: Any, ctx: Any, chat_id: str, store: Any) -> None:
        from .read_api import ReadApi

        self._service = service
        self.ctx = ctx
        self.chat_id = chat_id
        self.store = store
        self._pending: list[CommitInfo] = []
        self._hub = service.hub(chat_id)
        self._read = ReadApi(store, ctx, schema=store.schema, injection_hub=self._hub)
        self._write = WriteApi(store, ctx, on_commit=self._on_commit)
        self.last_commit: CommitInfo | None = None

    def read_api(self) -> Any:
        """The `ReadApi` this session reads through."""
        return self._read

    def write_api(self) -> WriteApi:
        """The `WriteApi` this session writes through (its commits persist and fire hooks)."""
        return self._write

    # -- commit path ---------------------------------------------------------------------------

    async def _on_commit(self, store: Any, result: Any, kind: str) -> None:
        commit = await self._service.commit(self.chat_id, store, result, kind)
        if commit is not None:
            self._pending.append(commit)

    async def _writing(self, call: Callable[[], Awaitable[Any]]) -> Any:
        async with self._service.lock(self.chat_id):
            try:
                result = await call()
            finally:
                commits, self._pending = self._pending, []
        for commit in commits:
            self.last_commit = commit
            await self._service.fire_commit(self.chat_id, commit)
        return result

    # -- reads (session table) ---------------------------------------------------------------

    def list_visible_candidates(
        self,
        *,
        types: Iterable[str] | None = None,
        seq_window: Any = None,
        exclude_recent_messages: int = 0,
        limit: int | None = None,
    ) -> tuple[Any, ...]:
        """The candidate pool the recall router sees (recency order, filters applied)."""
        return self._read.list_visible_candidates(
            types=types,
            seq_window=seq_window,
            exclude_recent_messages=exclude_recent_messages,
            limit=limit,
        )

    def get_edge_summary(
        self,
        id: str,
        *,
        visible_node_ids: Iterable[str] | None = None,
        edge_types: Iterable[str] | None = None,
        limit: int = 8,
    ) -> Any:
        """Degree, relation counts and sample neighbours of a node over projected edges."""
        return self._read.get_edge_summary(
            id, visible_node_ids=visible_node_ids, edge_types=edge_types, limit=limit
        )

    def get_node_brief(
        self,
        id: str,
        *,
        visible_node_ids: Iterable[str] | None = None,
        include_edge_summary: bool = True,
        edge_summary_limit: int = 8,
    ) -> Any:
        """The router's brief of one node (None when missing)."""
        return self._read.get_node_brief(
            id,
            visible_node_ids=visible_node_ids,
            include_edge_summary=include_edge_summary,
            edge_summary_limit=edge_summary_limit,
        )

    def get_node_briefs(
        self,
        ids: Iterable[str],
        *,
        visible_node_ids: Iterable[str] | None = None,
        include_edge_summary: bool = True,
        edge_summary_limit: int = 8,
    ) -> tuple[Any, ...]:
        """`get_node_brief` for many ids (the candidateRows block), sharing work between them."""
        return self._read.get_node_briefs(
            ids,
            visible_node_ids=visible_node_ids,
            include_edge_summary=include_edge_summary,
            edge_summary_limit=edge_summary_limit,
        )

    def expand_from_seeds(
        self,
        seed_ids: Iterable[str],
        *,
        hops: int = 1,
        edge_types: Iterable[str] | None = None,
        project_to: str = "visible",
        include_children: bool = True,
        exclude_internal: bool = False,
    ) -> tuple[Any, ...]:
        """Breadth-first expansion of a small seed set."""
        return self._read.expand_from_seeds(
            seed_ids,
            hops=hops,
            edge_types=edge_types,
            project_to=project_to,
            include_children=include_children,
            exclude_internal=exclude_internal,
        )

    def get_schema(self) -> Any:
        """The active node-type schema as a `SchemaView`."""
        return self._read.get_schema()

    def keyword_search(
        self, *, query: str, types: Iterable[str] | None = None, k: int = 20
    ) -> tuple[Any, ...]:
        """Token-overlap ranking over the candidate pool."""
        return self._read.keyword_search(query=query, types=types, k=k)

    async def vector_search(
        self, *, query: str, types: Iterable[str] | None = None, k: int = 20
    ) -> tuple[Any, ...]:
        """Embedding search; raises ``NO_EMBEDDING_PROFILE`` when no profile is configured."""
        check_str("query", query)
        check_int("k", k, minimum=1)
        return await self._service.vector_search(self, query=query, types=types, k=k)

    def find_by_name(self, *, query: str, types: Iterable[str] | None = None) -> Any:
        """Exact / substring title and primary-key match (`.matches`)."""
        return self._read.find_by_name(query=query, types=types)

    def compaction_candidates(self, *, type: str, depth: int = 0) -> Any:
        """Groups of nodes ready for a rollup (`.groups`)."""
        return self._read.compaction_candidates(type=type, depth=depth)

    # -- reads (lower level, from the read API) --------------------------------------------------

    def list_nodes(
        self,
        *,
        types: Iterable[str] | None = None,
        levels: Iterable[str] | None = None,
        active_only: bool = True,
        seq_range: Any = None,
    ) -> tuple[Any, ...]:
        """Nodes in timeline order."""
        return self._read.list_nodes(
            types=types, levels=levels, active_only=active_only, seq_range=seq_range
        )

    def get_node(self, id: str) -> Any:
        """One node's view, or None."""
        return self._read.get_node(id)

    def list_edges(
        self,
        *,
        source: str | None = None,
        target: str | None = None,
        types: Iterable[str] | None = None,
        exclude_internal: bool = False,
    ) -> tuple[Any, ...]:
        """Raw edges, filtered."""
        return self._read.list_edges(
            source=source, target=target, types=types, exclude_internal=exclude_internal
        )

    def get_neighbors(
        self,
        id: str,
        *,
        edge_types: Iterable[str] | None = None,
        direction: str = "both",
        project_to: str = "raw",
    ) -> tuple[Any, ...]:
        """Neighbours of a node with the edge type and direction."""
        return self._read.get_neighbors(
            id, edge_types=edge_types, direction=direction, project_to=project_to
        )

    def get_ancestor(self, id: str, *, active_only: bool = True, predicate: Any = None) -> Any:
        """The top-most ancestor (or the first matching `predicate`)."""
        return self._read.get_ancestor(id, active_only=active_only, predicate=predicate)

    def get_descendants(
        self, id: str, *, active_only: bool = True, max_depth: int | None = None
    ) -> tuple[Any, ...]:
        """Every descendant (None depth: no limit)."""
        return self._read.get_descendants(id, active_only=active_only, max_depth=max_depth)

    def get_nearest_visible_ancestor(self, id: str, *, visible_node_ids: Iterable[str]) -> Any:
        """The first id up the parent chain that is in the visible set."""
        return self._read.get_nearest_visible_ancestor(id, visible_node_ids=visible_node_ids)

    def project_edges(
        self,
        *,
        visible_node_ids: Iterable[str],
        edge_types: Iterable[str] | None = None,
        exclude_internal: bool = True,
    ) -> tuple[Any, ...]:
        """Edges lifted to visible ancestors, merged with a weight."""
        return self._read.project_edges(
            visible_node_ids=visible_node_ids,
            edge_types=edge_types,
            exclude_internal=exclude_internal,
        )

    def get_node_exposure(self, id: str) -> Any:
        """``"high_only"``, ``"full"`` or None."""
        return self._read.get_node_exposure(id)

    def get_injection_state(self) -> Any:
        """The chat's current frozen `InjectionState`."""
        return self._hub.state

    def on_injection_changed(self, callback: Callable[[Any], Any]) -> Callable[[], None]:
        """Subscribe to the chat's injection updates; returns an idempotent unsubscribe."""
        return self._read.on_injection_changed(callback)

    # -- writes ----------------------------------------------------------------------------------

    async def create_node(
        self,
        *,
        type: str,
        title: str | None = None,
        fields: Mapping[str, Any] | None = None,
        links: Iterable[Mapping[str, Any]] | None = None,
        ref: str | None = None,
    ) -> CreateResult:
        """Create a node (latest-only types merge by name); raises OP_FAILED on rejection."""
        return await self._writing(
            lambda: self._write.create_node(
                type=type, title=title, fields=fields, links=links, ref=ref
            )
        )

    async def edit_node(
        self,
        *,
        id: str,
        set_fields: Mapping[str, Any] | None = None,
        clear_fields: Iterable[str] | None = None,
        title: str | None = None,
    ) -> EditResult:
        """Patch a node; `ok` False when it is missing or archived."""
        return await self._writing(
            lambda: self._write.edit_node(
                id=id, set_fields=set_fields, clear_fields=clear_fields, title=title
            )
        )

    async def delete_node(self, *, id: str) -> DeleteResult:
        """Archive a node (soft delete)."""
        return await self._writing(lambda: self._write.delete_node(id=id))

    async def upsert_links(
        self, *, source: Mapping[str, str], links: Iterable[Mapping[str, Any]]
    ) -> UpsertLinksResult:
        """Add relation edges; `applied` counts edges actually added."""
        return await self._writing(lambda: self._write.upsert_links(source=source, links=links))

    async def delete_links(
        self,
        *,
        source: Mapping[str, str],
        target: Mapping[str, str],
        relation: str,
        direction: str = "bidirectional",
    ) -> DeleteLinksResult:
        """Remove relation edges; `removed` counts them."""
        return await self._writing(
            lambda: self._write.delete_links(
                source=source, target=target, relation=relation, direction=direction
            )
        )

    async def compact_nodes(
        self,
        *,
        type: str,
        child_ids: Iterable[str],
        summary: str,
        fields: Mapping[str, Any] | None = None,
    ) -> CompactResult:
        """Roll children up into a new rollup node."""
        return await self._writing(
            lambda: self._write.compact_nodes(
                type=type, child_ids=child_ids, summary=summary, fields=fields
            )
        )

    async def apply_extraction_batch(
        self, *, ops: Iterable[Any], max_seq: int | None = None
    ) -> BatchResult:
        """Apply ops as one batch (one rollback / persist boundary)."""
        return await self._writing(
            lambda: self._write.apply_extraction_batch(ops=ops, max_seq=max_seq)
        )
