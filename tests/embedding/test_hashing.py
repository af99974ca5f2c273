"""The hashing profile's `embed` gives every text the bytes of its one-feature-at-a-time
definition (tests/embedding/hashing_definition.py), alone or among other texts: the stored
vectors of old chats and of re-imported nodes stay the same. Each bulk helper is checked
against the per-feature definition it computes in bulk."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memgraph_plugin.embedding import hashing
from memgraph_plugin.embedding.hashing import (
    BIGRAM_WEIGHT,
    CHAR_SIZES,
    CHAR_WEIGHT,
    WORD_WEIGHT,
    HashingProfile,
    batch_words,
    buckets,
    pair_features,
    word_features,
)

from . import hashing_definition as definition

# words of several kinds: ASCII, accented, CJK, digits of other scripts, signs that lower-case
# to ASCII (Kelvin) or to two characters (dotted capital I), underscores, a long one
_WORDS = st.sampled_from(
    ["the", "Guild", "harbor", "a", "x_y", "__", "9", "naïve", "café", "東京", "艾琳", "ß",
     "\u212a", "İstanbul", "\u00b2", "\u0661\u0662", "supercalifragilistic" * 3, "MIRA", "é"]
)  # fmt: skip
_SEPARATORS = st.sampled_from([" ", "  ", ", ", "\n", "!", "-", "\u3000", "\u00a0", "...", "'"])


@st.composite
def _texts(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:  # any characters at all
        return draw(st.text(max_size=40))
    parts = draw(st.lists(st.tuples(_WORDS, _SEPARATORS), max_size=12))
    return "".join(w + s for w, s in parts)


@given(st.lists(_texts(), max_size=30), st.integers(1, 8))
def test_embed_gives_each_text_the_bytes_of_its_definition(texts, batch):
    profile = HashingProfile(dim=64)
    original = hashing.BATCH
    hashing.BATCH = batch  # several batches, some of texts without words
    try:
        got = profile.embed(texts)
    finally:
        hashing.BATCH = original
    assert got.shape == (len(texts), 64)
    for row, text in zip(got, texts, strict=True):
        assert row.tobytes() == definition.vector(text, 64).tobytes(), text
        assert profile.embed_one(text).tobytes() == row.tobytes(), text


@given(st.lists(_texts(), max_size=20))
def test_batch_words_are_the_words_re_finds_in_each_lowered_text(texts):
    words, wid, sizes = batch_words(texts)
    assert len(set(words)) == len(words)
    got = [words[i] for i in wid.tolist()]
    expected = [w for t in texts for w in definition.TOKEN.findall(t.lower())]
    assert got == expected
    assert sizes.tolist() == [len(definition.TOKEN.findall(t.lower())) for t in texts]


@given(st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=30, unique=True))
def test_word_features_are_each_words_merged_features(words):
    # dimension 32: words' features share buckets
    offsets, idx, weight = word_features(words, 32, WORD_WEIGHT, CHAR_WEIGHT, CHAR_SIZES)
    assert weight.dtype == np.float32
    for k, word in enumerate(words):
        expected = definition.word_features(word, 32)
        span = slice(offsets[k], offsets[k + 1])
        got = dict(zip(idx[span].tolist(), weight[span].tolist(), strict=True))
        assert got.keys() == expected.keys()
        assert all(got[i] == float(np.float32(w)) for i, w in expected.items()), word


def test_buckets_and_pairs_are_the_per_feature_hash():
    features = ["w:the", "c:<th", "b:the guild", "w:東京", ""]
    idx, sign = buckets(features, 384)
    assert list(zip(idx.tolist(), sign.tolist(), strict=True)) == [
        definition.bucket(f, 384) for f in features
    ]
    words = ["the", "guild", "東京"]
    first, second = np.array([0, 1, 0, 2, 0]), np.array([1, 2, 1, 0, 0])
    p_idx, p_w = pair_features(words, first, second, 384, BIGRAM_WEIGHT)
    for k in range(5):
        i, w = definition.pair_feature(words[first[k]], words[second[k]], 384)
        assert (p_idx[k], p_w[k]) == (i, np.float32(w))


def test_a_hundred_rows_of_one_repeated_text_sum_in_text_order():
    # one text whose words fill few buckets many times: float32 sums that depend on order
    text = " ".join(["aaa", "bbb", "aaa", "ccc", "aaa", "bbb"] * 40)
    profile = HashingProfile(dim=8)
    got = profile.embed([text] * 100 + ["", "!"])
    one = definition.vector(text, 8)
    assert all(row.tobytes() == one.tobytes() for row in got[:100])
    assert not got[100:].any()


def test_batch_words_of_pieces_with_other_characters():
    # non-ASCII pieces: words that are also plain pieces, none, several, across texts
    texts = ["the\u3000guild café", "\u3000", "", "東京 the\u00a0x_y", "İstanbul", "the café"] * 3
    words, wid, sizes = batch_words(texts)
    assert len(set(words)) == len(words)
    assert [words[i] for i in wid.tolist()] == [
        w for t in texts for w in definition.TOKEN.findall(t.lower())
    ]
    assert sizes.tolist() == [len(definition.TOKEN.findall(t.lower())) for t in texts]
    assert set(words) == {w for t in texts for w in definition.TOKEN.findall(t.lower())}
