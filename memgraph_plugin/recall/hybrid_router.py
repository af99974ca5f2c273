"""The built-in hybrid router: a fused keyword (+ vector) baseline, then the graph signal.

Works offline. The baseline fuses BM25 keyword hits over every active node and, with an
embedding profile, vector hits (reciprocal rank fusion, ``fusion.py``); a rollup among them is
drilled down to its best leaves; a time cue in the message favours events of that time. The
graph signal — events of the characters and places the message names, reached over the edges
extraction writes, plus drill expansion from the seeds — is fused in under the rollout decision
(``rollout.py``); when it raises, the router answers with the baseline and the reason
``graph_expansion_error``. Every step asks for a bounded number of nodes.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from typing import Any

import attrs

from host.settings.setting_values import float_setting, int_setting
from memgraph_plugin.embedding.registry import profile_name
from memgraph_plugin.engine.model.schema import DEFAULT_DRILL_EDGE_TYPES
from memgraph_plugin.engine.read.projection import expand_from_seeds
from memgraph_plugin.engine.read.recent_window import recent_from

from ..hook_contract import BUILTIN_ROUTER, Inclusion, RouteRequest, RouteResult
from ..settings_keys import RECALL
from .prompt_window import CarriedNodes
from .query import STOP_WORDS, content_query, content_words, expand_terms, time_cue, time_of
from .ranking.fact_signal import CHARACTER, asked_fields, fact_hits
from .ranking.fusion import Fused, fuse
from .ranking.people import known_names
from .ranking.place_signal import place_hits
from .ranking.signals import (
    GRAPH_SCAN,
    Hit,
    TermScorer,
    drill_down,
    entity_events,
    keyword_hits,
    named_entities,
    vector_hits,
)
from .ranking.topic_signal import topic_list
from .rollout import FallbackReason, QualityGate, decide, gate_settings

log = logging.getLogger(__name__)

# settings (all optional): the recall_* keys of memgraph_plugin/settings_keys.py
DRILL_WIDTH = 2  # leaves a rollup hit is replaced by
__all__ = ["STOP_WORDS", "content_query"]


Expander = Callable[[Any, str, int, Container[str]], Any]
"""``(session, seed_id, hops, visible) -> [(node_id, edge_type, hops), ...]`` (or awaitable);
``visible`` is a membership test (``in``), never a list to iterate."""


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class _Plus:
    """``container | {one}`` as a membership test, without copying the container."""

    def __init__(self, container: Container[str], one: str) -> None:
        self._container = container
        self._one = one

    def __contains__(self, node_id: object) -> bool:
        return node_id == self._one or node_id in self._container


INTERNAL_EDGES = frozenset({"contains", "semantic_contains"})
UNKNOWN_EDGE = "drill"  # reached by the drill, but no single relation names the step


class _VisibleLift:
    """Nearest visible ancestor of a node (itself included) through the session's ``get_node``,
    memoised for one expansion: the visible set is tested by membership, never copied per call."""

    def __init__(self, session: Any, visible: Container[str]) -> None:
        self._session = session
        self._visible = visible
        self._memo: dict[str, str | None] = {}

    def __call__(self, view: Any) -> str | None:
        path: list[str] = []
        found: str | None = None
        while view is not None and not view.archived and view.id not in path:
            if view.id in self._memo:
                found = self._memo[view.id]
                break
            path.append(view.id)
            if view.id in self._visible:
                found = view.id
                break
            view = self._session.get_node(view.parent_id) if view.parent_id else None
        for node_id in path:
            self._memo[node_id] = found
        return found


def _relations_from(session: Any, node_id: str, lift: _VisibleLift) -> dict[str, str]:
    """Neighbour id -> relation for one node over the drill's edge types, its descendants'
    edges included (a rollup's relations are its children's), neighbours lifted onto the
    visible set. Each call reads only the edges of the node and its descendants."""
    ids = [node_id, *(d.id for d in session.get_descendants(node_id))]
    out: dict[str, str] = {}
    for source in ids:
        for nb in session.get_neighbors(
            source, edge_types=list(DEFAULT_DRILL_EDGE_TYPES), project_to="raw"
        ):
            other = lift(nb.node)
            if other is None or other == node_id:
                continue
            current = out.get(other)  # a real relation wins over a hierarchy edge
            real = nb.edge_type not in INTERNAL_EDGES
            if current is None or (current in INTERNAL_EDGES and real):
                out[other] = nb.edge_type
    return out


class Membership:
    """A membership test over the pool (the store's index) plus extra ids, never copied."""

    def __init__(self, store: Any, extra: Container[str] = frozenset()) -> None:
        self._store = store
        self._extra = extra

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._extra or self._store.in_pool(node_id)


def default_expander(session: Any, seed_id: str, hops: int, visible_ids: Container[str]) -> list:
    """Drill expansion hop by hop with ``expand_from_seeds``, so each node knows its hop count
    and the relation of the step that reached it (from a node of the previous hop)."""
    visible = Membership(session.store, _Plus(visible_ids, seed_id))
    lift = _VisibleLift(session, visible)
    found: list[tuple[str, str, int]] = []
    seen = {seed_id}
    layer = [seed_id]
    for hop in range(1, hops + 1):
        relation: dict[str, str] = {}
        for node_id in layer:
            for other, rel in _relations_from(session, node_id, lift).items():
                relation.setdefault(other, rel)
        reached = expand_from_seeds(
            session.store,
            [seed_id],
            hops=hop,
            edge_types=DEFAULT_DRILL_EDGE_TYPES,
            allowed=visible,
            include_children=True,
        )
        layer = []
        for node in (session.store.node(i) for i in reached):
            if node is None:
                continue
            if node.id in seen:
                continue
            seen.add(node.id)
            layer.append(node.id)
            edge = "contains" if node.parent_id == seed_id else relation.get(node.id, UNKNOWN_EDGE)
            found.append((node.id, edge, hop))
        if not layer:
            break
    return found


class HybridRouter:
    """The built-in router. ``expander`` replaces the graph walk (tests make it raise)."""

    name = BUILTIN_ROUTER

    def __init__(self, *, expander: Expander | None = None) -> None:
        self._expander = expander or default_expander
        self.gate = QualityGate()  # canary's rolling window of expansion failures

    async def route(self, request: RouteRequest) -> RouteResult:
        """Fused baseline, seeds, then the graph signal as the rollout decision allows."""
        settings = request.settings
        window, max_rate = gate_settings(settings)
        decision = decide(settings, gate_blocked=self.gate.blocked(window, max_rate))
        top_k = int_setting(settings, RECALL.recall_top_k)
        n_seeds = int_setting(settings, RECALL.recall_seed_count)
        hops = int_setting(settings, RECALL.recall_hops)
        max_expanded = int_setting(settings, RECALL.recall_max_expanded)
        k = int_setting(settings, RECALL.recall_candidates)
        recent = int_setting(settings, RECALL.recall_recent_window)

        ctx = _Turn(request, k, recent)
        keyword, vector, score_mode = await self._baseline_lists(ctx)
        people = self._people(ctx, keyword)
        ctx.speakers = frozenset(n for p in people for n in known_names(p))
        facts = self._fact_list(ctx, [p.id for p in people])
        places = ctx.allowed(
            place_hits(request.session, [p.id for p in people], request.query, ctx.terms, ctx.k)
        )
        ids = [p.id for p in people]
        topic = ctx.allowed(topic_list(request.session, settings, ids, request.query, ctx.k))
        lists = {"keyword": keyword, "vector": vector, "facts": facts, "places": places}
        lists["topic"] = topic
        base = ctx.rank(lists)
        always = set(request.always_inject_ids)
        seeds = tuple(i.id for i in base[:n_seeds])
        result = RouteResult(
            selected=tuple(i for i in base if i.id not in always)[:top_k],
            mode=decision.mode.value,
            score_mode=score_mode,
            fallback_reason=decision.reason.value if decision.reason else None,
            seeds=seeds,
        )
        if not decision.run_expansion or not seeds and not ctx.terms:
            return result
        try:
            graph = await self._graph_list(ctx, keyword, seeds, hops, max_expanded)
        except Exception as exc:  # any expansion failure falls back to the baseline
            return self._expansion_failed(request, result, exc, window)
        self.gate.record(False, window)
        if not graph:
            return result
        lists = {**lists, "graph": [h for h, _ in graph]}
        how = {h.id: inc for h, inc in graph}
        base_ids = {i.id for i in base}
        # the fused ranking read only as far as the selection and the expansion need: the
        # first `max_expanded` nodes only the graph found join the baseline's nodes, and the
        # first `top_k` of those not pinned are selected (the rest is never drilled)
        expansion: list[Inclusion] = []
        selected: list[Inclusion] = []
        wanted = top_k if decision.apply_expansion else 0
        for inc in ctx.ranked(lists, graph=how):
            grown = inc.why == "graph_expansion" and len(expansion) < max_expanded
            if grown:
                expansion.append(inc)
            if (grown or inc.id in base_ids) and inc.id not in always and len(selected) < wanted:
                selected.append(inc)
            if len(selected) >= wanted and len(expansion) >= max_expanded:
                break
        if decision.apply_expansion:
            return attrs.evolve(result, selected=tuple(selected))
        return attrs.evolve(result, shadow=tuple(expansion))

    async def drill(self, request: RouteRequest, result: RouteResult) -> RouteResult:
        """Drill expansion from the seeds a router plugin asked for (``result.drill``), under
        the same rollout modes, quality gate and fallback reasons as the built-in expansion.

        The drill seeds join the selection (``why="seed"``) when the router did not pick them.
        """
        if not result.drill:
            return result
        settings = request.settings
        window, max_rate = gate_settings(settings)
        decision = decide(settings, gate_blocked=self.gate.blocked(window, max_rate))
        hops = int_setting(settings, RECALL.recall_hops)
        max_expanded = int_setting(settings, RECALL.recall_max_expanded)
        store = request.session.store
        seeds = tuple(dict.fromkeys(i for i in result.drill if _usable(store, i)))
        picked = set(result.selected_ids)
        added = tuple(Inclusion(i, "seed") for i in seeds if i not in picked)
        result = attrs.evolve(
            result,
            selected=result.selected + added,
            mode=decision.mode.value,
            fallback_reason=decision.reason.value if decision.reason else None,
            seeds=result.seeds or seeds,
        )
        if not decision.run_expansion or not seeds:
            return result
        try:
            expanded = await self._expand(request, seeds, hops, max_expanded, result.selected)
        except Exception as exc:  # any expansion failure falls back to the router's answer
            return self._expansion_failed(request, result, exc, window)
        self.gate.record(False, window)
        if decision.apply_expansion:
            return attrs.evolve(result, selected=result.selected + expanded)
        return attrs.evolve(result, shadow=expanded)

    async def _baseline_lists(self, ctx: _Turn) -> tuple[list[Hit], list[Hit], str]:
        request = ctx.request
        if not ctx.terms:
            return [], [], "keyword+recency"
        context = float_setting(request.settings, RECALL.recall_context_weight)
        keyword = ctx.allowed(
            keyword_hits(
                request.session, ctx.terms, ctx.k, context=context, scorer=ctx.scorer,
                exclude=frozenset(request.question_ids),
            )
        )
        if profile_name(request.settings) is None:  # "none": vectors off
            return keyword, [], "keyword+recency"
        vector, used = await vector_hits(request.session, request.query, ctx.k)
        if not used:
            return keyword, [], "keyword+recency"
        floor = float_setting(request.settings, RECALL.recall_vector_min_score)
        vector = [h for h in vector if h.score >= floor]
        return keyword, ctx.allowed(vector), "keyword+vector+recency"

    @staticmethod
    def _people(ctx: _Turn, keyword: Sequence[Hit]) -> list[Any]:
        """The character sheets the question names (name index, keyword hits' titles)."""
        if not ctx.terms:
            return []
        request = ctx.request
        store = request.session.store
        found = named_entities(request.session, request.query, keyword, ctx.terms)
        ctx.named = found  # the graph signal walks from the same entities
        nodes = (store.node(i) for i in found)
        return [n for n in nodes if n is not None and n.type == CHARACTER]

    @staticmethod
    def _fact_list(ctx: _Turn, people: Sequence[str]) -> list[Hit]:
        """Evidence messages of the facts the question asks about the people it names
        (`fact_signal.fact_hits`); empty when it asks for no kind of fact."""
        if not people or not asked_fields(ctx.terms):
            return []
        return ctx.allowed(fact_hits(ctx.request.session, people, ctx.terms, ctx.k))

    def _expansion_failed(
        self, request: RouteRequest, result: RouteResult, exc: Exception, window: int
    ) -> RouteResult:
        """`result` unexpanded, with the failure recorded in the quality gate and the trace."""
        log.warning("graph expansion failed for chat %s: %r", request.chat_id, exc)
        self.gate.record(True, window)
        return attrs.evolve(
            result,
            fallback_reason=FallbackReason.GRAPH_EXPANSION_ERROR.value,
            error=f"{type(exc).__name__}: {exc}",
        )

    async def _graph_list(
        self,
        ctx: _Turn,
        keyword: Sequence[Hit],
        seeds: Sequence[str],
        hops: int,
        max_expanded: int,
    ) -> list[tuple[Hit, Inclusion]]:
        """The graph signal, best first: events of the entities the message names (over the
        relations extraction writes), then drill expansion from the seeds."""
        request = ctx.request
        session = request.session
        out: dict[str, tuple[Hit, Inclusion]] = {}
        entities = ctx.named
        if entities is None:
            entities = named_entities(session, request.query, keyword, ctx.terms)
        if entities:
            for hit in ctx.allowed(entity_events(session, entities, ctx.terms, ctx.k)):
                inc = Inclusion(hit.id, "graph_expansion", 0.0, hit.via, hit.edge_type, 1)
                out.setdefault(hit.id, (hit, inc))
        taken = set(seeds)
        expanded = await self._expand(request, seeds, hops, max_expanded, ())
        for inc in expanded:
            if inc.id not in out and inc.id not in taken and ctx.ok(inc.id):
                out[inc.id] = (Hit(inc.id, 0.0, inc.via, inc.edge_type), inc)
        return list(out.values())

    async def _expand(
        self,
        request: RouteRequest,
        seeds: Sequence[str],
        hops: int,
        max_expanded: int,
        baseline: tuple[Inclusion, ...],
    ) -> tuple[Inclusion, ...]:
        store = request.session.store
        ranked = frozenset(i.id for i in request.ranked) | frozenset(seeds)
        visible = Membership(store, ranked)
        taken = {i.id for i in baseline} | set(seeds) | set(request.always_inject_ids)
        found: list[Inclusion] = []
        for seed in seeds:
            if _degree(store, seed) > GRAPH_SCAN:  # a hub: its own walk would read every edge
                continue
            reached = await _maybe_await(self._expander(request.session, seed, hops, visible))
            for node_id, edge_type, hop in reached:
                if node_id in taken or node_id not in visible:
                    continue
                taken.add(node_id)
                found.append(Inclusion(node_id, "graph_expansion", 0.0, seed, edge_type, hop))
        found.sort(key=lambda i: i.hops)  # stable: seed rank within a hop count
        return tuple(found[:max_expanded])


def _degree(store: Any, node_id: str) -> int:
    return int(store.degree(node_id))


def _usable(store: Any, node_id: str) -> bool:
    node = store.node(node_id)
    return node is not None and not node.archived


class _Turn:
    """One route call's shared pieces: the query terms, the time cue, what is allowed."""

    def __init__(self, request: RouteRequest, k: int, recent: int) -> None:
        self.request = request
        self.k = k
        self.store = request.session.store
        words = content_words(request.query) if request.query.strip() else []
        self.terms = expand_terms(words, self.store.keywords.knows)
        self.cut = recent_from(self.store.seq_counter, recent)
        self.carried = CarriedNodes(request.kept_from, self.store.node)  # the prompt holds it
        self.time_range = time_cue(request.query, self._now()) if self.terms else None
        self.speakers: frozenset[str] = frozenset()  # the people the question names
        self.named: list[str] | None = None  # the entities it names (`named_entities`)
        self.scorer = TermScorer(self.store, self.terms)  # each node scored once per recall
        self._drilled: dict[str, list[str]] = {}  # rollup id -> its best leaves (this recall)

    def _now(self) -> Any:
        """The newest event time the graph knows (relative cues count back from it)."""
        for spec in self.store.schema.types:
            if spec.compression_mode != "hierarchical":
                continue
            for view in self.store.newest_in_pool(spec.type, 4):
                when = time_of(view.fields)
                if when is not None:
                    return when
        return None

    def ok(self, node_id: str) -> bool:
        """Usable and outside the recent window (what the newest answers wrote is in context),
        not the question's own event (the prompt holds the question)."""
        node = self.store.node(node_id)
        gone = node is None or node.archived or node_id in self.request.question_ids
        if gone or self.carried(node):
            return False
        return self.cut is None or node.seq_to is None or node.seq_to < self.cut

    def allowed(self, hits: Sequence[Hit]) -> list[Hit]:
        return [h for h in hits if self.ok(h.id)]

    def rank(
        self, lists: Mapping[str, Sequence[Hit]], graph: Mapping[str, Inclusion] | None = None
    ) -> list[Inclusion]:
        """Fuse the lists; a rollup is replaced by its best leaves (``drill_down``)."""
        return list(self.ranked(lists, graph))

    def ranked(
        self, lists: Mapping[str, Sequence[Hit]], graph: Mapping[str, Inclusion] | None = None
    ) -> Iterator[Inclusion]:
        """`rank`, best first, made as it is read: a rollup is drilled when the reader gets to
        it, so a reader that stops early drills no rollup below where it stopped."""
        fused = fuse(
            lists, store=self.store, time_range=self.time_range, speakers=self.speakers
        )
        seen: set[str] = set()
        yielded = 0
        n_seeds = int_setting(self.request.settings, RECALL.recall_seed_count)
        for f in fused:
            node = self.store.node(f.id)
            if node is not None and node.semantic_rollup and node.children_ids:
                made: list[Inclusion] = []
                for leaf in self._drill(f.id):
                    if leaf not in seen and self.ok(leaf):
                        detail = f"under {f.id}: {f.detail()}"
                        score = round(f.score, 4)
                        made.append(
                            Inclusion(leaf, "drill_down", score, f.id, "contains", 1, detail)
                        )
                        seen.add(leaf)
            elif f.id not in seen:
                made = [self._inclusion(f, graph)]
                seen.add(f.id)
            else:
                continue
            for inc in made:
                if yielded < n_seeds and inc.why == "baseline":
                    inc = attrs.evolve(inc, why="seed")
                yielded += 1
                yield inc

    def _drill(self, rollup_id: str) -> list[str]:
        """`drill_down` of a rollup, once per recall (the baseline and the fused ranking both
        drill the rollups they hold)."""
        leaves = self._drilled.get(rollup_id)
        if leaves is None:
            leaves = self._drilled[rollup_id] = drill_down(
                self.request.session, rollup_id, self.terms, DRILL_WIDTH, scorer=self.scorer
            )
        return leaves

    @staticmethod
    def _inclusion(f: Fused, graph: Mapping[str, Inclusion] | None) -> Inclusion:
        score = round(f.score, 4)
        only_graph = graph is not None and set(f.ranks) == {"graph"}
        if only_graph:
            assert graph is not None
            return attrs.evolve(graph[f.id], score=score, detail=f.detail())
        return Inclusion(f.id, "baseline", score, detail=f.detail())
