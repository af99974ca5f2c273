"""Rows that repeat a row the block already has: a chat's canned replies ("I am not sure.",
"I'm not sure!") extracted as events of their own, or two nodes written for one thing, would
each cost a row that tells the model nothing new. The block keeps the first of them (the
pinned scene's newest, the best-ranked recalled one) and spends the room on the next-ranked
items.

Two rows of one type repeat each other when their content (every cell but the id, as the
prompt shows it: `render.content_text`) is equal once normalised (lower case, punctuation and
runs of blanks made one space), or nearly equal: a rapidfuzz ratio of at least `NEAR` with the
same numbers in both, so that "moved to Lisbon in 2019" and "... in 2021" stay two rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rapidfuzz import fuzz, process

from .render import content_text

__all__ = ["NEAR", "RowRepeats", "normalised"]

#: The rapidfuzz ratio (0-100) from which two normalised rows of one type say the same.
NEAR = 90.0
_PUNCTUATION = re.compile(r"[\W_]+")
_NUMBER = re.compile(r"\d+")


def normalised(text: str) -> str:
    """Lower case, every run of punctuation and blanks one space, no space at either end."""
    return _PUNCTUATION.sub(" ", text.lower()).strip()


class RowRepeats:
    """The rows kept so far, per type; `repeats` tells a row that says what one of them says."""

    def __init__(self, specs: Iterable[Any], max_cell: int | None) -> None:
        self._specs = list(specs)
        self._max_cell = max_cell
        self._kept: dict[str, dict[str, str]] = {}  # type -> normalised content -> its numbers

    def _key(self, node: Any) -> str:
        return normalised(content_text(node, self._specs, self._max_cell))

    def repeats(self, node: Any) -> bool:
        """Whether `node`'s row says what a kept row of its type says (see the module)."""
        key = self._key(node)
        kept = self._kept.get(node.type)
        if not key or not kept:
            return False
        if key in kept:
            return True
        numbers = " ".join(_NUMBER.findall(key))
        near = process.extract_iter(key, list(kept), scorer=fuzz.ratio, score_cutoff=NEAR)
        return any(kept[row] == numbers for row, _, _ in near)

    def keep(self, node: Any) -> None:
        """Count `node`'s row among the kept ones."""
        key = self._key(node)
        if key:
            self._kept.setdefault(node.type, {})[key] = " ".join(_NUMBER.findall(key))
