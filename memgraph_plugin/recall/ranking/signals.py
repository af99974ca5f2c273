"""The bounded signals recall fuses: keyword, vector, the graph walk from named entities, and
the drill from a rollup down to its best children.

Every function here asks for a bounded number of results or reads a bounded neighbourhood
(``GRAPH_SCAN`` edges an entity at most), never every node or edge of the chat.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import attrs

from memgraph_plugin.engine.model.schema import is_diagnostic_type
from memgraph_plugin.extraction.titles import content_words

from ..query import STOP_WORDS

log = logging.getLogger(__name__)

# relations extraction writes between an entity (character, place, thread) and an event
ENTITY_RELATIONS = frozenset({"involved_in", "mentions", "occurred_at", "evidence", "advances"})
GRAPH_SCAN = 2000  # edges read per named entity at most
#: Edges `entity_events` reads per named entity, the newest: a person in every message of a
#: long chat reaches their recent events this way (keyword and vector reach the rest). 600 cost
#: the dev chats' multi-hop 2 points (their speakers pass it), so the budget stays 2,000.
ENTITY_SCAN = GRAPH_SCAN
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
FOLLOWS = "follows"  # event -> the event before it (the offline extractor writes it)
FILLER_WORDS = 2  # a message of at most this many content words is near-empty...
FILLER_LENGTH = 6  # ... and at most this many words


@attrs.frozen
class Hit:
    """One node a signal found: its score and, for the graph walk, how it was reached."""

    id: str
    score: float
    via: str | None = None
    edge_type: str | None = None


def is_filler(node: Any) -> bool:
    """A message event that says next to nothing ("Fair point.", "Thanks, Mel!"): no question,
    at most `FILLER_WORDS` content words (`titles.content_words`) in at most `FILLER_LENGTH`
    words. Rollups never are."""
    if node is None or node.semantic_rollup or "message" not in node.fields:
        return False
    summary = node.fields.get("summary")
    if not isinstance(summary, str) or "?" in summary or len(summary.split()) > FILLER_LENGTH:
        return False
    return len(content_words(summary)) <= FILLER_WORDS


def usable(node: Any) -> bool:
    """A node recall may inject: active, not a recall diagnostic, not episodic."""
    return (
        node is not None
        and not node.archived
        and not is_diagnostic_type(node.type)
        and getattr(node, "level", "semantic") != "episodic"
    )


# -- keyword --------------------------------------------------------------------------------------


class TermScorer:
    """The BM25 scores of nodes for one query's terms (``keywords.score_of``), each node scored
    once: a recall re-scores the same nodes for the neighbour context and again at every level
    of every drill (twice per rollup hit: the baseline and the fused ranking). Made per recall,
    it holds only the nodes it was asked about."""

    def __init__(self, store: Any, terms: Sequence[str]) -> None:
        self._index = store.keywords
        self.query = " ".join(terms)
        self._memo: dict[str, float] = {}

    def __call__(self, node_ids: Iterable[str]) -> dict[str, float]:
        memo = self._memo
        ids = list(node_ids)
        missing = [i for i in dict.fromkeys(ids) if i not in memo]
        if missing:
            memo.update(self._index.score_of(self.query, missing))
        return {i: memo[i] for i in ids}


def keyword_hits(
    session: Any,
    terms: Sequence[str],
    k: int,
    *,
    context: float = 0.0,
    scorer: TermScorer | None = None,
    exclude: Collection[str] = (),
) -> list[Hit]:
    """The `k` best nodes for the query terms by Okapi BM25 over every active node (leaves
    under rollups included), from the store's index (``keywords.search``, a bounded `k`).

    ``context`` > 0: a node also gains that share of its best neighbour's score (the message
    before or after it, over ``follows`` edges, else its siblings under the same rollup), so a
    reply is found by the question it answers; neighbours of the hits join the ranking.
    ``scorer``: the recall's `TermScorer` for `terms` (its memo is shared with the drill);
    ``exclude``: nodes never found nor lent as context (the question's own event)."""
    store = session.store
    index = store.keywords
    scorer = scorer or TermScorer(store, terms)
    found = index.search(
        scorer.query, None, k, accept=lambda i: i not in exclude and usable(store.node(i))
    )
    hits = [Hit(i, s) for i, s in found]
    if not context or not hits:
        return hits
    own = {h.id: h.score for h in hits}
    near_of = {h.id: neighbours(store, h.id) for h in hits}
    pool = dict.fromkeys(own)
    for h in hits:
        pool.update(dict.fromkeys(n for n in near_of[h.id] if usable(store.node(n))))
    for node_id in pool:
        if node_id not in near_of:
            near_of[node_id] = neighbours(store, node_id)
    unknown = {n for ns in near_of.values() for n in ns} | set(pool)
    own.update(scorer([i for i in unknown if i not in own]))
    for node_id in exclude:  # the question itself lends its words to no neighbour
        own[node_id] = 0.0
    scored = []
    for node_id in pool:
        near = max((own.get(n, 0.0) for n in near_of[node_id]), default=0.0)
        scored.append((-(own[node_id] + context * near), node_id))
    scored.sort()
    return [Hit(i, -neg) for neg, i in scored[:k]]


def neighbours(store: Any, node_id: str) -> list[str]:
    """The messages next to an event: over ``follows`` edges (both ways), else the siblings
    next to it under its parent rollup."""
    out = [key[2] for key in store.out_edges(node_id) if key[1] == FOLLOWS]
    out += [key[0] for key in store.in_edges(node_id) if key[1] == FOLLOWS]
    if out:
        return out
    node = store.node(node_id)
    parent = store.node(node.parent_id) if node is not None and node.parent_id else None
    if parent is None:
        return []
    kids = list(parent.children_ids)
    if node_id not in kids:
        return []
    i = kids.index(node_id)
    return [kids[j] for j in (i - 1, i + 1) if 0 <= j < len(kids)]


def term_scores(session: Any, node_ids: Iterable[str], terms: Sequence[str]) -> dict[str, float]:
    """Each node's BM25 score for the query terms, in (0, 1] (0: none of them)."""
    return session.store.keywords.score_of(" ".join(terms), node_ids)


# -- vector ---------------------------------------------------------------------------------------


async def vector_hits(session: Any, query: str, k: int) -> tuple[list[Hit], bool]:
    """The `k` nearest nodes by embedding; ``(hits, False)`` when no profile answers."""
    try:
        ranked = await session.vector_search(query=query, k=k)
    except Exception as exc:  # NO_EMBEDDING_PROFILE or a broken index: no vector signal
        log.info("vector search unavailable: %s", exc)
        return [], False
    store = session.store
    return [Hit(r.id, float(r.score)) for r in ranked if usable(store.node(r.id))], True


# -- the graph walk from named entities -----------------------------------------------------------


def named_entities(
    session: Any, text: str, keyword: Sequence[Hit], terms: Sequence[str]
) -> list[str]:
    """Latest-only nodes (characters, places, threads) the message names: its 1-3 word phrases
    looked up in the name index, plus keyword hits of those types whose title words it uses."""
    store = session.store
    schema = store.schema
    specs = [s for s in schema.types if s.latest_only]
    if not specs:
        return []
    names = store.name_index()
    words = [w.lower().removesuffix("'s").removesuffix("’s") for w in _WORD.findall(text)]
    found: dict[str, None] = {}
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            phrase = " ".join(words[i : i + size])
            if size == 1 and phrase in STOP_WORDS:
                continue
            for spec in specs:
                for node_id in sorted(names.ids.get((spec.type, phrase), ())):
                    found.setdefault(node_id, None)
    latest = {s.type for s in specs}
    wanted = set(terms)
    for hit in keyword:
        node = store.node(hit.id)
        if node is not None and node.type in latest and set(_title_words(node.title)) & wanted:
            found.setdefault(hit.id, None)
    return [i for i in found if usable(store.node(i))]


def _title_words(title: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(title or "")]


def entity_events(
    session: Any, entity_ids: Sequence[str], terms: Sequence[str], k: int
) -> list[Hit]:
    """Nodes joined to the named entities by the relations extraction writes (``involved_in``,
    ``mentions``, ``occurred_at``, ...), best first: a node tied to more of the entities first,
    then by how many of the other query terms it holds (IDF-weighted), then the newest. At most
    ``ENTITY_SCAN`` edges are read per entity, the newest."""
    store = session.store
    name_words: set[str] = set()
    for entity in entity_ids:
        node = store.node(entity)
        if node is not None:
            name_words.update(_title_words(node.title))
    rest = [t for t in terms if t not in name_words]
    reached: dict[str, list[tuple[str, str]]] = {}
    for entity in entity_ids:
        out = store.out_edges(entity, limit=ENTITY_SCAN, newest=True)
        into = store.in_edges(entity, limit=ENTITY_SCAN - len(out), newest=True)
        for keys, end in ((out, 2), (into, 0)):
            for key in keys:
                if key[1] not in ENTITY_RELATIONS:
                    continue
                other = key[end]
                if other in entity_ids:
                    continue
                reached.setdefault(other, []).append((entity, key[1]))
    scored: list[tuple[float, int, str]] = []
    overlaps = term_scores(session, reached, rest) if rest else {}
    for node_id, links in reached.items():
        node = store.node(node_id)
        if not usable(node):
            continue
        tied = len({e for e, _ in links})
        overlap = overlaps.get(node_id, 0.0)
        scored.append((-(tied + overlap), -(node.seq_to or 0), node_id))
    scored.sort()
    out = []
    for neg, _seq, node_id in scored[:k]:
        entity, relation = reached[node_id][0]
        out.append(Hit(node_id, -neg, via=entity, edge_type=relation))
    return out


# -- drill down from a rollup ---------------------------------------------------------------------


def drill_down(
    session: Any,
    rollup_id: str,
    terms: Sequence[str],
    width: int = 2,
    *,
    scorer: TermScorer | None = None,
) -> list[str]:
    """The best leaves under a rollup for the query: at each level the child holding most of
    the terms (IDF-weighted; ties: the newest), down to a leaf; ``width`` leaves at most (the
    best child's leaf, then the runner-up's). Reads only the rollup's own subtree path.
    ``scorer``: the recall's `TermScorer` for `terms` (nodes scored once per recall)."""
    store = session.store
    scorer = scorer or TermScorer(store, terms)

    def best_children(node_id: str) -> list[str]:
        node = store.node(node_id)
        if node is None:
            return []
        kids = {c: kid for c in node.children_ids if usable(kid := store.node(c))}
        score = scorer(kids)
        return sorted(  # a near-empty message last: it answers nothing
            kids, key=lambda c: (is_filler(kids[c]), -score[c], -(kids[c].seq_to or 0), c)
        )

    out: list[str] = []
    for start in best_children(rollup_id)[:width]:
        current = start
        for _ in range(32):  # deeper than any compaction tree
            kids = best_children(current)
            if not kids:
                break
            current = kids[0]
        out.append(current)
    return out
