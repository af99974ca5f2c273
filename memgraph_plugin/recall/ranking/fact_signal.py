"""The fact signal: "what are X's hobbies" answered through the facts X's character sheet
gathered (`memgraph_plugin.extraction.facts`), not through the question's words alone.

A question that names a person and asks for a kind of fact (hobbies, job, family, plans...)
reads the values the person's sheet holds in the matching fields ("pottery", "camping") and
ranks the messages the sheet links as ``evidence`` by those values (BM25 of each value's words
over those messages only), spread over the facts: each value's best message first, then each
value's second, so the first ranks of "what activities has X done" cover swimming, pottery and
chess rather than three mentions of swimming. Bounded: one sheet per named person, at most
``GRAPH_SCAN`` edges and ``MAX_VALUES_READ`` values each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memgraph_plugin.extraction.facts import SHOWN_AS

from .signals import GRAPH_SCAN, Hit, usable

__all__ = ["FACT_CUES", "asked_fields", "fact_hits"]

EVIDENCE = "evidence"
MAX_VALUES_READ = 48  # fact values of one sheet scored per question at most
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


def fact_hits(session: Any, entity_ids: Sequence[str], terms: Sequence[str], k: int) -> list[Hit]:
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
        values = _asked_values(node, fields)
        if not values:
            continue
        evidence: list[str] = []
        for key in store.out_edges(entity, limit=GRAPH_SCAN):
            if key[1] == EVIDENCE:
                evidence.append(key[2])
        evidence = [e for e in dict.fromkeys(evidence) if usable(store.node(e))]
        if not evidence:
            continue
        for node_id, score in _round_robin(store, values, evidence):
            if node_id not in best or best[node_id][0] < score:
                best[node_id] = (score, entity)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
    return [
        Hit(node_id, score, via=entity, edge_type=EVIDENCE) for node_id, (score, entity) in ranked
    ]


def _asked_values(node: Any, fields: Sequence[str]) -> list[str]:
    """The sheet's values of the asked fields, in field order (hobbies before likes), each once:
    the fact field, else the table column it shows in (what an LLM extractor fills)."""
    values: list[str] = []
    for field in fields:
        for key in (field, SHOWN_AS.get(field, (field, ""))[0]):
            held = node.fields.get(key)
            if held:
                values.extend([held] if isinstance(held, str) else [str(v) for v in held])
                break
    return list(dict.fromkeys(v for v in values if v.strip()))


def _round_robin(
    store: Any, values: Sequence[str], evidence: Sequence[str]
) -> list[tuple[str, float]]:
    """Evidence messages spread over the facts: each value's best message first (BM25 of that
    value's words over the evidence only), then each value's second, and so on, so that the
    first ranks cover as many facts as there are, not one fact's many mentions. Scores fall
    by round, so the order survives sorting by score."""
    per_value: list[list[str]] = []
    for value in values[:MAX_VALUES_READ]:
        scores = store.keywords.score_of(value, evidence)
        ranked = sorted((-s, i) for i, s in scores.items() if s > 0)
        if ranked:
            per_value.append([i for _, i in ranked])
    out: list[tuple[str, float]] = []
    taken: set[str] = set()
    depth = max((len(r) for r in per_value), default=0)
    position = 0
    total = sum(len(r) for r in per_value) or 1
    for round_ in range(depth):
        for ranked in per_value:
            if round_ < len(ranked) and ranked[round_] not in taken:
                taken.add(ranked[round_])
                out.append((ranked[round_], 1.0 - position / total))
                position += 1
    return out
