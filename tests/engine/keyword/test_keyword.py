"""Keyword tokenizer and BM25 index: ASCII words, CJK bigrams, scoring, ranking, upkeep."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from memgraph_plugin import DEFAULT_SCHEMA, Node
from memgraph_plugin.engine.keyword.keyword_index import (
    K1,
    B,
    KeywordIndex,
    idf,
    node_text,
    token_set,
    tokenize,
)


def test_tokenize_lower_cases_and_splits_on_other_characters() -> None:
    assert tokenize("Sword-fight in the INN!") == ["sword", "fight", "in", "the", "inn"]
    assert tokenize("a b c x2 42") == ["x2", "42"]  # length >= 2
    assert tokenize("café") == ["caf"]  # only ASCII letters form words
    assert tokenize("") == [] and tokenize("   ") == []


def test_tokenize_cuts_cjk_runs_into_bigrams() -> None:
    assert tokenize("艾琳") == ["艾琳"]
    assert tokenize("我看见艾琳") == ["我看", "看见", "见艾", "艾琳"]
    assert tokenize("abc艾琳def") == ["abc", "艾琳", "def"]
    assert tokenize("剑") == []  # a single ideograph is shorter than a token
    assert "艾琳" in token_set("我看见艾琳走进花园")


def test_node_text_is_title_schema_columns_and_type_keywords() -> None:
    spec = DEFAULT_SCHEMA.get("character_sheet")
    n = Node("a", "character_sheet", title="Eileen",
             fields={"aliases": ["艾琳", "Lina"], "traits": "kind", "secret": "hidden"})
    text = node_text(n, spec)
    for word in ("Eileen", "艾琳", "Lina", "kind", "character"):
        assert word in text
    assert "hidden" not in text  # not a schema column
    event = Node("e", "event", fields={"summary": "a duel"})
    assert "betrayal" in token_set(node_text(event, DEFAULT_SCHEMA.get("event")))


def _index(*nodes: Node) -> KeywordIndex:
    idx = KeywordIndex()
    for n in nodes:
        idx.update(n, DEFAULT_SCHEMA.get(n.type))
    return idx


def _bm25(docs: dict[str, list[str]], query: str) -> dict[str, float]:
    """Okapi BM25 written out plainly (k1 1.2, b 0.75, Lucene IDF), over the query's best."""
    q = token_set(query)
    n = len(docs)
    avg = sum(len(t) for t in docs.values()) / n
    df = Counter(tok for toks in docs.values() for tok in set(toks))
    best = sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * (K1 + 1) for t in q)
    out = {}
    for nid, toks in docs.items():
        tf = Counter(toks)
        s = 0.0
        for t in q:
            if tf[t]:
                w = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += w * tf[t] * (K1 + 1) / (tf[t] + K1 * (1 - B + B * len(toks) / avg))
        if s > 0:
            out[nid] = s / best
    return out


def test_idf_is_lucene_bm25_and_never_negative() -> None:
    assert idf(10, 1) == pytest.approx(math.log(1 + 9.5 / 1.5))
    assert idf(10, 10) > 0 and idf(10, 9) > idf(10, 10)


def test_rare_words_weigh_more_than_common_ones() -> None:
    idx = _index(
        Node("a", "thread", title="harbor storm"),
        Node("b", "thread", title="lantern storm"),
        Node("c", "thread", title="harbor bell"),
        Node("d", "thread", title="harbor tower"),
    )
    rank = {"a": 0, "b": 1, "c": 2, "d": 3}
    hits = idx.search("harbor lantern", rank)
    # one word each, same lengths: "lantern" (in one node) outweighs "harbor" (in three)
    assert [i for i, _ in hits] == ["b", "a", "c", "d"]
    assert hits[0][1] > 2 * hits[1][1]


def test_short_texts_beat_long_ones_with_the_same_match() -> None:
    idx = _index(
        Node("long", "thread", title="sword and many other words about the long night"),
        Node("short", "thread", title="sword fight"),
        Node("none", "thread", title="garden"),
    )
    hits = idx.search("sword", {"long": 0, "short": 1, "none": 2})
    assert [i for i, _ in hits] == ["short", "long"]
    assert 0 < hits[1][1] < hits[0][1] <= 1.0


def test_scores_are_bm25_over_the_best_possible_and_missing_words_count() -> None:
    idx = _index(
        Node("a", "thread", title="sword fight"),
        Node("b", "thread", title="sword"),
        Node("c", "thread", title="garden"),
    )
    rank = {"a": 0, "b": 1, "c": 2}
    docs = {n: tokenize(node_text(Node(n, "thread", title=t), DEFAULT_SCHEMA.get("thread")))
            for n, t in (("a", "sword fight"), ("b", "sword"), ("c", "garden"))}
    for query in ("sword fight inn", "sword", "SWORD sword garden", "fight"):
        expected = _bm25(docs, query)
        got = dict(idx.search(query, rank))
        assert got.keys() == expected.keys()
        for nid, score in got.items():
            assert score == pytest.approx(expected[nid], rel=1e-5)
    # an unknown word lowers the score: it could have matched
    with_inn = dict(idx.search("sword fight inn", rank))["a"]
    assert with_inn < dict(idx.search("sword fight", rank))["a"]
    assert idx.search("nothing here", rank) == []
    assert idx.search("", rank) == []


def test_search_ties_follow_the_allowed_rank_and_cut_to_k() -> None:
    idx = _index(*(Node(f"n{i}", "thread", title="harbor") for i in range(5)))
    rank = {"n3": 0, "n1": 1, "n4": 2, "n0": 3}  # n2 not allowed
    assert [i for i, _ in idx.search("harbor", rank)] == ["n3", "n1", "n4", "n0"]
    assert [i for i, _ in idx.search("harbor", rank, 2)] == ["n3", "n1"]
    assert [i for i, _ in idx.search("harbor", rank, 2, accept=lambda i: i != "n3")] == [
        "n1", "n4"]


