"""`keyword_text.tokenize` of many texts at once, as one flat column of tokens.

An import tokenizes every node (100k, some 10 MB of text): one regex call per text, then a
Python list per text to count, flatten and encode again. Here the texts are lower-cased by
Python (exactly `tokenize`'s ``str.lower``) and cut with numpy over their UTF-8 bytes, with no
Python step per token: each character is classed as an ASCII letter or digit, a CJK ideograph
(its code point decoded from its bytes) or anything else; a segment is a run of one class
within a text (`tokenize`'s ``[a-z0-9]+|[CJK]+``: an ASCII run and a CJK run that touch are
two segments). Segments of at least two characters are kept, a CJK one as its overlapping
character bigrams. The tokens come out row by row, each row's in text order: the same list as
``[w for t in texts for w in tokenize(t)]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model.schema import NodeTypeSpec, Schema
from .keyword_text import _flatten, node_text

__all__ = ["flat_tokens", "token_texts"]

#: texts cut at once (bounds the per-byte arrays of a huge import)
_CHUNK = 1 << 15
#: byte value -> 1 for an ASCII letter or digit (after lower-casing: a-z, 0-9)
_ASCII_WORD = np.zeros(256, dtype=np.int8)
_ASCII_WORD[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)] = 1
_ASCII, _CJK = 1, 2
#: the CJK code point ranges of `keyword_text._CJK` (inclusive)
_CJK_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FFFF))


def flat_tokens(texts: Sequence[str]) -> tuple[pa.Array, np.ndarray]:
    """`(tokens, rows)`: the tokens of every text as one string array, in row order and each
    row's in text order (what `tokenize` gives each), and the row (index into `texts`) of each
    token as int64."""
    parts: list[tuple[pa.Array, np.ndarray]] = []
    for first in range(0, len(texts), _CHUNK):
        tokens, rows = _cut([t.lower() for t in texts[first : first + _CHUNK]])
        parts.append((tokens, rows + first))
    if not parts:
        return pa.array([], pa.string()), np.zeros(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0]
    return (
        pa.concat_arrays([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
    )


def _kinds(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per byte of UTF-8 `data`: the class of the character it belongs to (0 other, `_ASCII`,
    `_CJK`); and the first byte and the end of each CJK character, in order."""
    kind = _ASCII_WORD[data]
    lead = np.flatnonzero(data >= 0xE0)  # the first byte of a 3- or 4-byte character
    if not len(lead):
        return kind, lead, lead
    padded = np.concatenate([data, np.zeros(3, dtype=np.uint8)])
    b0 = padded[lead].astype(np.int64)
    b1, b2, b3 = (padded[lead + i].astype(np.int64) & 0x3F for i in (1, 2, 3))
    four = b0 >= 0xF0
    point = np.where(
        four,
        ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3,
        ((b0 & 0x0F) << 12) | (b1 << 6) | b2,
    )
    hit = np.zeros(len(point), dtype=bool)
    for low, high in _CJK_RANGES:
        hit |= (point >= low) & (point <= high)
    first = lead[hit]
    end = first + np.where(four[hit], 4, 3)
    for i in range(4):
        at = first + i
        kind[at[at < end]] = _CJK
    return kind, first, end


def _cut(lowered: list[str]) -> tuple[pa.Array, np.ndarray]:
    """`flat_tokens` of already lower-cased texts (rows from 0)."""
    column = pa.array(lowered, pa.large_string())
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int64)[: len(lowered) + 1]
    raw = column.buffers()[2]
    size = int(offsets[-1])
    if raw is None or not size:
        return pa.array([], pa.string()), np.zeros(0, dtype=np.int64)
    data = np.frombuffer(raw, dtype=np.uint8)[:size]
    kind, cjk_first, cjk_end = _kinds(data)
    # a segment: a run of one class (ASCII or CJK) within a row
    cut = kind[1:] != kind[:-1]
    inner = offsets[1:-1]
    cut[inner[(inner > 0) & (inner < size)] - 1] = True  # a row starts after it
    word = kind > 0
    opens = word.copy()
    opens[1:] &= cut
    closes = word
    closes[:-1] &= cut
    seg_first = np.flatnonzero(opens)
    seg_end = np.flatnonzero(closes) + 1
    cjk = kind[seg_first] == _CJK
    keep = cjk | (seg_end - seg_first >= 2)  # an ASCII word: two bytes or more
    seg_first, seg_end, cjk = seg_first[keep], seg_end[keep], cjk[keep]
    # tokens per segment: one ASCII word, or a CJK run's n - 1 bigrams (none for n = 1)
    per = np.ones(len(seg_first), dtype=np.int64)
    k0 = np.searchsorted(cjk_first, seg_first[cjk])
    per[cjk] = np.searchsorted(cjk_first, seg_end[cjk]) - k0 - 1
    total = int(per.sum())
    # each row's segments follow the previous row's
    seg_row = np.repeat(
        np.arange(len(lowered), dtype=np.int64), np.diff(np.searchsorted(seg_first, offsets))
    )
    rows = np.repeat(seg_row, per)
    plain = ~cjk
    words = byte_slices(data, seg_first[plain], seg_end[plain])
    if not cjk.any():
        return words, rows
    # CJK bigrams: character k and k + 1 of the run
    runs = per[cjk]
    step = np.arange(int(runs.sum())) - np.repeat(np.cumsum(runs) - runs, runs)
    k = np.repeat(k0, runs) + step
    bigrams = _gathered(data, cjk_first[k], cjk_end[k + 1])
    at_word = np.repeat(plain, per)  # per token: an ASCII word (else a bigram)
    order = np.empty(total, dtype=np.int64)
    order[at_word] = np.arange(len(words))
    order[~at_word] = len(words) + np.arange(len(bigrams))
    return pa.concat_arrays([words, bigrams]).take(pa.array(order)), rows


