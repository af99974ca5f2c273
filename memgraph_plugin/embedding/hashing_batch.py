"""The batch side of the `hashing` profile: many texts' words as ids, and the features of each
distinct word and word pair hashed in bulk.

`HashingProfile.embed_one` is the definition: a text's vector is the float32 sum, in text order,
of its words' features (each word's own and its char n-grams', merged per bucket in Python
floats) and then its neighbouring pairs' features. These helpers give the same features as
arrays: a word's merged features are summed in float64 in the order `embed_one`'s dict adds
them (`np.add.at` is sequential), then rounded to float32 as `embed_one`'s weights are; a
feature's bucket is the same blake2b as `hashing._bucket`, hashed once per distinct string
(an import's 100k texts have ~20k distinct words, ~30k distinct n-grams, ~75k distinct pairs)
with no Python call per feature beyond the hash itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from hashlib import blake2b

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.engine.keyword.token_columns import byte_slices

_TOKEN = re.compile(r"\w+", re.UNICODE)
#: byte value -> whether it can be part of a word (``\w``) of a lower-cased text: an ASCII
#: letter, digit or underscore, or any byte of a non-ASCII character (whose words `re` finds)
_IN_PIECE = np.zeros(256, dtype=bool)
_IN_PIECE[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789_", dtype=np.uint8)] = True
_IN_PIECE[0x80:] = True


def buckets(features: Sequence[str], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(index, sign) of each feature string, as `hashing._bucket` gives them: the blake2b
    digest's value modulo `dim`, and +1.0 when its top bit is set, else -1.0."""
    if not features:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float64)
    digests = b"".join([blake2b(f.encode("utf-8"), digest_size=8).digest() for f in features])
    h = np.frombuffer(digests, dtype="<u8")
    idx = (h % np.uint64(dim)).astype(np.intp)
    sign = np.where((h >> np.uint64(63)) & np.uint64(1), 1.0, -1.0)
    return idx, sign


