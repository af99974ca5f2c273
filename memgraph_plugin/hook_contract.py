"""The types the memory graph's hooks (``hookspecs.py``, beside this module) pass and answer.

``memgraph_route`` passes a `RouteRequest` and answers a `RouteResult` of `Inclusion`s (or a plain
form `coerce_route_result` accepts); ``memgraph_commit`` passes a `CommitInfo`,
``memgraph_injection_changed`` an `InjectionState` and ``memgraph_summarise`` `NodeBriefView`s.
The last three are defined with the engine's other results and views and re-exported here, so a
plugin finds the whole hook contract in one module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .engine.model.results import CommitInfo
from .engine.model.views import InjectionState, NodeBriefView

__all__ = [
    "BUILTIN_ROUTER",
    "CommitInfo",
    "ExtractedOps",
    "Inclusion",
    "InjectionState",
    "NodeBriefView",
    "RouteAnswer",
    "RouteRequest",
    "RouteResult",
    "coerce_route_result",
]

BUILTIN_ROUTER = "builtin-hybrid"


@attrs.frozen
class Inclusion:
    """One node a recall picked, and why: ``seed``/``baseline`` (fused keyword/vector rank),
    ``drill_down`` (the best leaf under a rollup hit, ``via`` the rollup) or ``graph_expansion``
    (reached from ``via`` over ``edge_type``); ``detail`` names the signals and ranks."""

    id: str
    why: str
    score: float = 0.0
    via: str | None = None  # the seed, entity or rollup the node was reached from
    edge_type: str | None = None  # the relation from ``via`` (or the last hop) to this node
    hops: int = 0
    detail: str = ""  # e.g. "keyword #1, vector #4, graph #2, in time range"

    def describe(self) -> str:
        """A short human form: ``seed 0.67 (keyword #1)`` or ``via n_3 -[involved_in]- (1 hop)``."""
        extra = f" ({self.detail})" if self.detail else ""
        if self.why == "graph_expansion":
            plural = "" if self.hops == 1 else "s"
            return f"via {self.via} -[{self.edge_type or '?'}]- ({self.hops} hop{plural}){extra}"
        if self.why == "drill_down":
            return f"drill_down from {self.via} {self.score:.3f}{extra}"
        return f"{self.why} {self.score:.3f}{extra}"


@attrs.frozen
class RouteRequest:
    """What a router gets: the query, the candidate pool, the built-in router's fused ranking
    and a session to read the graph with.

    ``ranked`` is the fused, ranked, bounded candidate list (best first, at most
    ``recall_candidates`` + expansions), what an LLM router reranks. ``candidates`` is the whole
    pool (visible minus recent window, recency order) as a lazy sequence: it is read only when
    a router iterates it, which costs the pool's size.
    """

    chat_id: str
    query: str
    candidates: Sequence[Any]  # NodeView pool (visible minus recent window), recency order
    always_inject_ids: tuple[str, ...]
    session: Any
    settings: Mapping[str, Any] = attrs.field(factory=dict)
    seq: int = 0  # seq of the assistant message about to be written
    ranked: tuple[Inclusion, ...] = ()  # the built-in fused ranking, best first
    question_ids: tuple[str, ...] = ()  # the question's own nodes: in the prompt, never recalled
    #: chat index of the oldest message the prompt carries (a trimmed context window): the
    #: events of that message and later ones are in the prompt, never recalled; None: no window
    kept_from: int | None = None


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


#: What ``memgraph_route`` answers: a `RouteResult`, node ids, or ``{"selected": ids, "drill":
#: ids}`` (``coerce_route_result`` turns each into a `RouteResult`).
RouteAnswer = RouteResult | Sequence[str] | Mapping[str, Sequence[str]]
#: What ``memgraph_extract`` answers: batch-op dicts (``None``: nothing).
ExtractedOps = Sequence[Mapping[str, Any]] | None


def _id_list(value: Any, *, router: str, what: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"router {router} returned {what} {type(value).__name__}, not node ids")
    return [str(v) for v in value]


def coerce_route_result(value: Any, *, router: str) -> RouteResult:
    """Accept a plugin's answer: a ``RouteResult``, an iterable of node ids, or a mapping
    ``{"selected": ids, "drill": ids}`` (``drill``: seeds to dig into, as the contract's route
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
