"""`token_columns.flat_tokens`: the tokens of many texts cut by pyarrow are exactly
`keyword_text.tokenize`'s, row by row and in text order, CJK bigrams and the touching of ASCII
and CJK runs included."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin.engine.keyword.keyword_text import tokenize
from memgraph_plugin.engine.keyword.token_columns import flat_tokens


def _expected(texts: list[str]) -> tuple[list[str], list[int]]:
    per_text = [tokenize(t) for t in texts]
    return [w for t in per_text for w in t], [i for i, t in enumerate(per_text) for _ in t]


def _same(texts: list[str]) -> None:
    words, rows = flat_tokens(texts)
    assert (words.to_pylist(), rows.tolist()) == _expected(texts), texts


def test_the_shapes_tokenize_knows():
    _same(
        [
            "",
            "A",
            "AB-cd_EF 12 3 x9",
            "naïve café",
            "龙之谷 的 背叛 dragon",
            "\x00ab\tcd",
            "ab艾琳cd",  # ASCII and CJK runs touching: two segments each side
            "a艾",
            "艾",
            "x龙之y",
            "KELVIN \u212a\u212a",  # the Kelvin sign lower-cases to an ASCII k
            "İstanbul",
            "𠀀𠀁ab",  # ideographs beyond the BMP
            "abc  def\n\nghi",
        ]
    )
    words, rows = flat_tokens([])
    assert len(words) == 0 and rows.tolist() == []


def test_random_texts_tokenize_as_one_by_one():
    rng = random.Random(31)
    alphabet = [*"abcXYZ019 _-.,\n\t", "艾", "琳", "龙", "é", "\u212a", "İ", "𠀀", "ß"]
    for _ in range(2000):
        texts = [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
            for _ in range(rng.randint(1, 6))
        ]
        _same(texts)


# code points at the edges of the CJK ranges (`keyword_text._CJK`), of UTF-8's byte lengths,
# and ones `str.lower` turns into ASCII or into two characters
_EDGES = [
    *"aZ09 -\x00\x7f",
    *map(chr, (0x80, 0x7FF, 0x800, 0x33FF, 0x3400, 0x4DBF, 0x4DC0, 0x4DFF, 0x4E00, 0x9FFF)),
    *map(chr, (0xA000, 0xF8FF, 0xF900, 0xFAFF, 0xFB00, 0xFFFF, 0x10000, 0x1FFFF, 0x20000)),
    *map(chr, (0x2A6DF, 0x2FFFF, 0x30000, 0x10FFFF, 0x212A, 0x130, 0xDF, 0x3000)),
]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.text(st.one_of(st.sampled_from(_EDGES), st.characters(exclude_categories=["Cs"]))),
        max_size=8,
    )
)
def test_any_texts_tokenize_as_one_by_one(texts):
    _same(texts)


def test_texts_cut_in_chunks_tokenize_as_one_by_one(monkeypatch):
    """A long list is cut a few thousand texts at a time; the rows run on across the chunks."""
    from memgraph_plugin.engine.keyword import token_columns

    monkeypatch.setattr(token_columns, "_CHUNK", 3)
    rng = random.Random(5)
    alphabet = [*"ab 1", "艾", "琳"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(40)]
    _same(texts)
    _same(["", "", "", "", "ab"])


def test_every_pair_of_edge_characters_tokenizes_as_one_by_one():
    _same([a + b for a in _EDGES for b in _EDGES] + [a + b + a for a in _EDGES for b in "艾z"])


def _node_text_tokens(types, titles, fields):
    from memgraph_plugin.engine.keyword.keyword_text import node_text
    from memgraph_plugin.engine.keyword.token_columns import _Readable
    from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA

    return [
        tokenize(node_text(_Readable(t or "", f or {}), DEFAULT_SCHEMA.get(k)))
        for k, t, f in zip(types, titles, fields, strict=True)
    ]


_KINDS = ["event", "character_sheet", "location_state", "thread", "Event", "custom_kind"]
_WORDS = st.sampled_from(["harbor", "storm", "Guild", "x", "7", "艾琳", "a b", ""])
_FIELD = st.one_of(
    _WORDS,
    st.none(),
    st.booleans(),
    st.integers(-5, 500),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.lists(_WORDS, max_size=3),
    st.dictionaries(st.sampled_from(["a", "b"]), _WORDS, max_size=2),
)
_COLUMNS = ["summary", "title", "aliases", "traits", "goal", "status", "note", "other"]


_FIELDS = st.dictionaries(st.sampled_from(_COLUMNS), _FIELD, max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_KINDS), st.one_of(_WORDS, st.none()), _FIELDS), max_size=12)
    | st.lists(
        st.tuples(
            st.one_of(st.sampled_from(_KINDS), st.none()),
            st.one_of(_WORDS, st.none()),
            st.one_of(_FIELDS, st.none()),
        ),
        max_size=6,
    )
)
def test_texts_made_a_column_at_a_time_have_node_texts_tokens(nodes):
    from memgraph_plugin.engine.keyword.token_columns import token_texts
    from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA

    types, titles, fields = (list(c) for c in zip(*nodes, strict=True)) if nodes else ([], [], [])
    texts = token_texts(types, titles, fields, DEFAULT_SCHEMA)
    assert [tokenize(t) for t in texts] == _node_text_tokens(types, titles, fields)
