"""The name forms an open computes for every named node: `name_items` and `numbered` are
written for speed and must read exactly like their plain definitions (kept here as the oracle)
on any text; spelling variants share a skeleton."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from memgraph_plugin.engine.index.name_index import name_items, name_skeleton, numbered

_NAMES = st.text(
    alphabet=st.one_of(
        st.sampled_from("aeiouyAEIOUY bcdmhlrst  _-,;|'.0123456789"),
        st.characters(),
    ),
    max_size=30,
)


@given(_NAMES)
def test_name_items_and_numbered_are_their_plain_definitions(value: str) -> None:
    plain = [p.strip() for p in re.split(r"[,;|]", value) if p.strip()]
    assert name_items(value) == plain
    assert numbered(value) == any(c.isdigit() for c in value)


def test_spelling_variants_share_a_skeleton() -> None:
    assert {name_skeleton(n) for n in ("Muhhamed", "Muhammad", "Mohammed")} == {"mhmd"}
    assert name_skeleton("Room 101") == "rm 101"
    assert name_skeleton("Anna_Lee") == "anl"
