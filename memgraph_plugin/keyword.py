"""Keyword search: the tokenizer (ASCII words + CJK character bigrams) and the inverted index.

A CJK run has no word breaks, so besides the rule "tokens are runs of ASCII letters/digits or CJK
ideographs, length >= 2" a CJK run is cut into overlapping character bigrams: the query "艾琳"
becomes the bigram "艾琳", which is also one of the bigrams of "我看见艾琳走进花园". Query and node
text are tokenized the same way, so ``score = matched distinct query tokens / distinct query
tokens`` stays a fraction of the query that was found.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from .models import Node
from .schema import NodeTypeSpec

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_SEGMENT = re.compile(rf"[a-z0-9]+|[{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")


def tokenize(text: str) -> list[str]:
    """Tokens of `text` in order (duplicates kept): ASCII words and CJK bigrams, length >= 2."""
    out: list[str] = []
    for seg in _SEGMENT.findall(text.lower()):
        if len(seg) < 2:
            continue
        if _IS_CJK.match(seg):
            out.extend(seg[i : i + 2] for i in range(len(seg) - 1))
        else:
            out.append(seg)
    return out


def token_set(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def _flatten(value: Any, out: list[str]) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, (int, float)):
        out.append(str(value))
    elif isinstance(value, Mapping):
        for v in value.values():
            _flatten(v, out)
    elif isinstance(value, Iterable):
        for v in value:
            _flatten(v, out)


def node_text(node: Node, spec: NodeTypeSpec | None) -> str:
    """What keyword search reads of a node: title, its schema columns, its type's keywords."""
    parts: list[str] = [node.title]
    fields = node.fields
    if spec is not None:
        for column in spec.table_columns:
            if column in fields:
                _flatten(fields[column], parts)
        parts.extend(spec.keywords)
    else:
        _flatten(fields, parts)
    return " ".join(parts)


class KeywordIndex:
    """token -> node ids, kept current node by node (`update` / `remove`)."""

    def __init__(self) -> None:
        self._postings: dict[str, set[str]] = {}
        self._tokens: dict[str, frozenset[str]] = {}

    def __len__(self) -> int:
        return len(self._tokens)

    def tokens_of(self, node_id: str) -> frozenset[str]:
        return self._tokens.get(node_id, frozenset())

    def update(self, node: Node, spec: NodeTypeSpec | None) -> None:
        """Index `node` (replacing what was indexed for its id)."""
        new = token_set(node_text(node, spec))
        old = self._tokens.get(node.id)
        if old == new:
            return
        postings = self._postings
        if old:
            for tok in old - new:
                ids = postings.get(tok)
                if ids is not None:
                    ids.discard(node.id)
                    if not ids:
                        del postings[tok]
            added = new - old
        else:
            added = new
        for tok in added:
            ids = postings.get(tok)
            if ids is None:
                postings[tok] = {node.id}
            else:
                ids.add(node.id)
        self._tokens[node.id] = new

    def remove(self, node_id: str) -> None:
        old = self._tokens.pop(node_id, None)
        if not old:
            return
        for tok in old:
            ids = self._postings.get(tok)
            if ids is not None:
                ids.discard(node_id)
                if not ids:
                    del self._postings[tok]

    def clear(self) -> None:
        self._postings.clear()
        self._tokens.clear()

    def search(
        self, query: str, allowed: Mapping[str, int], k: int | None = None
    ) -> list[tuple[str, float]]:
        """Ranked ``(id, score)`` over the ids in `allowed` (id -> rank, used to break ties).

        Only scores > 0; score descending, then `allowed` rank; cut to `k`.
        """
        q = token_set(query)
        if not q:
            return []
        counts: Counter[str] = Counter()
        for tok in q:
            ids = self._postings.get(tok)
            if ids:
                counts.update(ids)
        if not counts:
            return []
        n = len(q)
        hits = [(-c, allowed[i], i) for i, c in counts.items() if i in allowed]
        hits.sort()
        if k is not None:
            hits = hits[:k]
        return [(i, -c / n) for c, _, i in hits]
