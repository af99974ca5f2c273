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

_TOKEN = re.compile(r"\w+", re.UNICODE)
#: what separates words in a lower-cased text, among ASCII characters; every other character
#: (non-ASCII) is left in the pieces, whose words `re` finds
_ASCII_BREAK = r"[^a-z0-9_\x{80}-\x{10FFFF}]+"


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
    pyarrow (RE2) cuts every text at its runs of ASCII non-word characters (what ``\\w`` never
    matches there); a piece that is ASCII is one word, any other piece is cut by the ``re``
    pattern (a match never spans a cut: a cut is all non-word characters). The words are
    numbered by one dictionary encoding."""
    n = len(texts)
    lowered = [t.lower() if t else "" for t in texts]
    pieces = pc.split_pattern_regex(pa.array(lowered, pa.string()), _ASCII_BREAK)
    flat = pc.list_flatten(pieces)
    rows = pc.list_parent_indices(pieces).to_numpy(zero_copy_only=False).astype(np.intp)
    filled = pc.binary_length(flat).to_numpy(zero_copy_only=False) > 0
    plain = pc.string_is_ascii(flat).to_numpy(zero_copy_only=False).astype(bool)
    keep = filled & plain
    found = flat.filter(pa.array(keep))
    at = np.flatnonzero(keep)  # each found word's piece
    other = np.flatnonzero(filled & ~plain)
    if other.shape[0]:
        findall = _TOKEN.findall
        extra = [findall(s) for s in flat.take(pa.array(other)).to_pylist()]
        counts = np.fromiter(map(len, extra), dtype=np.intp, count=len(extra))
        found = pa.concat_arrays([found, pa.array([w for ws in extra for w in ws], pa.string())])
        at = np.concatenate([at, np.repeat(other, counts)])
        order = np.argsort(at, kind="stable")  # piece by piece; a piece's words in order
        found, at = found.take(pa.array(order)), at[order]
    encoded = pc.dictionary_encode(found)
    wid = encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    sizes = np.bincount(rows[at], minlength=n).astype(np.intp)
    return encoded.dictionary.to_pylist(), wid, sizes


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
