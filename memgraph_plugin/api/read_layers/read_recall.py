"""Layer C of the read API: recall primitives (candidates, exposure, edge summaries, briefs,
seed expansion, keyword and name search, compaction candidates)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Container, Iterable
from typing import Any

from ...engine.graph.store import timeline_key
from ...engine.model.frozen import FrozenDict
from ...engine.model.models import Node
from ...engine.model.schema import DEFAULT_DRILL_EDGE_TYPES, Schema, is_diagnostic_type
from ...engine.model.views import (
    EMPTY_EDGE_SUMMARY,
    CompactionCandidates,
    CompactionGroup,
    EdgeSummaryView,
    FindResult,
    NodeBriefView,
    NodeView,
    RankedView,
)
from ...engine.read.edge_summaries import summaries_for
from ...engine.read.pool_counts import oldest_pool_roots, pool_count_at_depth
from ...engine.read.projection import edge_summary as _edge_summary
from ...engine.read.projection import expand_from_seeds as _expand
from ...engine.read.recent_window import recent_from
from ...errors import (
    check_bool,
    check_id_container,
    check_id_list,
    check_int,
    check_range,
    check_str,
    check_str_list,
)
from .read_base import Range, ReadBase, text_of

__all__ = ["RecallPrimitives"]


class RecallPrimitives(ReadBase):
    """Layer C of the read API: recall primitives (candidates, exposure, edge summaries, briefs,"""

    # -- layer C: recall primitives ----------------------------------------------------------------

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
        tset = self._types(types)
        window = check_range("seq_window", seq_window)
        recent = check_int("exclude_recent_messages", exclude_recent_messages, minimum=0)
        check_int("limit", limit, minimum=0, allow_none=True)
        store = self._store
        parts = (
            [(store.candidate_keys(), store.candidate_views())]
            if tset is None
            else [(tp.keys, tp.views) for tp in (store.type_pool(t) for t in sorted(tset))]
        )
        # keys are (-seq, -depth, id) ascending; a missing seq_to is -1 (key 1), at the end
        cut_hi: int | None = None  # keep seq_to <= cut_hi
        first_recent = recent_from(store.seq_counter, recent)
        if first_recent is not None:
            cut_hi = first_recent - 1  # drops seq_to >= L - N + 1 (never an imported seq 0)
        windowed = window is not None and window != (None, None)
        start = end = None
        if windowed:
            start, end = window  # type: ignore[misc]
        chunks: list[tuple[tuple[Any, ...], NodeView]] = []
        out_views: list[NodeView] = []
        for keys, views in parts:
            missing_at = bisect.bisect_left(keys, (1,))
            a, b = 0, len(keys)
            if cut_hi is not None:  # nodes without seq_to are never "recent"
                a = min(bisect.bisect_left(keys, (-cut_hi,)), missing_at)
            if windowed:  # nodes without seq_to are never inside a window
                b = missing_at
                if end is not None:
                    a = max(a, bisect.bisect_left(keys, (-end,)))
                if start is not None:
                    b = min(b, bisect.bisect_left(keys, (-start + 1,)))
            if a >= b:
                continue
            if len(parts) == 1:
                out_views = list(views[a:b])
            else:
                chunks.extend(zip(keys[a:b], views[a:b], strict=True))
        if len(parts) > 1:
            chunks.sort(key=lambda kv: kv[0])
            out_views = [v for _, v in chunks]
        if limit is not None:
            out_views = out_views[:limit]
        return tuple(out_views)

    def get_node_exposure(self, id: str) -> str | None:
        """ "high_only" for semantic-level nodes of a hierarchical type, "full" for any other
        active node (episodic ones included), None for a missing or archived node."""
        check_str("id", id)
        node = self._store.node(id)
        if node is None or node.archived:
            return None
        return self._exposure(node)

    def _exposure(self, node: Node) -> str:
        spec = self.schema.get(node.type)
        if spec is not None and spec.compression.hierarchical and node.level == "semantic":
            return "high_only"
        return "full"

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
        check_str("id", id)
        visible = self._visible(visible_node_ids)
        types = check_str_list("edge_types", edge_types)
        check_int("limit", limit, minimum=0)
        if self._store.node(id) is None:
            return EMPTY_EDGE_SUMMARY
        if types is None and visible_node_ids is None:
            return summaries_for(self._store).summary(id, visible, limit)
        return _edge_summary(
            self._store, id, visible, edge_types=types, limit=limit, lift=self._lifter(visible)
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
        check_str("id", id)
        summarise = self._brief_summariser(
            visible_node_ids, include_edge_summary, edge_summary_limit
        )
        return self._brief(id, summarise)

    def _brief_summariser(
        self, visible_node_ids: Any, include_edge_summary: Any, edge_summary_limit: Any
    ) -> Callable[[str], EdgeSummaryView] | None:
        """The checked arguments' edge-summary maker for briefs (None: no edge summary)."""
        if include_edge_summary is False:  # the visible set only shapes the edge summary
            check_id_container("visible_node_ids", visible_node_ids)
            check_int("edge_summary_limit", edge_summary_limit, minimum=0)
            return None
        visible = self._visible(visible_node_ids)
        check_bool("include_edge_summary", include_edge_summary)
        check_int("edge_summary_limit", edge_summary_limit, minimum=0)
        if not include_edge_summary:
            return None
        return self._summariser(visible, visible_node_ids is None, edge_summary_limit)

    def _summariser(
        self, visible: Container[str], default: bool, limit: int
    ) -> Callable[[str], EdgeSummaryView]:
        """Edge summaries over `visible` for briefs: the store's kept summaries when `visible`
        is the default set (the one every turn asks for again), else computed per call."""
        store = self._store
        if default:
            cache = summaries_for(store)
            return lambda id: cache.summary(id, visible, limit)
        lift = self._lifter(visible)
        return lambda id: _edge_summary(store, id, visible, limit=limit, lift=lift)

    def _brief(
        self, id: str, summarise: Callable[[str], EdgeSummaryView] | None
    ) -> NodeBriefView | None:
        store = self._store
        node = store.node(id)
        if node is None or node.archived:
            return None
        schema = self.schema
        cached = self._brief_cache.get(id)
        if cached is not None and cached[0] is node and cached[1] is schema:
            table_name, summary, key_values, row_values, exposure = cached[2]
        else:
            static = self._brief_static(node, schema)
            self._brief_cache[id] = (node, schema, static)
            table_name, summary, key_values, row_values, exposure = static
        child_count = 0
        for cid in node.children_ids:
            c = store.node(cid)
            if c is not None and not c.archived:
                child_count += 1
        summary_view = None if summarise is None else summarise(id)
        return NodeBriefView(
            id=node.id,
            level=node.level,
            type=node.type,
            table_name=table_name,
            title=node.title,
            summary=summary,
            key_values=key_values,
            row_values=row_values,
            to_seq=node.seq_to,
            child_count=child_count,
            exposure=exposure,
            edge_summary=summary_view,
            always_inject=node.id in self._injection().always_inject_ids,
        )

    def _brief_static(
        self, node: Node, schema: Schema
    ) -> tuple[str, str, FrozenDict, FrozenDict, str]:
        """The parts of a brief that depend on the node record and schema only (cached)."""
        spec = schema.get(node.type)
        fields = node.fields
        keys: dict[str, Any] = {}
        rows: dict[str, Any] = {}
        if spec is not None:
            pk = spec.primary_key_columns
            for col in pk:
                v = fields.get(col)
                if v is not None and v != "":
                    keys[col] = v
            for col in spec.table_columns:
                if col in pk:
                    continue
                v = fields.get(col)
                if v is not None and v != "":
                    rows[col] = v
            table_name = spec.table_name
        else:
            rows = {k: v for k, v in fields.items() if v is not None and v != ""}
            table_name = ""
        summary = fields.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            summary = (
                "; ".join(f"{k}: {t}" for k, t in ((k, text_of(v)) for k, v in rows.items()) if t)
                or node.title
            )
        return table_name, summary, FrozenDict(keys), FrozenDict(rows), self._exposure(node)

    def get_node_briefs(
        self,
        ids: Iterable[str],
        *,
        visible_node_ids: Iterable[str] | None = None,
        include_edge_summary: bool = True,
        edge_summary_limit: int = 8,
    ) -> tuple[NodeBriefView | None, ...]:
        """`get_node_brief` for many ids, sharing one ancestor memo (the candidateRows block)."""
        id_list = check_id_list("ids", ids)
        summarise = self._brief_summariser(
            visible_node_ids, include_edge_summary, edge_summary_limit
        )
        return tuple(self._brief(i, summarise) for i in id_list)

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
        seeds = check_id_list("seed_ids", seed_ids)
        check_int("hops", hops, minimum=0)
        types = check_str_list("edge_types", edge_types)
        allowed = self._projection(project_to)
        check_bool("include_children", include_children)
        check_bool("exclude_internal", exclude_internal)
        ids = _expand(
            self._store,
            seeds,  # type: ignore[arg-type]
            hops=hops,
            edge_types=DEFAULT_DRILL_EDGE_TYPES if types is None else types,
            allowed=allowed,  # type: ignore[arg-type]
            include_children=include_children,
            exclude_internal=exclude_internal,
        )
        view = self._store.view
        return tuple(view(i) for i in ids)  # type: ignore[misc]

    def keyword_search(
        self, *, query: str, types: list[str] | None = None, k: int = 20
    ) -> tuple[RankedView, ...]:
        """BM25 over the candidate pool (`engine/keyword/keyword_index.py`): score = BM25 / the
        best a
        node could score for this query, in (0, 1]; score descending, ties in pool (recency)
        order; cut to `k`. Blank query: ()."""
        check_str("query", query)
        tset = self._types(types)
        check_int("k", k, minimum=1)
        if not query.strip():
            return ()
        store = self._store
        order = store.pool_order()  # id -> (recency key, lower-case type)
        accept = None if tset is None else (lambda nid: order[nid][1] in tset)
        hits = store.keywords.search(query, order, k, accept=accept)
        view = store.view
        return tuple(
            RankedView.from_view(v, score, "keyword")
            for nid, score in hits
            if (v := view(nid)) is not None
        )

    def find_by_name(self, *, query: str, types: list[str] | None = None) -> FindResult:
        """Active nodes whose title or a primary-key column (list values too) contains `query`
        (case-insensitive), in timeline order. Blank query: no matches."""
        check_str("query", query)
        tset = self._types(types)
        q = query.strip().lower()
        if not q:
            return FindResult(matches=())
        schema = self.schema
        out: list[Node] = []
        for n in self._store.iter_nodes():
            if n.archived or is_diagnostic_type(n.type):
                continue
            if tset is not None and n.type.lower() not in tset:
                continue
            if q in n.title.lower():
                out.append(n)
                continue
            spec = schema.get(n.type)
            if spec is None:
                continue
            for col in spec.primary_key_columns:
                if q in text_of(n.fields.get(col)).lower():
                    out.append(n)
                    break
        out.sort(key=timeline_key)
        view = self._store.view
        return FindResult(matches=tuple(view(n.id) for n in out))  # type: ignore[misc]

    def _due_roots(self, type_id: str, depth: int, keep_recent: int) -> int:
        """Roots of a pooled type at `depth` a compaction may take (the newest `keep_recent`
        leaves held back at depth 0), counted from the pool's keys."""
        count = pool_count_at_depth(self._store, type_id, depth)
        return max(0, count - keep_recent) if depth == 0 and keep_recent else count

    def compaction_due(self, *, type: str, depth: int = 0) -> int:
        """How many groups `compaction_candidates` gives for `type` at `depth`, for a pooled
        type counted from its pool's keys (no record or view made: a turn asks every time)."""
        check_str("type", type)
        check_int("depth", depth, minimum=0)
        spec = self.schema.get(type)
        if spec is None or not spec.compression.hierarchical:
            return 0
        comp = spec.compression
        if depth >= comp.max_depth:
            return 0
        if spec.level == "episodic" or is_diagnostic_type(spec.type):
            return len(self.compaction_candidates(type=type, depth=depth).groups)
        roots = self._due_roots(spec.type, depth, comp.keep_recent_leaves)
        return 0 if roots < comp.threshold else roots // comp.fan_in

    def compaction_candidates(
        self, *, type: str, depth: int = 0, limit: int | None = None
    ) -> CompactionCandidates:
        """Groups of `fan_in` roots (active, this type and depth, no parent of the same type),
        oldest first, ready for a rollup of tier ``depth + 1``. Empty for an unknown or
        non-hierarchical type, ``depth >= max_depth``, or fewer than `threshold` roots (after
        holding back the newest `keep_recent_leaves` at depth 0); a trailing partial group is
        dropped. `limit`: the oldest `limit` groups only (a chunk of catch-up compaction). A type
        kept in the pools is read from its pool's keys, oldest first, without making a record
        or sorting every root (the turn's inline compaction asks with no limit)."""
        check_str("type", type)
        check_int("depth", depth, minimum=0)
        spec = self.schema.get(type)
        if spec is None or not spec.compression.hierarchical:
            return CompactionCandidates(groups=())
        comp = spec.compression
        if depth >= comp.max_depth:
            return CompactionCandidates(groups=())
        store = self._store
        roots: list[Node] = []
        if limit is not None:
            check_int("limit", limit, minimum=0)
        pooled = spec.level != "episodic" and not is_diagnostic_type(spec.type)
        due = self._due_roots(spec.type, depth, comp.keep_recent_leaves) if pooled else 0
        if pooled and due < comp.threshold:
            return CompactionCandidates(groups=())  # counted from the pool's keys: no record
        if pooled:  # the oldest groups, from the pool's keys: no record made, no sort of
            # every root (the type's pool holds exactly its roots, at every depth)
            fan = comp.fan_in
            take = due // fan if limit is None else min(limit, due // fan)
            ids = oldest_pool_roots(store, spec.type, depth, take * fan)
            return CompactionCandidates(
                groups=tuple(
                    CompactionGroup(depth=depth + 1, child_ids=tuple(ids[i : i + fan]), fan_in=fan)
                    for i in range(0, take * fan, fan)
                )
            )
        # episodic and diagnostic nodes stay out of the pools: a scan of the store
        for n in store.iter_nodes():
            if n.archived or n.type != spec.type or n.semantic_depth != depth:
                continue
            if n.parent_id:
                parent = store.node(n.parent_id)
                if parent is not None and parent.type == spec.type:
                    continue
            roots.append(n)
        roots.sort(key=timeline_key)
        if depth == 0 and comp.keep_recent_leaves:
            roots = roots[: max(0, len(roots) - comp.keep_recent_leaves)]
        if len(roots) < comp.threshold:
            return CompactionCandidates(groups=())
        fan = comp.fan_in
        groups = tuple(
            CompactionGroup(
                depth=depth + 1, child_ids=tuple(n.id for n in roots[i : i + fan]), fan_in=fan
            )
            for i in range(0, len(roots) - fan + 1, fan)
        )
        return CompactionCandidates(groups=groups if limit is None else groups[:limit])
