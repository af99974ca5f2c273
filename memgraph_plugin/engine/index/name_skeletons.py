"""A name's consonant skeleton (`name_skeleton`), and the skeletons of many names at once
(`name_skeletons`), with numpy over the ASCII names' bytes.

An open builds the name index of every named node of a chat (15k nodes, ~10k distinct names
at 100k nodes): a character loop per name was a third of that build, on the first message's
path. ASCII names (almost all) are skeletonised together: the letters, digits and spaces kept
by a byte table, a vowel dropped unless it begins the name or follows a space, then runs of
one character collapsed; other names go through `name_skeleton`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BATCH_FROM", "name_skeleton", "name_skeletons"]

_VOWELS = frozenset("aeiouy")


def name_skeleton(name: str) -> str:
    """A name's consonant skeleton: its first letter, then its consonants and digits, doubled
    letters collapsed ("muhhamed", "muhammad", "mohammed" -> "mhmd"; "room 101" -> "rm 101").
    Spelling variants of one name share it; the index keeps names by it so that a variant is
    looked up, never searched for."""
    letters = [c for c in name.lower() if c.isalnum() or c == " "]
    out: list[str] = []
    for i, c in enumerate(letters):
        if c in _VOWELS and i and letters[i - 1] != " ":
            continue
        if out and out[-1] == c:
            continue
        out.append(c)
    return "".join(out)


_KEPT = np.zeros(256, dtype=bool)  # what `name_skeleton` keeps of a lower-cased ASCII name
_KEPT[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789 ", dtype=np.uint8)] = True
_VOWEL = np.zeros(256, dtype=bool)
_VOWEL[np.frombuffer(b"aeiouy", dtype=np.uint8)] = True
_SPACE = ord(" ")


#: fewer names than this are skeletonised one by one (a write's few: numpy's calls cost more)
BATCH_FROM = 64


def name_skeletons(names: list[str]) -> list[str]:
    """`[name_skeleton(name) for name in names]`, the ASCII names in one numpy pass."""
    if len(names) < BATCH_FROM:
        return [name_skeleton(name) for name in names]
    out = [""] * len(names)
    ascii_at: list[int] = []
    for i, name in enumerate(names):
        if name.isascii():
            ascii_at.append(i)
        else:
            out[i] = name_skeleton(name)
    if not ascii_at:
        return out
    texts = [names[i].lower() for i in ascii_at]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    raw = np.frombuffer("".join(texts).encode("ascii"), dtype=np.uint8)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    kept = _KEPT[raw]
    chars, owner = raw[kept], owner[kept]
    # a vowel goes unless it is the name's first kept character or follows a space
    first = np.ones(len(chars), dtype=bool)
    first[1:] = owner[1:] != owner[:-1]
    after_space = np.zeros(len(chars), dtype=bool)
    after_space[1:] = chars[:-1] == _SPACE
    stay = ~(_VOWEL[chars] & ~first & ~after_space)
    chars, owner = chars[stay], owner[stay]
    # a character the one before it in the same name repeats goes (runs collapse to one)
    repeat = np.zeros(len(chars), dtype=bool)
    repeat[1:] = (chars[1:] == chars[:-1]) & (owner[1:] == owner[:-1])
    chars, owner = chars[~repeat], owner[~repeat]
    ends = np.cumsum(np.bincount(owner, minlength=len(texts))).tolist()
    joined = chars.tobytes().decode("ascii")
    start = 0
    for i, end in zip(ascii_at, ends, strict=True):
        out[i] = joined[start:end]
        start = end
    return out
