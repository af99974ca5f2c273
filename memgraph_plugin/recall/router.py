"""The built-in hybrid router: a keyword (+ vector) baseline, then graph expansion from seeds.

Works offline. Vector scores join the baseline only when an embedding profile is configured;
otherwise the baseline is keyword + recency, and the result says which (``score_mode``).
Expansion runs under the rollout decision (``rollout.py``); when it raises, the router answers
with the baseline and the reason ``graph_expansion_error``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from memgraph_plugin.embedding.registry import profile_name
from memgraph_plugin.schema import DEFAULT_DRILL_EDGE_TYPES

from .rollout import FallbackReason, QualityGate, RolloutDecision, decide, gate_settings

log = logging.getLogger(__name__)

BUILTIN_ROUTER = "builtin-hybrid"

# settings (all optional) and their defaults
TOP_K_SETTING, DEFAULT_TOP_K = "recall_top_k", 6
SEEDS_SETTING, DEFAULT_SEEDS = "recall_seed_count", 3
HOPS_SETTING, DEFAULT_HOPS = "recall_hops", 1
MAX_EXPANDED_SETTING, DEFAULT_MAX_EXPANDED = "recall_max_expanded", 6
VECTOR_MIN_SETTING, DEFAULT_VECTOR_MIN = "recall_vector_min_score", 0.2
RECENCY_WEIGHT = 0.1
# Words that match nearly every node and say nothing about what the turn is about.
_STOP_TEXT = """
a an and are as at be but by do does for from had has have he her him his i if in into is it its
me my no not now of on or our she so than that the their them then there they this to up us was
we were what when where which while who why will with you your
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


def content_query(text: str) -> str:
    """The query without stop words (kept whole when nothing else is left)."""
    words = text.split()
    kept = [w for w in words if w.strip(".,;:!?\"'()").lower() not in STOP_WORDS]
    return " ".join(kept) if kept else text


@attrs.frozen
class Inclusion:
    """One node a recall picked, and why (``seed``, ``baseline`` or ``graph_expansion``)."""

    id: str
    why: str
    score: float = 0.0
    via: str | None = None  # the seed an expanded node was reached from
    edge_type: str | None = None  # the relation from ``via`` (or the last hop) to this node
    hops: int = 0

    def describe(self) -> str:
        """A short human form: ``seed 0.67`` or ``n_3 -[involved_in]-> (1 hop)``."""
        if self.why == "graph_expansion":
            plural = "" if self.hops == 1 else "s"
            return f"via {self.via} -[{self.edge_type or '?'}]- ({self.hops} hop{plural})"
        return f"{self.why} {self.score:.2f}"


@attrs.frozen
class RouteRequest:
    """What a router gets: the query, the candidate pool and a session to read the graph with."""

    chat_id: str
    query: str
    candidates: tuple[Any, ...]  # NodeView pool (visible minus recent window), recency order
    always_inject_ids: tuple[str, ...]
    session: Any
    settings: Mapping[str, Any] = attrs.field(factory=dict)
    seq: int = 0  # seq of the assistant message about to be written


@attrs.frozen
class RouteResult:
    """A router's answer. ``selected`` is what to inject; ``shadow`` what shadow mode computed."""

    selected: tuple[Inclusion, ...]
    router: str = BUILTIN_ROUTER
    mode: str = "canary"
    score_mode: str = "keyword+recency"
    fallback_reason: str | None = None
    seeds: tuple[str, ...] = ()
    shadow: tuple[Inclusion, ...] = ()
    error: str | None = None
    drill: tuple[str, ...] = ()  # seeds a router plugin asks the pipeline to drill into

    @property
    def selected_ids(self) -> tuple[str, ...]:
        return tuple(i.id for i in self.selected)


Expander = Callable[[Any, str, int, Sequence[str]], Any]
"""``(session, seed_id, hops, visible_ids) -> [(node_id, edge_type, hops), ...]`` (or awaitable)."""


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def float_setting(settings: Mapping[str, Any], key: str, default: float) -> float:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"setting {key}={value!r} must be a number")
    return float(value)


def int_setting(settings: Mapping[str, Any], key: str, default: int, minimum: int = 0) -> int:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"setting {key}={value!r} must be an integer >= {minimum}")
    return value