def batch_words(texts: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The words `embed_one` reads of each text (``\\w+`` of it lower-cased), as ids: the
    distinct words, every word's id in text order, text by text, and each text's word count.
    Every text is cut at its runs of ASCII non-word characters (what ``\\w`` never matches
    there; `_pieces`); a piece that is ASCII is one word, any other piece is cut by the ``re``
    pattern (a match never spans a cut: a cut is all non-word characters). The pieces are
    numbered by one dictionary encoding; only the distinct non-ASCII ones are cut by ``re``
    (a few thousand of an import's million pieces), their words gathered for every piece."""
    found, per_text = _pieces([t.lower() if t else "" for t in texts])
    encoded = pc.dictionary_encode(found)
    pieces = encoded.dictionary
    pid = encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    other = np.flatnonzero(~pc.string_is_ascii(pieces).to_numpy(zero_copy_only=False).astype(bool))
    if not other.shape[0]:  # every piece is one word
        return pieces.to_pylist(), pid, per_text
    # a distinct piece with other characters: its words (`re`), numbered after the plain ones
    plain = np.ones(len(pieces), dtype=bool)
    plain[other] = False
    number = {w: k for k, w in enumerate(pieces.filter(pa.array(plain)).to_pylist())}
    findall = _TOKEN.findall
    per_piece = plain.astype(np.intp)  # words of each distinct piece
    other_ids: list[int] = []
    for k, piece in zip(other.tolist(), pieces.take(pa.array(other)).to_pylist(), strict=True):
        got = [number.setdefault(w, len(number)) for w in findall(piece)]
        per_piece[k] = len(got)
        other_ids.extend(got)
    starts = np.cumsum(per_piece) - per_piece  # each distinct piece's words in `ids`
    ids = np.empty(int(per_piece.sum()), dtype=np.intp)
    ids[starts[plain]] = np.arange(len(pieces) - other.shape[0])
    ids[_spans(starts[other], per_piece[other])] = other_ids
    counts = per_piece[pid]  # the words of each piece of the texts
    total = np.zeros(counts.shape[0] + 1, dtype=np.intp)
    np.cumsum(counts, out=total[1:])
    last = np.cumsum(per_text)  # each text's pieces end there
    sizes = total[last] - total[last - per_text]
    return list(number), ids[_spans(starts[pid], counts)], sizes


def _spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of every span, in order."""
    ends = np.cumsum(lengths)
    out = np.repeat(starts - (ends - lengths), lengths)
    out += np.arange(int(ends[-1]) if ends.shape[0] else 0, dtype=np.intp)
    return out


def _pieces(lowered: list[str]) -> tuple[pa.Array, np.ndarray]:
    """The pieces of lower-cased texts: their maximal runs of `_IN_PIECE` bytes (a run never
    spans two texts), in order, as one string array, and how many each text has. Found with
    numpy over the texts' UTF-8 bytes: each run is a slice of them, every slice taken at once
    by one ``take`` of the string array whose strings alternate gap, run, gap, ..."""
    column = pa.array(lowered, pa.large_string())
    n = len(lowered)
    bounds = np.frombuffer(column.buffers()[1], dtype=np.int64)[: n + 1]
    size = int(bounds[-1])
    if not size:
        return pa.array([], pa.string()), np.zeros(n, dtype=np.intp)
    data = np.frombuffer(column.buffers()[2], dtype=np.uint8)[:size]
    inside = _IN_PIECE[data]
    first = inside.copy()  # a run's first byte: after a byte outside, or a text's first
    first[1:] &= ~inside[:-1]
    last = inside.copy()  # a run's last byte: before a byte outside, or a text's last
    last[:-1] &= ~inside[1:]
    inner = bounds[1:-1]
    inner = inner[(inner > 0) & (inner < size)]
    first[inner] = inside[inner]
    last[inner - 1] = inside[inner - 1]
    starts = np.flatnonzero(first)
    runs = byte_slices(data, starts, np.flatnonzero(last) + 1)
    per_text = np.diff(np.searchsorted(starts, bounds)).astype(np.intp)
    return runs, per_text


def word_features(
    words: Sequence[str], dim: int, word_weight: float, char_weight: float, sizes: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each word's features as `HashingProfile._word_features` makes them: (offsets, index,
    weight), word ``k``'s at ``offsets[k]:offsets[k + 1]`` (each bucket once; float32 weights).
    A word's features are its own (``w:`` word) and those of the char n-grams of ``<word>``
    (``c:`` gram, n in `sizes`), merged per bucket by a float64 sum in that order."""
    grams: list[str] = []
    per_word = np.empty(len(words), dtype=np.intp)
    for k, word in enumerate(words):
        padded = f"<{word}>"
        before = len(grams)
        for n in sizes:
            grams.extend([padded[i : i + n] for i in range(max(1, len(padded) - n + 1))])
        per_word[k] = len(grams) - before
    encoded = pc.dictionary_encode(pa.array(grams, pa.string()))
    distinct = encoded.dictionary.to_pylist()
    g_idx, g_sign = buckets(["c:" + g for g in distinct], dim)
    gid = encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    w_idx, w_sign = buckets(["w:" + w for w in words], dim)
    # every feature in `_word_features`' order: a word's own, then its grams'
    counts = per_word + 1
    starts = np.cumsum(counts) - counts
    total = int(counts.sum())
    idx = np.empty(total, dtype=np.intp)
    weight = np.empty(total, dtype=np.float64)
    owner = np.repeat(np.arange(len(words), dtype=np.intp), counts)
    is_own = np.zeros(total, dtype=bool)
    is_own[starts] = True
    idx[is_own], weight[is_own] = w_idx, w_sign * word_weight
    idx[~is_own], weight[~is_own] = g_idx[gid], g_sign[gid] * char_weight
    # merged per (word, bucket): sequential float64 sums, as the dict's `get(idx, 0.0) + w`
    keys, inverse = np.unique(owner * dim + idx, return_inverse=True)
    merged = np.zeros(keys.shape[0], dtype=np.float64)
    np.add.at(merged, inverse.reshape(-1), weight)
    offsets = np.zeros(len(words) + 1, dtype=np.intp)
    np.cumsum(np.bincount(keys // dim, minlength=len(words)), out=offsets[1:])
    return offsets, (keys % dim).astype(np.intp), merged.astype(np.float32)


def pair_features(
    words: Sequence[str], first: np.ndarray, second: np.ndarray, dim: int, weight: float
) -> tuple[np.ndarray, np.ndarray]:
    """(index, float32 weight) of the feature of each pair of word ids (``b:`` first second),
    as `HashingProfile._pair_feature` gives it; each distinct pair hashed once."""
    if not first.shape[0]:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float32)
    encoded = pc.dictionary_encode(pa.array(first * len(words) + second, pa.int64()))
    distinct = encoded.dictionary.to_numpy(zero_copy_only=False)
    inverse = encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    a, b = np.divmod(distinct, len(words))
    texts = ["b:" + words[i] + " " + words[j] for i, j in zip(a.tolist(), b.tolist(), strict=True)]
    p_idx, p_sign = buckets(texts, dim)
    return p_idx[inverse], (p_sign * weight).astype(np.float32)[inverse]
