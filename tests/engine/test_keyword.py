"""Keyword tokenizer and inverted index: ASCII words, CJK bigrams, scoring, ranking."""

from __future__ import annotations

from memgraph_plugin import DEFAULT_SCHEMA, Node
from memgraph_plugin.keyword import KeywordIndex, node_text, token_set, tokenize


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


def test_search_scores_are_matched_fraction_of_query_tokens() -> None:
    idx = _index(
        Node("a", "thread", title="sword fight"),
        Node("b", "thread", title="sword"),
        Node("c", "thread", title="garden"),
    )
    rank = {"a": 0, "b": 1, "c": 2}
    assert idx.search("sword fight inn", rank) == [("a", 2 / 3), ("b", 1 / 3)]
    assert idx.search("SWORD sword", rank) == [("a", 1.0), ("b", 1.0)]  # distinct tokens
    assert idx.search("nothing here", rank) == []
    assert idx.search("", rank) == []


def test_search_ties_follow_the_allowed_rank_and_cut_to_k() -> None:
    idx = _index(*(Node(f"n{i}", "thread", title="harbor") for i in range(5)))
    rank = {"n3": 0, "n1": 1, "n4": 2, "n0": 3}  # n2 not allowed
    assert [i for i, _ in idx.search("harbor", rank)] == ["n3", "n1", "n4", "n0"]
    assert [i for i, _ in idx.search("harbor", rank, 2)] == ["n3", "n1"]


def test_cjk_word_matches_inside_a_longer_run() -> None:
    idx = _index(Node("e", "event", fields={"summary": "我看见艾琳走进花园"}),
                 Node("f", "event", fields={"summary": "没有人"}))
    assert idx.search("艾琳", {"e": 0, "f": 1}) == [("e", 1.0)]
    hits = idx.search("艾琳走了", {"e": 0, "f": 1})  # bigrams 艾琳 琳走 走了: two of three
    assert hits == [("e", 2 / 3)]


def test_update_and_remove_keep_postings_current() -> None:
    idx = _index(Node("a", "thread", title="old name"))
    idx.update(Node("a", "thread", title="new name"), DEFAULT_SCHEMA.get("thread"))
    assert idx.search("old", {"a": 0}) == []
    assert idx.search("new", {"a": 0}) == [("a", 1.0)]
    idx.remove("a")
    assert idx.search("name", {"a": 0}) == [] and len(idx) == 0
