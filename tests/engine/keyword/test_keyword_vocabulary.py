"""The stored keyword vocabulary: look-ups by bisection over its sorted parts (UTF-8 byte order
equals code-point order), misses remembered until the token is added."""

from __future__ import annotations

import pyarrow as pa

from memgraph_plugin.engine.keyword.keyword_columns import Vocabulary


def test_lookups_find_every_stored_token_and_no_other() -> None:
    words = sorted({"harbor", "guild", "艾琳", "花园", "zeta", "a", "ab", "abc", "é", "ö", "z"})
    first, second = words[:6], sorted(["storm", "花", "éclair", "b"])
    sliced = pa.array(["pad", *second, "pad"])[1:-1]  # a slice: offsets start mid-buffer
    vocab = Vocabulary([pa.array(first, pa.large_string()), sliced])
    for i, w in enumerate(first + second):
        assert vocab.get(w) == i, w
    for missing in ("", "aa", "harbour", "艾", "zz", "storms", "0"):
        assert vocab.get(missing) is None, missing


def test_a_remembered_miss_does_not_hide_a_token_added_later() -> None:
    vocab = Vocabulary([pa.array(["harbor", "storm"])])
    assert vocab.get("lantern") is None
    assert vocab.get("lantern") is None  # remembered
    tid = vocab.add_new("lantern")
    assert tid == 2 and vocab.get("lantern") == 2 and vocab.term(2) == "lantern"
    assert vocab.get("storm") == 1 and vocab.term(1) == "storm"
