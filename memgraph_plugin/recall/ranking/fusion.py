"""Reciprocal rank fusion of recall's signals, with time cues and a small recency prior.

Each signal is a ranked list; a node's fused score is the sum over the lists it is in of
``weight / (RRF_K + rank)`` (rank from 1). A node whose event time falls inside the question's
time range gains ``TIME_BOOST`` times its score; a near-empty message (`is_filler`) keeps
``FILLER_FACTOR`` of it; a message by a person the question names gains ``SPEAKER_BOOST`` times
its score; newer nodes gain a tie-breaking sliver.
Weights were tuned on the LoCoMo dev conversations (``bench/recall_locomo.py``), never per
question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..query import TimeRange, time_of
from .signals import Hit, is_filler

__all__ = ["FILLER_FACTOR", "Fused", "fuse", "is_filler"]

RRF_K = 10
WEIGHTS: Mapping[str, float] = {
    "keyword": 1.0, "vector": 0.1, "graph": 0.3, "facts": 0.6, "places": 1.0,
    "topic": 0.8,
}
TIME_BOOST = 1.0  # in range: score x (1 + TIME_BOOST)
RECENCY_PRIOR = 0.002  # at most this much, for the newest node
SPEAKER_BOOST = 1.0  # a message by a person the question names: score x (1 + SPEAKER_BOOST)
FILLER_FACTOR = 0.3  # a near-empty message ("Fair point.") keeps this share of its score


@attrs.frozen
class Fused:
    """One node's fused score and its rank in each signal that found it (1 = best)."""

    id: str
    score: float
    ranks: Mapping[str, int]
    in_time: bool = False

    def detail(self) -> str:
        """``keyword #1, vector #4, in time range`` — what the trace shows."""
        parts = [f"{name} #{rank}" for name, rank in self.ranks.items()]
        if self.in_time:
            parts.append("in time range")
        return ", ".join(parts)


def fuse(
    lists: Mapping[str, Sequence[Hit]],
    *,
    store: Any,
    weights: Mapping[str, float] | None = None,
    time_range: TimeRange | None = None,
    speakers: frozenset[str] = frozenset(),
) -> list[Fused]:
    """The nodes of all lists, best first (ties: newest, then id)."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    weights = WEIGHTS if weights is None else weights
    for name, hits in lists.items():
        weight = weights.get(name, 1.0)
        for rank, hit in enumerate(hits, 1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weight / (RRF_K + rank)
            ranks.setdefault(hit.id, {})[name] = rank
    newest = max(1, store.seq_counter)
    out: list[Fused] = []
    for node_id, score in scores.items():
        node = store.node(node_id)
        seq = (node.seq_to or 0) if node is not None else 0
        in_time = time_range is not None and node is not None and _in_range(store, node, time_range)
        if in_time:
            score *= 1 + TIME_BOOST
        if is_filler(node):
            score *= FILLER_FACTOR
        speaker = node.fields.get("speaker") if node is not None else None
        if speakers and isinstance(speaker, str) and speaker.lower() in speakers:
            score *= 1 + SPEAKER_BOOST  # the question asks about someone: their own words
        score += RECENCY_PRIOR * seq / newest
        out.append(Fused(node_id, score, ranks[node_id], in_time))
    out.sort(key=lambda f: (-f.score, -(_seq(store, f.id)), f.id))
    return out


def _seq(store: Any, node_id: str) -> int:
    node = store.node(node_id)
    return (node.seq_to or 0) if node is not None else 0


def _in_range(store: Any, node: Any, time_range: TimeRange) -> bool:
    """A node's time inside the range; a rollup counts when its newest child does."""
    for _ in range(32):
        when = time_of(node.fields)
        if when is not None:
            return time_range.contains(when)
        if not node.children_ids:
            return False
        node = store.node(node.children_ids[-1])
        if node is None:
            return False
    return False
