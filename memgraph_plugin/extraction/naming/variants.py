"""Spelling variants of one name ("Muhhamed", "Muhammad", "Mohammed"), told apart from different
names that look alike ("Mara" / "Maria", "Caroline" / "Carolina", "Daniel" / "Danielle").

Conservative on purpose: a wrong merge joins two people for good, a missed one leaves two nodes
an LLM or the user can join. Two names are variants only when every test holds: the same number
of words, each word at least `MIN_LENGTH` letters, the same consonant skeleton
(`name_skeleton`: the index looks candidates up by it), the same first and last letter of each
word (an ending often marks another name: Carolina, Danielle), and a rapidfuzz similarity of the
words with doubled letters collapsed of at least `THRESHOLD`; and a skeleton of three letters
or more per word.
"""

from __future__ import annotations

from rapidfuzz import fuzz

from memgraph_plugin.engine.index.name_index import name_skeleton

__all__ = ["MIN_LENGTH", "THRESHOLD", "spelling_variant"]

MIN_LENGTH = 6  # shorter names differ by a letter too often (Mara/Maria, Karen/Koren)
THRESHOLD = 70.0  # rapidfuzz ratio (0-100) of the collapsed spellings


def _collapsed(word: str) -> str:
    out: list[str] = []
    for c in word:
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def spelling_variant(a: str, b: str) -> bool:
    """Whether `a` and `b` are two spellings of one name (see the module docstring)."""
    left, right = a.lower().split(), b.lower().split()
    if left == right or len(left) != len(right) or not left:
        return False
    skeleton = name_skeleton(a)
    if skeleton != name_skeleton(b) or any(len(w) < 3 for w in skeleton.split()):
        return False  # "Bailey" and "Billy" share "bl": too little to go on
    for x, y in zip(left, right, strict=True):
        if x == y:
            continue
        if min(len(x), len(y)) < MIN_LENGTH or x[0] != y[0] or x[-1] != y[-1]:
            return False
        if fuzz.ratio(_collapsed(x), _collapsed(y)) < THRESHOLD:
            return False
    return True