def test_a_bounded_search_widens_until_k_admitted_hits_are_found() -> None:
    nodes = [Node(f"n{i}", "thread", title="harbor " * (1 + i % 7) + f"w{i}") for i in range(300)]
    idx = _index(*nodes)
    allowed = {f"n{i}": i for i in range(0, 300, 3)}  # a third of the nodes in the pool
    accept = lambda i: int(i[1:]) % 2 == 0  # noqa: E731
    full = idx.search("harbor", allowed, accept=accept)
    assert len(full) == 50
    for k in (1, 5, 20, 50, 80):
        assert idx.search("harbor", allowed, k, accept=accept) == full[:k]


def test_accept_is_asked_in_rank_order_only_until_k_are_admitted() -> None:
    """Hundreds of nodes tie at the cut: `accept` (a node read per call) is asked about the best
    few by rank, not about every tied node; the answer is the full search's first k."""
    idx = _index(*(Node(f"n{i:04d}", "thread", title="harbor") for i in range(600)),
                 *(Node(f"s{i}", "thread", title="harbor storm") for i in range(30)))
    asked: list[str] = []

    def accept(node_id: str) -> bool:
        asked.append(node_id)
        return not node_id.endswith("3")

    full = idx.search("harbor storm", None, accept=accept)
    for k in (5, 40):
        asked.clear()
        got = idx.search("harbor storm", None, k, accept=accept)
        assert got == full[:k]
        assert len(asked) < 2 * k + 10  # not the 600 tied at the cut
    assert [i for i, _ in full[:3]] == ["s0", "s1", "s10"] and full[27][0] == "n0000"


def test_cjk_word_matches_inside_a_longer_run() -> None:
    idx = _index(Node("e", "event", fields={"summary": "我看见艾琳走进花园"}),
                 Node("f", "event", fields={"summary": "没有人"}))
    assert [i for i, _ in idx.search("艾琳", {"e": 0, "f": 1})] == ["e"]
    full = idx.search("艾琳", {"e": 0, "f": 1})[0][1]
    hits = idx.search("艾琳走了", {"e": 0, "f": 1})  # bigrams 艾琳 琳走 走了: two of three
    assert [i for i, _ in hits] == ["e"] and 0 < hits[0][1] < full


def test_update_and_remove_keep_postings_current() -> None:
    idx = _index(Node("a", "thread", title="old name"))
    idx.update(Node("a", "thread", title="new name"), DEFAULT_SCHEMA.get("thread"))
    assert idx.search("old", {"a": 0}) == []
    assert [i for i, _ in idx.search("new", {"a": 0})] == ["a"]
    assert "new" in idx.tokens_of("a") and "old" not in idx.tokens_of("a")
    idx.remove("a")
    assert idx.search("name", {"a": 0}) == [] and len(idx) == 0
    assert idx.tokens_of("a") == frozenset()


def test_incremental_upkeep_equals_plain_bm25_after_many_writes() -> None:
    """Random inserts, rewrites (slots reused, stale postings compacted) and removals: the index
    scores exactly what BM25 over the current texts gives."""
    rng = random.Random(5)
    words = ["harbor", "storm", "lantern", "guild", "seal", "garden", "night", "bridge", "tower",
             "艾琳走进花园"]
    idx = KeywordIndex()
    docs: dict[str, list[str]] = {}
    spec = DEFAULT_SCHEMA.get("thread")
    for step in range(1500):
        nid = f"n{rng.randrange(120)}"
        if rng.random() < 0.15:
            idx.remove(nid)
            docs.pop(nid, None)
            continue
        title = " ".join(rng.choice(words) for _ in range(rng.randint(1, 9)))
        node = Node(nid, "thread", title=title)
        if rng.random() < 0.5:
            idx.update(node, spec)
        else:
            idx.update_many([(node, spec), (node, spec)])  # the same node twice in one batch
        docs[nid] = tokenize(node_text(node, spec))
        if step % 250 == 249:
            allowed = {n: i for i, n in enumerate(sorted(docs))}
            for query in ("harbor", "lantern night", "艾琳", "seal tower bridge"):
                expected = _bm25(docs, query)
                got = dict(idx.search(query, allowed))
                assert got.keys() == expected.keys()
                assert all(got[n] == pytest.approx(expected[n], rel=1e-5) for n in got)
    assert len(idx) == len(docs)


def test_search_over_every_indexed_node_breaks_ties_by_id() -> None:
    idx = _index(*(Node(f"n{i}", "thread", title="harbor") for i in (3, 1, 2)),
                 Node("x", "thread", title="garden"))
    assert [i for i, _ in idx.search("harbor", None)] == ["n1", "n2", "n3"]
    assert [i for i, _ in idx.search("harbor", None, 2, accept=lambda i: i != "n1")] == [
        "n2", "n3"]


def test_score_of_gives_the_search_score_of_known_ids() -> None:
    index = _index(
        Node("n_1", "event", fields={"summary": "storm over the harbor"}),
        Node("n_2", "event", fields={"summary": "the harbor market at dawn, market day"}),
        Node("n_3", "event", fields={"summary": "a quiet garden"}),
    )
    found = dict(index.search("harbor market", None, 10))
    scored = index.score_of("harbor market", ["n_1", "n_2", "n_3", "n_missing"])
    assert set(found) == {"n_1", "n_2"}
    for node_id, score in found.items():
        assert math.isclose(scored[node_id], score, rel_tol=1e-6)
    assert scored["n_3"] == scored["n_missing"] == 0.0