INTERNAL_EDGES = frozenset({"contains", "semantic_contains"})
UNKNOWN_EDGE = "drill"  # reached by the drill, but no single relation names the step


class _VisibleLift:
    """Nearest visible ancestor of a node (itself included) through the session's ``get_node``,
    memoised for one expansion: the visible set is tested by membership, never copied per call."""

    def __init__(self, session: Any, visible: frozenset[str]) -> None:
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


def default_expander(session: Any, seed_id: str, hops: int, visible_ids: Sequence[str]) -> list:
    """Drill expansion hop by hop with ``expand_from_seeds``, so each node knows its hop count
    and the relation of the step that reached it (from a node of the previous hop)."""
    visible = frozenset(visible_ids) | {seed_id}
    lift = _VisibleLift(session, visible)
    found: list[tuple[str, str, int]] = []
    seen = {seed_id}
    layer = [seed_id]
    for hop in range(1, hops + 1):
        relation: dict[str, str] = {}
        for node_id in layer:
            for other, rel in _relations_from(session, node_id, lift).items():
                relation.setdefault(other, rel)
        reached = session.expand_from_seeds(
            [seed_id], hops=hop, project_to=visible, include_children=True
        )
        layer = []
        for node in reached:
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
        """Baseline scores, seeds, then expansion as the rollout decision allows."""
        settings = request.settings
        window, max_rate = gate_settings(settings)
        decision = decide(settings, gate_blocked=self.gate.blocked(window, max_rate))
        top_k = int_setting(settings, TOP_K_SETTING, DEFAULT_TOP_K)
        n_seeds = int_setting(settings, SEEDS_SETTING, DEFAULT_SEEDS)
        hops = int_setting(settings, HOPS_SETTING, DEFAULT_HOPS, minimum=1)
        max_expanded = int_setting(settings, MAX_EXPANDED_SETTING, DEFAULT_MAX_EXPANDED)

        scores, score_mode = await self._baseline_scores(request)
        always = set(request.always_inject_ids)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        seeds = tuple(node_id for node_id, _ in ranked[:n_seeds])
        baseline = tuple(
            Inclusion(node_id, "seed" if node_id in seeds else "baseline", round(score, 4))
            for node_id, score in ranked
            if node_id not in always
        )[:top_k]
        result = RouteResult(
            selected=baseline,
            mode=decision.mode.value,
            score_mode=score_mode,
            fallback_reason=decision.reason.value if decision.reason else None,
            seeds=seeds,
        )
        return await self._expand_under(decision, request, result, seeds, hops, max_expanded)

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
        hops = int_setting(settings, HOPS_SETTING, DEFAULT_HOPS, minimum=1)
        max_expanded = int_setting(settings, MAX_EXPANDED_SETTING, DEFAULT_MAX_EXPANDED)
        pool = {c.id for c in request.candidates}
        seeds = tuple(dict.fromkeys(i for i in result.drill if i in pool))
        picked = set(result.selected_ids)
        added = tuple(Inclusion(i, "seed") for i in seeds if i not in picked)
        result = attrs.evolve(
            result,
            selected=result.selected + added,
            mode=decision.mode.value,
            fallback_reason=decision.reason.value if decision.reason else None,
            seeds=result.seeds or seeds,
        )
        return await self._expand_under(decision, request, result, seeds, hops, max_expanded)

    async def _expand_under(
        self,
        decision: RolloutDecision,
        request: RouteRequest,
        result: RouteResult,
        seeds: Sequence[str],
        hops: int,
        max_expanded: int,
    ) -> RouteResult:
        """Expand from ``seeds`` as the rollout decision allows; on failure, ``result`` as it is
        with the reason ``graph_expansion_error`` (and the failure counted by the gate)."""
        if not decision.run_expansion or not seeds:
            return result
        window, _rate = gate_settings(request.settings)
        try:
            expanded = await self._expand(request, seeds, hops, max_expanded, result.selected)
        except Exception as exc:  # any expansion failure falls back to the baseline
            log.warning("graph expansion failed for chat %s: %r", request.chat_id, exc)
            self.gate.record(True, window)
            return attrs.evolve(
                result,
                fallback_reason=FallbackReason.GRAPH_EXPANSION_ERROR.value,
                error=f"{type(exc).__name__}: {exc}",
            )
        self.gate.record(False, window)
        return self._apply(result, decision, expanded)

    @staticmethod
    def _apply(result: RouteResult, decision: RolloutDecision, expanded: tuple) -> RouteResult:
        if decision.apply_expansion:
            return attrs.evolve(result, selected=result.selected + expanded)
        return attrs.evolve(result, shadow=expanded)

    async def _baseline_scores(self, request: RouteRequest) -> tuple[dict[str, float], str]:
        pool = [c.id for c in request.candidates]
        if not pool or not request.query.strip():
            return {}, "keyword+recency"
        pool_set = set(pool)
        k = len(pool) + len(request.always_inject_ids) + 1
        keyword = {
            r.id: float(r.score)
            for r in request.session.keyword_search(query=content_query(request.query), k=k)
            if r.id in pool_set
        }
        vector: dict[str, float] = {}
        score_mode = "keyword+recency"
        if profile_name(request.settings) is not None:
            vector, score_mode = await self._vector_scores(request, k, pool_set)
        floor = float_setting(request.settings, VECTOR_MIN_SETTING, DEFAULT_VECTOR_MIN)
        relevant = set(keyword) | {i for i, s in vector.items() if s >= floor}
        scores: dict[str, float] = {}
        for rank, node_id in enumerate(pool):
            if node_id not in relevant:
                continue
            recency = 1.0 - rank / len(pool)
            if vector:
                base = 0.5 * keyword.get(node_id, 0.0) + 0.5 * max(vector.get(node_id, 0.0), 0.0)
            else:
                base = keyword.get(node_id, 0.0)
            scores[node_id] = base + RECENCY_WEIGHT * recency
        return scores, score_mode

    @staticmethod
    async def _vector_scores(
        request: RouteRequest, k: int, pool: set[str]
    ) -> tuple[dict[str, float], str]:
        try:
            ranked = await request.session.vector_search(query=request.query, k=k)
        except Exception as exc:  # NO_EMBEDDING_PROFILE or a broken index: keyword only
            log.info("vector search unavailable for chat %s: %s", request.chat_id, exc)
            return {}, "keyword+recency"
        return {r.id: float(r.score) for r in ranked if r.id in pool}, "keyword+vector+recency"

    async def _expand(
        self,
        request: RouteRequest,
        seeds: Sequence[str],
        hops: int,
        max_expanded: int,
        baseline: tuple[Inclusion, ...],
    ) -> tuple[Inclusion, ...]:
        visible = [c.id for c in request.candidates]
        taken = {i.id for i in baseline} | set(seeds) | set(request.always_inject_ids)
        visible_set = set(visible)
        found: list[Inclusion] = []
        for seed in seeds:
            reached = await _maybe_await(self._expander(request.session, seed, hops, visible))
            for node_id, edge_type, hop in reached:
                if node_id in taken or node_id not in visible_set:
                    continue
                taken.add(node_id)
                found.append(Inclusion(node_id, "graph_expansion", 0.0, seed, edge_type, hop))
        found.sort(key=lambda i: i.hops)  # stable: seed rank within a hop count
        return tuple(found[:max_expanded])


def _id_list(value: Any, *, router: str, what: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"router {router} returned {what} {type(value).__name__}, not node ids")
    return [str(v) for v in value]


def coerce_route_result(value: Any, *, router: str) -> RouteResult:
    """Accept a plugin's answer: a ``RouteResult``, an iterable of node ids, or a mapping
    ``{"selected": ids, "drill": ids}`` (``drill``: seeds to dig into, as the original's route
    LLM asks for; the pipeline drills from them)."""
    if isinstance(value, RouteResult):
        return value
    if isinstance(value, Mapping):
        unknown = sorted(set(map(str, value)) - {"selected", "drill"})
        if unknown:
            raise TypeError(f"router {router} returned unknown keys {unknown}")
        ids = _id_list(value.get("selected", ()), router=router, what="'selected' as")
        drill = _id_list(value.get("drill", ()), router=router, what="'drill' as")
        return RouteResult(
            selected=tuple(Inclusion(i, "router") for i in ids), router=router, drill=tuple(drill)
        )
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"router {router} returned {type(value).__name__}, not a RouteResult")
    ids = [str(v) for v in value]
    return RouteResult(selected=tuple(Inclusion(i, "router") for i in ids), router=router)
