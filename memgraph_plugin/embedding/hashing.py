"""The built-in offline `hashing` profile: feature hashing of words, word pairs and char n-grams.

A text's vector is the float32 sum, in text order, of its words' features, then its neighbouring
word pairs' features, L2-normalised. A word's features are its own (``w:`` word) and those of the
char n-grams of ``<word>`` (``c:`` gram, n in `CHAR_SIZES`), merged per bucket by a float64 sum
in that order and rounded to float32; a pair's is ``b:`` first second. A feature's bucket is its
blake2b digest modulo the dimension, its sign the digest's top bit (never Python's per-process
``hash()``). The stored vectors of old chats are reused by profile name, so these bytes never
change (tests/embedding/hashing_definition.py is the definition, one feature at a time, that
the tests compare with).

`HashingProfile.embed` computes this for many texts at once: the texts' words become ids, each
distinct word's, n-gram's and pair's feature is hashed once (an import's 100k texts have ~20k
distinct words, ~30k distinct n-grams, ~75k distinct pairs), and every occurrence's features
are gathered and summed with numpy.
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

WORD_WEIGHT = 1.0
BIGRAM_WEIGHT = 0.6
CHAR_WEIGHT = 0.35
CHAR_SIZES = (3, 4)
#: texts embedded together by `HashingProfile.embed` (bounds its memory: ~16 MB of gathered
#: features at 4096 texts, reused batch after batch; at 16,384 texts the ~65 MB temporaries
#: cost a cold process (an import's) ~0.1-0.2 s more in page faults)
BATCH = 4096


#: byte value -> whether it can be part of a word (``\w``) of a lower-cased text: an ASCII
#: letter, digit or underscore, or any byte of a non-ASCII character (whose words `re` finds)
_IN_PIECE = np.zeros(256, dtype=bool)
_IN_PIECE[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789_", dtype=np.uint8)] = True
_IN_PIECE[0x80:] = True


def buckets(features: Sequence[str], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(index, sign) of each feature string: its 8-byte blake2b digest (little-endian) modulo
    `dim`, and +1.0 when the digest's top bit is set, else -1.0."""
    if not features:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float64)
    digests = b"".join([blake2b(f.encode("utf-8"), digest_size=8).digest() for f in features])
    h = np.frombuffer(digests, dtype="<u8")
    idx = (h % np.uint64(dim)).astype(np.intp)
    sign = np.where((h >> np.uint64(63)) & np.uint64(1), 1.0, -1.0)
    return idx, sign


def batch_words(texts: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The words of each text (``\\w+`` of it lower-cased), as ids: the
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
    """Each word's features: (offsets, index, weight), word ``k``'s at
    ``offsets[k]:offsets[k + 1]`` (each bucket once; float32 weights).
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
    # every feature in its order: a word's own, then its grams'
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
    # merged per (word, bucket): sequential float64 sums, in the features' order
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
    each distinct pair hashed once."""
    if not first.shape[0]:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float32)
    encoded = pc.dictionary_encode(pa.array(first * len(words) + second, pa.int64()))
    distinct = encoded.dictionary.to_numpy(zero_copy_only=False)
    inverse = encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    a, b = np.divmod(distinct, len(words))
    texts = ["b:" + words[i] + " " + words[j] for i, j in zip(a.tolist(), b.tolist(), strict=True)]
    p_idx, p_sign = buckets(texts, dim)
    return p_idx[inverse], (p_sign * weight).astype(np.float32)[inverse]


class HashingProfile:
    """Deterministic, download-free embeddings; similar wording gives similar vectors."""

    def __init__(self, dim: int = 384, *, name: str = "hashing") -> None:
        if dim < 8:
            raise ValueError(f"hashing profile dimension must be >= 8, got {dim}")
        self.name = name
        self.dim = int(dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The vector of each text (module docstring), one row per text, with the work per
        word done once per distinct word (and word pair) of the texts: the texts' words become
        ids (`batch_words`), each distinct word's and pair's features are hashed once, and
        every occurrence's features are gathered with numpy in text order (text by text: its
        words' features, then its pairs'), summed by one `np.add.at` per `BATCH` texts
        (unbuffered, in order: the float32 sums of adding them one by one), then each row is
        normalised by its own ``dot`` (what `np.linalg.norm` computes). The gathered
        features of a batch take about 40 bytes each: ~100 per text."""
        n, dim = len(texts), self.dim
        out = np.zeros((n, dim), dtype=np.float32)
        words, wid, sizes = batch_words(texts)
        if not wid.shape[0]:
            return out
        offsets, f_idx, f_w = word_features(words, dim, WORD_WEIGHT, CHAR_WEIGHT, CHAR_SIZES)
        text_of = np.repeat(np.arange(n, dtype=np.intp), sizes)  # each word's text
        paired = np.flatnonzero(text_of[:-1] == text_of[1:])  # a pair's first word
        p_idx, p_w = pair_features(words, wid[paired], wid[paired + 1], dim, BIGRAM_WEIGHT)
        ends = np.cumsum(sizes)
        for start in range(0, n, BATCH):  # each batch summed in its rows of `out`
            stop = min(n, start + BATCH)
            lo, hi = int(ends[start] - sizes[start]), int(ends[stop - 1])
            target = out[start:stop].reshape(-1)
            base = (text_of[lo:hi] - start) * dim  # each word's row start in `target`
            # every word's features, then every pair's: within one row (all a cell ever
            # sees), the text's order
            np.add.at(target, *_gathered(offsets, f_idx, f_w, wid[lo:hi], base))
            first, last = np.searchsorted(paired, [lo, hi - 1])  # pairs within the batch
            pair_base = (text_of[paired[first:last]] - start) * dim
            np.add.at(target, pair_base + p_idx[first:last], p_w[first:last])
        # each row's own ``dot`` (the BLAS dot a row's `np.linalg.norm` calls), stacked: one call
        norms = np.sqrt(np.matmul(out[:, None, :], out[:, :, None]).reshape(n))
        nonzero = norms > 0
        if nonzero.all():
            out /= norms[:, None]
        else:
            out[nonzero] /= norms[nonzero, None]
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """The vector of one text (`embed` of it alone: the same bytes it has among others)."""
        return self.embed([text])[0]

    def __repr__(self) -> str:
        return f"HashingProfile(dim={self.dim}, name={self.name!r})"


def _gathered(
    offsets: np.ndarray, f_idx: np.ndarray, f_w: np.ndarray, wid: np.ndarray, base: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(flat index, weight) of every feature of every word occurrence (`wid`, each at row
    start `base`), in order: word ``k``'s features are ``f_idx/f_w[offsets[k]:offsets[k+1]]``."""
    lengths = np.diff(offsets)
    counts = lengths[wid]
    ends = np.cumsum(counts)
    gather = np.repeat(offsets[wid] - (ends - counts), counts)
    gather += np.arange(int(ends[-1]) if ends.shape[0] else 0, dtype=np.intp)
    flat = np.repeat(base, counts)
    flat += f_idx[gather]
    return flat, f_w[gather]
