"""The name forms an open computes for every named node (`name_items`, `numbered`,
`name_skeleton`) are written for speed; they must read exactly like their plain definitions,
which these tests keep as the oracle, on any text."""

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


def _plain_skeleton(name: str) -> str:
    letters = [c for c in name.lower() if c.isalnum() or c == " "]
    out: list[str] = []
    for i, c in enumerate(letters):
        if c in "aeiouy" and i and letters[i - 1] != " ":
            continue
        if out and out[-1] == c:
            continue
        out.append(c)
    return "".join(out)


@given(_NAMES)
def test_the_skeleton_is_its_plain_definition(name: str) -> None:
    assert name_skeleton(name) == _plain_skeleton(name)


@given(_NAMES)
def test_name_items_and_numbered_are_their_plain_definitions(value: str) -> None:
    plain = [p.strip() for p in re.split(r"[,;|]", value) if p.strip()]
    assert name_items(value) == plain
    assert numbered(value) == any(c.isdigit() for c in value)


def test_spelling_variants_share_a_skeleton() -> None:
    assert {name_skeleton(n) for n in ("Muhhamed", "Muhammad", "Mohammed")} == {"mhmd"}
    assert name_skeleton("Room 101") == "rm 101"
    assert name_skeleton("Anna_Lee") == "anl"
