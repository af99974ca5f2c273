"""Text pieces the sample plugins share: stop words, name-list splitting, the CJK ranges.

The scout matches queries against rows, the compactor scores sentences, the curator splits
alias columns; each reads words the same way, so the rules live here once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

ASCII_WORD = re.compile(r"[a-z0-9]+")
CJK_CHAR = re.compile(r"[\u3400-\u9fff]")
CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_SEPARATORS = re.compile(r"[,;|]")

# Words that say nothing about what a query or a sentence is about.
_STOP_TEXT = """
    a about all an and any are as ask at be but by can did does for from had has have he her him
    his how in into is it its not of on one or our out said say she some tell than that the their
    them then there they this to was were what when where which while who why will with you your
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


def split_values(value: Any) -> list[str]:
    """A name or list column as separate values: a list as it is, a string split on ``, ; |``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [p.strip() for p in _SEPARATORS.split(value) if p.strip()]
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        return [str(v).strip() for v in value if str(v).strip()]
    return [str(value).strip()]


def is_cjk(word: str) -> bool:
    """Whether a word starts with a CJK character (the tokenizers keep those one by one)."""
    return bool(word) and "\u3400" <= word[0] <= "\u9fff"
