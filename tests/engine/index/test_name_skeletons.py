"""The skeletons of many names at once (`name_skeletons`: numpy over the ASCII names' bytes)
are each name's `name_skeleton`, for ASCII and other names, spaces, digits and punctuation."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin.engine.index.name_skeletons import BATCH_FROM, name_skeleton, name_skeletons

_CHARS = st.sampled_from([*"aeiouyAEIOUYbcdhmnrstzK  -'.,0123456789", "é", "É", "艾", "ſ", "K"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(_CHARS, max_size=14), max_size=3 * BATCH_FROM))
def test_each_skeleton_is_the_names(names: list[str]) -> None:
    assert name_skeletons(names) == [name_skeleton(name) for name in names]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=10), min_size=BATCH_FROM, max_size=2 * BATCH_FROM))
def test_any_text(names: list[str]) -> None:
    assert name_skeletons(names) == [name_skeleton(name) for name in names]


def test_known_skeletons_in_a_batch() -> None:
    names = ["Muhammad", "mohammed", "muhhamed", "Room 101", "Eileen", "", "  ", "O'Neil"]
    got = name_skeletons(names * BATCH_FROM)[: len(names)]
    assert got == ["mhmd", "mhmd", "mhmd", "rm 101", "eln", "", " ", "onl"]
