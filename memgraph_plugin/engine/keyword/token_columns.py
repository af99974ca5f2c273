"""`keyword_text.tokenize` of many texts at once, as one flat column of tokens (issue 31).

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

import numpy as np
import pyarrow as pa

__all__ = ["flat_tokens"]

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
    words = _slices(data, seg_first[plain], seg_end[plain])
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


def _slices(data: np.ndarray, first: np.ndarray, end: np.ndarray) -> pa.Array:
    """The strings ``data[first[i]:end[i]]`` of ascending, non-overlapping byte ranges."""
    mark = np.zeros(len(data) + 1, dtype=np.int8)
    mark[first] = 1
    mark[end] -= 1
    inside = np.cumsum(mark[:-1], dtype=np.int8).view(bool)
    return _strings(data[inside], end - first)


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