def byte_slices(data: np.ndarray, first: np.ndarray, end: np.ndarray) -> pa.Array:
    """The strings ``data[first[i]:end[i]]`` of ascending, non-overlapping byte ranges: one
    ``take`` of every other string of the array over `data` whose strings alternate gap,
    range, gap, ... (no per-byte pass)."""
    offsets = np.empty(2 * first.shape[0] + 2, dtype=np.int64)
    offsets[0], offsets[-1] = 0, data.shape[0]
    offsets[1:-1:2] = first
    offsets[2:-1:2] = end
    alternating = pa.LargeStringArray.from_buffers(
        offsets.shape[0] - 1, pa.py_buffer(offsets), pa.py_buffer(data)
    )
    return alternating.take(pa.array(np.arange(1, offsets.shape[0] - 1, 2))).cast(pa.string())


def _gathered(data: np.ndarray, first: np.ndarray, end: np.ndarray) -> pa.Array:
    """The strings ``data[first[i]:end[i]]`` of any byte ranges (CJK bigrams overlap)."""
    lengths = end - first
    out = np.zeros(len(first) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    gather = np.repeat(first - out[:-1], lengths) + np.arange(int(out[-1]))
    return _strings(data[gather], lengths)


def _strings(joined: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A string array of the UTF-8 strings laid end to end in `joined`."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return pa.LargeStringArray.from_buffers(
        len(lengths), pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(joined))
    ).cast(pa.string())


class _Readable(NamedTuple):
    """What `node_text` reads of a node: its title and fields."""

    title: str
    fields: Any


_DICT, _TEXT = {dict}, {str, type(None)}


def token_texts(
    types: Sequence[Any], titles: Sequence[Any], fields: Sequence[Any], schema: Schema
) -> list[str]:
    """Per node (its type, title and fields), a text that `tokenize` cuts into exactly the
    tokens of ``node_text(node, schema.get(type))``, in order: the same parts joined by
    spaces, a missing column as an empty part (a space more: no token). Built a node type at
    a time and a column at a time (``map`` of ``dict.get``, ``str.join`` over ``zip``), not a
    `node_text` call per node (an import reads 100k)."""
    n = len(types)
    texts: list[str] = [""] * n
    if not n:
        return texts
    coded = pc.dictionary_encode(pa.array(types, pa.string()))
    if coded.indices.null_count:  # a node without a type: node by node
        return [
            node_text(_Readable(t or "", f or {}), schema.get(k))  # type: ignore[arg-type]
            for k, t, f in zip(types, titles, fields, strict=True)
        ]
    kinds = coded.dictionary.to_pylist()
    which = coded.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(which, kind="stable")
    bounds = np.cumsum(np.bincount(which, minlength=len(kinds)))
    start = 0
    for kind, end in zip(kinds, bounds.tolist(), strict=True):
        rows = order[start:end].tolist()
        start = end
        got = _type_texts(
            list(map(titles.__getitem__, rows)),
            list(map(fields.__getitem__, rows)),
            schema.get(kind),
        )
        for row, text in zip(rows, got, strict=True):
            texts[row] = text
    return texts


def _type_texts(titles: list[Any], fields: list[Any], spec: NodeTypeSpec | None) -> list[str]:
    """`token_texts` of nodes of one type (`spec`: its schema entry)."""
    titles = [t or "" for t in titles]
    if spec is None or set(map(type, fields)) != _DICT:  # node by node
        return [node_text(_Readable(t, f or {}), spec) for t, f in zip(titles, fields, strict=True)]  # type: ignore[arg-type]
    parts: list[Any] = [titles]
    for column in spec.table_columns:
        values = list(map(dict.get, fields, repeat(column)))
        if not set(map(type, values)) <= _TEXT:
            values = [_part(v) for v in values]
        parts.append(["" if v is None else v for v in values])
    parts.append([" ".join(spec.keywords)] * len(titles))
    return list(map(" ".join, zip(*parts, strict=True)))


def _part(value: Any) -> str:
    """A field value's words as `node_text` reads them (`_flatten`), joined by spaces."""
    if type(value) is str:
        return value
    out: list[str] = []
    _flatten(value, out)
    return " ".join(out)
