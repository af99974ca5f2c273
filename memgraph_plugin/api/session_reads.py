"""The read half of the `Session` facade: each read is the `ReadApi` method of the same name
(signature and docstring), run on the session's `ReadApi`.

Written out rather than generated, so a reader and a static tool can follow every method;
``tests/engine/test_write_api_session.py`` checks that each one matches its `ReadApi` method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine.model.views import (
        CompactionCandidates,
        EdgeSummaryView,
        EdgeView,
        FindResult,
        InjectionState,
        NeighborView,
        NodeBriefView,
        NodeView,
        RankedView,
        SchemaView,
    )
    from .read import ReadApi
    from .read_layers.read_base import Range

__all__ = ["SessionReads"]


class SessionReads:
    """The session's reads (the read API's layers A-D but `get_injection_state`, which the
    session answers from the chat's injection hub itself)."""

    _read: ReadApi

    def list_visible_candidates(
        self,
        *,
        types: list[str] | None = None,
        seq_window: Range | None = None,
        exclude_recent_messages: int = 0,
        limit: int | None = None,
    ) -> tuple[NodeView, ...]:
        """The router's candidate pool in recency order (seq_to desc, depth desc, id).

        The recent window (nodes with ``seq_to >= seq_counter - N + 1``) goes first, then the
        `types` (case-insensitive) and inclusive `seq_window` filters, then `limit`.
        """
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
        edge_types: list[str] | None = None,
        limit: int = 8,
    ) -> EdgeSummaryView:
        """Degree, per-(relation, direction) counts and up to `limit` neighbours, over the
        projected edges touching `id` (internal ones included). Unknown ids: a zero summary.

        The visible set defaults to the injection state's `visible_ids`, and to the candidate
        pool while that is empty. A node outside the visible set is no projected endpoint, so
        its summary is zero too.
        """
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
    ) -> NodeBriefView | None:
        """One candidateRows row; None for a missing or archived node.

        `summary` is the node's ``summary`` field, else its row values as ``column: value``
        text, else its title. `key_values` projects the primary-key columns, `row_values` the
        other table columns (only columns that have a value). `child_count` counts active
        children. `exposure` follows `get_node_exposure` (the docs' rule: semantic-level nodes
        of hierarchical types are "high_only", so every semantic event, leaf or rollup; the
        field projection itself is not gated, the caller decides what to render).
        """
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
    ) -> tuple[NodeBriefView | None, ...]:
        """`get_node_brief` for many ids, sharing one ancestor memo (the candidateRows block)."""
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
        edge_types: list[str] | None = None,
        project_to: str | list[str] = "visible",
        include_children: bool = True,
        exclude_internal: bool = False,
    ) -> tuple[NodeView, ...]:
        """BFS drill from the seeds (always admitted): each hop adds unseen active children and
        neighbours across projected edges ("visible": inside the current visible set, "raw":
        across the whole store, a list: inside that set). Discovery order, seeds first."""
        return self._read.expand_from_seeds(
            seed_ids,
            hops=hops,
            edge_types=edge_types,
            project_to=project_to,
            include_children=include_children,
            exclude_internal=exclude_internal,
        )

    def get_schema(self) -> SchemaView:
        """The effective schema, types in definition order."""
        return self._read.get_schema()

    def keyword_search(
        self, *, query: str, types: list[str] | None = None, k: int = 20
    ) -> tuple[RankedView, ...]:
        """BM25 over the candidate pool (`engine/keyword/keyword_index.py`): score = BM25 / the
        best a
        node could score for this query, in (0, 1]; score descending, ties in pool (recency)
        order; cut to `k`. Blank query: ()."""
        return self._read.keyword_search(query=query, types=types, k=k)

    def find_by_name(self, *, query: str, types: list[str] | None = None) -> FindResult:
        """Active nodes whose title or a primary-key column (list values too) contains `query`
        (case-insensitive), in timeline order. Blank query: no matches."""
        return self._read.find_by_name(query=query, types=types)

    def compaction_candidates(
        self, *, type: str, depth: int = 0, limit: int | None = None
    ) -> CompactionCandidates:
        """Groups of `fan_in` roots (active, this type and depth, no parent of the same type),
        oldest first, ready for a rollup of tier ``depth + 1``. Empty for an unknown or
        non-hierarchical type, ``depth >= max_depth``, or fewer than `threshold` roots (after
        holding back the newest `keep_recent_leaves` at depth 0); a trailing partial group is
        dropped. `limit`: the oldest `limit` groups only."""
        return self._read.compaction_candidates(type=type, depth=depth, limit=limit)

    def compaction_due(self, *, type: str, depth: int = 0) -> int:
        """How many groups `compaction_candidates` gives, counted without making a record for
        a type kept in the pools (the turn's check whether compaction is due)."""
        return self._read.compaction_due(type=type, depth=depth)

    def list_nodes(
        self,
        *,
        types: list[str] | None = None,
        levels: list[str] | None = None,
        active_only: bool = True,
        seq_range: Range | None = None,
    ) -> tuple[NodeView, ...]:
        """Every node (offline scan) in timeline order; `active_only` drops archived and
        diagnostic nodes; `seq_range` is inclusive ``(start, end)``."""
        return self._read.list_nodes(
            types=types, levels=levels, active_only=active_only, seq_range=seq_range
        )

    def get_node(self, id: str) -> NodeView | None:
        """The node's view (archived ones too), or None; empty / blank ids give None."""
        return self._read.get_node(id)

    def list_edges(
        self,
        *,
        source: str | None = None,
        target: str | None = None,
        types: list[str] | None = None,
        exclude_internal: bool = False,
    ) -> tuple[EdgeView, ...]:
        """Raw stored edges in store order (no weight); `exclude_internal` drops contains /
        semantic_contains."""
        return self._read.list_edges(
            source=source, target=target, types=types, exclude_internal=exclude_internal
        )

    def get_neighbors(
        self,
        id: str,
        *,
        edge_types: list[str] | None = None,
        direction: str = "both",
        project_to: str | list[str] = "raw",
    ) -> tuple[NeighborView, ...]:
        """Neighbours over the node's raw edges (store order); archived ones are dropped.

        With a projection each neighbour becomes its nearest visible ancestor (dropped when it
        has none); results are unique on (neighbour, edge type, direction).
        """
        return self._read.get_neighbors(
            id, edge_types=edge_types, direction=direction, project_to=project_to
        )

    def get_ancestor(
        self,
        id: str,
        *,
        active_only: bool = True,
        predicate: Callable[[NodeView], Any] | None = None,
    ) -> NodeView | None:
        """The first ancestor strictly above `id` matching `predicate` (default: the parent).

        With `active_only` an archived ancestor on the way ends the walk with None.
        """
        return self._read.get_ancestor(id, active_only=active_only, predicate=predicate)

    def get_descendants(
        self, id: str, *, active_only: bool = True, max_depth: int | None = None
    ) -> tuple[NodeView, ...]:
        """BFS over `children_ids` (level 1 first), the root excluded; `max_depth` None: no
        limit; `active_only` skips archived children and what lies below them."""
        return self._read.get_descendants(id, active_only=active_only, max_depth=max_depth)

    def get_nearest_visible_ancestor(
        self, id: str, *, visible_node_ids: Iterable[str]
    ) -> NodeView | None:
        """The first node from `id` upwards (itself included) that is in `visible_node_ids`."""
        return self._read.get_nearest_visible_ancestor(id, visible_node_ids=visible_node_ids)

    def project_edges(
        self,
        *,
        visible_node_ids: Iterable[str],
        edge_types: list[str] | None = None,
        exclude_internal: bool = True,
    ) -> tuple[EdgeView, ...]:
        """Raw edges lifted onto the visible set and merged; `weight` = raw edge count."""
        return self._read.project_edges(
            visible_node_ids=visible_node_ids,
            edge_types=edge_types,
            exclude_internal=exclude_internal,
        )

    def get_node_exposure(self, id: str) -> str | None:
        """ "high_only" for semantic-level nodes of a hierarchical type, "full" for any other
        active node (episodic ones included), None for a missing or archived node."""
        return self._read.get_node_exposure(id)

    def on_injection_changed(self, callback: Callable[[InjectionState], Any]) -> Callable[[], None]:
        """Call `callback(state)` after every injection update; returns an idempotent
        unsubscribe. A failing callback is logged and skipped."""
        return self._read.on_injection_changed(callback)
