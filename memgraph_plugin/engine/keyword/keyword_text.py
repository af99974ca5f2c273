"""What keyword search reads of a node and how it cuts text into tokens, plus the fingerprint of
both (a persisted index is used only when its fingerprint matches: `keyword_columns.py`).

A CJK run has no word breaks, so besides the rule "tokens are runs of ASCII letters/digits or CJK
ideographs, length >= 2" a CJK run is cut into overlapping character bigrams: the query "艾琳"
becomes the bigram "艾琳", which is also one of the bigrams of "我看见艾琳走进花园". Query and node
text are tokenized the same way.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..model.models import Node
from ..model.schema import NodeTypeSpec, Schema

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_SEGMENT = re.compile(rf"[a-z0-9]+|[{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")

#: bump when what `tokenize` / `node_text` produce changes in a way their source does not show
KEYWORD_FORMAT = 1


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


_ASCII_TOKEN = re.compile(r"[a-z0-9]{2,}")


def tokenize_many(texts: Iterable[str]) -> list[list[str]]:
    """`tokenize` of each text. An ASCII text's tokens are its runs of two or more ASCII
    letters and digits, found by one regex (what `tokenize` makes of it, without a Python
    step per token: an import tokenizes 100k nodes); other texts go through `tokenize`."""
    ascii_tokens = _ASCII_TOKEN.findall
    return [ascii_tokens(t.lower()) if t.isascii() else tokenize(t) for t in texts]


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


@functools.cache
def _code_digest() -> str:
    """The source of the functions above (an edit to them changes every fingerprint)."""
    try:
        text = "".join(inspect.getsource(f) for f in (tokenize, _flatten, node_text))
    except (OSError, TypeError):  # no source (a frozen build): the version number alone
        text = ""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=16)
def keyword_fingerprint(schema: Schema) -> str:
    """Which tokenizer and searchable fields made an index: the tokenizer's code and patterns,
    and each type's id, table columns and keywords (all `node_text` reads of a schema)."""
    parts = [f"keyword-format {KEYWORD_FORMAT}", _SEGMENT.pattern, _IS_CJK.pattern, _code_digest()]
    parts.extend(
        json.dumps([t.type, list(t.table_columns), list(t.keywords)], ensure_ascii=False)
        for t in schema.types
    )
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:32]
