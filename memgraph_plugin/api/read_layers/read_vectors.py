"""Layer C's vector search over a bare store (`get_read_api(store, ctx)`): an exact index of the
store's nodes, embedded with the context's profile on the first search and kept in step through
the store's change log, so later searches embed only what was written since.

A `Session` searches storage's vector index of its chat instead (its `_nearest`); both answer the
same ranked views for the same nodes and profile.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Mapping
from typing import Any

import attrs

from ...embedding.embedder import NodeEmbedder
from ...embedding.index import VectorIndex
from ...embedding.registry import profile_name, resolve_profile
from ...engine.graph.store import Store
from ...engine.model.views import RankedView
from ...errors import MemoryGraphError, check_int, check_str, check_str_list
from .read_base import ReadBase, lower_set


@attrs.define
class _StoreVectors:
    """One store's vectors under one profile, and how far into its change log they reach."""

    embedder: NodeEmbedder
    index: VectorIndex
    position: int
    lock: threading.Lock = attrs.field(factory=threading.Lock)


#: store -> its vectors, per profile name (a store dropped by its owner drops its vectors)
_VECTORS: weakref.WeakKeyDictionary[Store, dict[str, _StoreVectors]] = weakref.WeakKeyDictionary()
_VECTORS_LOCK = threading.Lock()


def _embedder_for(ctx: Any, schema: Any) -> NodeEmbedder | None:
    """The context's embedding profile (``embedding_profile``; the default when unset), None
    when it is set to none."""
    settings = getattr(ctx, "settings", None)
    name = profile_name(settings if isinstance(settings, Mapping) else {})
    pm = getattr(getattr(ctx, "host", None), "pm", None)
    profile = resolve_profile(name, pm)
    return None if profile is None else NodeEmbedder(profile, schema)


def _bring_up_to_date(store: Store, vectors: _StoreVectors) -> None:
    """Embed what the store wrote since the index was last brought up to date (all of it the
    first time, or when the change log no longer reaches back)."""
    changes = store.changes_since(vectors.position)
    position = store.change_position
    if changes is None:
        vectors.index = vectors.embedder.new_index()
        ids = list(store.node_ids())
    else:
        ids = list(dict.fromkeys(node_id for node_id, _kind in changes))
    nodes = [node for node_id in ids if (node := store.node(node_id)) is not None]
    gone = [node_id for node_id in ids if store.node(node_id) is None]
    if gone:
        vectors.index.remove(gone)
    if nodes:  # archived and diagnostic nodes are kept, flagged unsearchable (as storage does)
        vectors.embedder.apply(vectors.index, nodes, vectors.embedder(nodes))
    vectors.position = position


def _vectors_of(store: Store, embedder: NodeEmbedder) -> _StoreVectors:
    with _VECTORS_LOCK:
        per_profile = _VECTORS.setdefault(store, {})
        vectors = per_profile.get(embedder.name)
        if vectors is None:
            vectors = _StoreVectors(embedder, embedder.new_index(), -1)
            per_profile[embedder.name] = vectors
    return vectors


class VectorSearch(ReadBase):
    """``vector_search`` of the read API (mixed into `ReadApi`)."""

    async def vector_search(
        self, *, query: str, types: list[str] | None = None, k: int = 20
    ) -> tuple[RankedView, ...]:
        """Embedding search (cosine, best first) over the store's active nodes with the
        context's profile (a `Session` searches storage's vector index of its chat); raises
        ``NO_EMBEDDING_PROFILE`` when no profile is configured. A blank query: ()."""
        check_str("query", query)
        wanted = check_str_list("types", types)  # a bare string is refused, as keyword_search does
        check_int("k", k, minimum=1)
        if not query.strip():  # the docs: an empty query resolves to [] (profile or not)
            return ()
        return await self._nearest(query, wanted, k)

    async def _nearest(self, query: str, types: list[str] | None, k: int) -> tuple[RankedView, ...]:
        """The `k` nodes nearest `query` in the store's own exact index (see the module)."""
        embedder = _embedder_for(self._ctx, self.schema)
        if embedder is None:
            raise MemoryGraphError(
                "NO_EMBEDDING_PROFILE",
                "no embedding profile is configured (setting embedding_profile)",
            )
        store = self._store
        vectors = _vectors_of(store, embedder)
        tset = lower_set(types)

        def search() -> list[tuple[str, float]]:
            with vectors.lock:
                _bring_up_to_date(store, vectors)
                return vectors.index.search(embedder.embed_query(query), k=k, types=tset)

        hits = await asyncio.to_thread(search)
        view = store.view
        return tuple(
            RankedView.from_view(v, score, "vector")
            for node_id, score in hits
            if (v := view(node_id)) is not None
        )
