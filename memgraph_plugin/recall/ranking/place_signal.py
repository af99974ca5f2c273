"""The place signal: "which cities has Jon visited?", "where did Caroline move from?" answered
through the places extraction typed, not through the question's words alone.

A question that asks for places (`PLACE_CUES`: "where", "which cities/countries/states...") and
names a person reads that person's messages (the ``involved_in`` edges of their character sheet,
the newest ``GRAPH_SCAN``) and keeps those that name a place (an ``occurred_at`` edge to a
``location_state``): "took a short trip last week to Rome" shares no word with the question but
is where Jon went. Ranked by the question's other words they hold (BM25), then the newest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memgraph_plugin.engine.keyword.keyword_index import tokenize

from .signals import GRAPH_SCAN, Hit, term_scores, usable

__all__ = ["PLACE_CUES", "asks_for_places", "place_hits"]

#: Question words that ask for a place (keyword tokens, lower case; "where" is a stop word of
#: the query terms, so cues are read from the question's own tokens).
PLACE_CUES = frozenset(
    {
        "where",
        "city",
        "cities",
        "country",
        "countries",
        "state",
        "states",
        "place",
        "places",
        "town",
        "towns",
        "area",
        "areas",
        "region",
        "regions",
        "location",
        "locations",
    }
)
INVOLVED = "involved_in"
AT_PLACE = "occurred_at"
PLACE = "location_state"
EVENT_EDGES = 16  # outgoing edges of one message read to find its places


def asks_for_places(query: str) -> bool:
    """Whether the question asks for a place (one of `PLACE_CUES` among its words)."""
    return not PLACE_CUES.isdisjoint(tokenize(query))


def place_hits(
    session: Any, people: Sequence[str], query: str, terms: Sequence[str], k: int
) -> list[Hit]:
    """The named people's messages that name a place, best first (see the module docstring);
    ``[]`` when the question asks for no place or names no person."""
    if not people or not asks_for_places(query):
        return []
    store = session.store
    found: dict[str, str] = {}  # message -> the person it was reached from
    for person in people:
        for key in store.out_edges(person, limit=GRAPH_SCAN, newest=True):
            if key[1] != INVOLVED or key[2] in found:
                continue
            for edge in store.out_edges(key[2], limit=EVENT_EDGES):
                place = store.node(edge[2]) if edge[1] == AT_PLACE else None
                if place is not None and place.type == PLACE:
                    found[key[2]] = person
                    break
    nodes = {i: store.node(i) for i in found}
    nodes = {i: n for i, n in nodes.items() if usable(n)}
    rest = [t for t in terms if t not in PLACE_CUES]
    overlap = term_scores(session, nodes, rest) if rest else {}
    ranked = sorted(nodes, key=lambda i: (-overlap.get(i, 0.0), -(nodes[i].seq_to or 0), i))
    return [Hit(i, overlap.get(i, 0.0), via=found[i], edge_type=INVOLVED) for i in ranked[:k]]
