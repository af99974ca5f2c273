"""The fact signal: "what are X's hobbies" answered through the facts X's character sheet
gathered (`memgraph_plugin.extraction.facts`), not through the question's words alone.

A question that names a person and asks for a kind of fact (hobbies, job, family, plans...)
reads the values the person's sheet holds in the matching fields ("pottery", "camping") and
ranks the messages the sheet links as ``evidence`` by those values (BM25 of the values' words
over those messages only). Bounded: one sheet per named person, at most ``GRAPH_SCAN`` edges
each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memgraph_plugin.extraction.facts import SHOWN_AS

from .signals import GRAPH_SCAN, Hit, usable

__all__ = ["FACT_CUES", "asked_fields", "fact_hits"]

EVIDENCE = "evidence"
CHARACTER = "character_sheet"

#: The question words that ask for each fact field of a sheet (keyword tokens, lower case).
FACT_CUES: dict[str, frozenset[str]] = {
    field: frozenset(cues.split())
    for field, cues in {
        "hobbies": "hobby hobbies activity activities interest interests pastime pastimes "
        "destress fun",
        "likes": "favorite favourite favorites favourites activities interests",
        "dislikes": "dislike dislikes hate hates",
        "identity": "job jobs career profession occupation",
        "family": "family relatives",
        "relations": "friends mentors",
        "goal": "plans goals dreams",
        "traits": "personality traits",
    }.items()
}


def asked_fields(terms: Iterable[str]) -> list[str]:
    """The sheet fields a question's terms ask for (`FACT_CUES`), in `FACT_CUES` order."""
    words = set(terms)
    return [field for field, cues in FACT_CUES.items() if cues & words]


def fact_hits(
    session: Any, entity_ids: Sequence[str], terms: Sequence[str], k: int
) -> list[Hit]:
    """Evidence messages of the named people's asked-for facts, best first (see the module
    docstring); ``[]`` when the question asks for no kind of fact or names no person."""
    fields = asked_fields(terms)
    if not fields:
        return []
    store = session.store
    best: dict[str, tuple[float, str]] = {}
    for entity in entity_ids:
        node = store.node(entity)
        if node is None or node.type != CHARACTER:
            continue
        values: list[str] = []
        for field in fields:  # the fact field, else the table column it shows in: what an
            for key in (field, SHOWN_AS.get(field, (field, ""))[0]):  # LLM extractor fills
                held = node.fields.get(key)
                if held:
                    values.extend([held] if isinstance(held, str) else list(held))
                    break
        if not values:
            continue
        evidence: list[str] = []
        for seen, key in enumerate(store.out_edges(entity)):
            if seen >= GRAPH_SCAN:
                break
            if key[1] == EVIDENCE:
                evidence.append(key[2])
        if not evidence:
            continue
        scores = store.keywords.score_of(" ".join(str(v) for v in values), evidence)
        for node_id, score in scores.items():
            better = node_id not in best or best[node_id][0] < score
            if score > 0 and better and usable(store.node(node_id)):
                best[node_id] = (score, entity)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
    return [Hit(node_id, score, via=entity, edge_type=EVIDENCE) for node_id, (score, entity) in
            ranked]
