"""`token_columns.flat_tokens` (issue 31): the tokens of many texts cut by pyarrow are exactly
`keyword_text.tokenize`'s, row by row and in text order, CJK bigrams and the touching of ASCII
and CJK runs included."""

from __future__ import annotations

import random

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
