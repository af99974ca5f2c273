"""The built-in offline `hashing` profile: feature hashing of words, word pairs and char n-grams."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from hashlib import blake2b

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_TOKEN = re.compile(r"\w+", re.UNICODE)

WORD_WEIGHT = 1.0
BIGRAM_WEIGHT = 0.6
CHAR_WEIGHT = 0.35
CHAR_SIZES = (3, 4)
#: texts embedded together by `HashingProfile.embed` (bounds its memory)
BATCH = 16_384


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """A stable (index, sign) for a feature: blake2b, never Python's per-process hash()."""
    h = int.from_bytes(blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


def batch_words(texts: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The words `embed_one` reads of each text (``\\w+`` of it lower-cased), as ids: the
    distinct words, every word's id in text order, text by text, and each text's word count.
    An ASCII text's words (runs of ``[a-z0-9_]``: what ``\\w`` matches there) are cut by
    pyarrow (RE2) and numbered by one dictionary encoding, all texts at once; any other text
    through the ``re`` pattern."""
    n = len(texts)
    lowered = [t.lower() if t else "" for t in texts]
    column = pa.array(lowered, pa.string())
    ascii_rows = pc.string_is_ascii(column).to_numpy(zero_copy_only=False).astype(bool)
    pieces = pc.split_pattern_regex(column, r"[^a-z0-9_]+")
    flat = pc.list_flatten(pieces)
    rows = pc.list_parent_indices(pieces).to_numpy(zero_copy_only=False).astype(np.intp)
    keep = (pc.binary_length(flat).to_numpy(zero_copy_only=False) > 0) & ascii_rows[rows]
    found = flat.filter(pa.array(keep))
    rows = rows[keep]
    other = np.flatnonzero(~ascii_rows)
    if other.shape[0]:
        findall = _TOKEN.findall
        extra = [findall(lowered[i]) for i in other.tolist()]
        counts = np.fromiter(map(len, extra), dtype=np.intp, count=len(extra))
        found = pa.concat_arrays([found, pa.array([w for ws in extra for w in ws], pa.string())])
        rows = np.concatenate([rows, np.repeat(other, counts)])
        order = np.argsort(rows, kind="stable")  # text by text, each in text order
        found, rows = found.take(pa.array(order)), rows[order]
    encoded = pc.dictionary_encode(found)
    wid = encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    sizes = np.bincount(rows, minlength=n).astype(np.intp)
    return encoded.dictionary.to_pylist(), wid, sizes


class HashingProfile:
    """Deterministic, download-free embeddings; similar wording gives similar vectors."""

    def __init__(self, dim: int = 384, *, name: str = "hashing") -> None:
        if dim < 8:
            raise ValueError(f"hashing profile dimension must be >= 8, got {dim}")
        self.name = name
        self.dim = int(dim)
        self._word = lru_cache(maxsize=200_000)(self._word_features)
        self._pair = lru_cache(maxsize=200_000)(self._pair_feature)
        # a char n-gram's bucket, shared by the many words that have it (an import's 20k
        # distinct words have ~13 n-grams each, mostly the same few thousand)
        self._gram = lru_cache(maxsize=200_000)(self._gram_bucket)

    def _gram_bucket(self, gram: str) -> tuple[int, float]:
        return _bucket("c:" + gram, self.dim)

    def _word_features(self, word: str) -> tuple[tuple[int, float], ...]:
        feats: dict[int, float] = {}
        idx, sign = _bucket("w:" + word, self.dim)
        feats[idx] = feats.get(idx, 0.0) + sign * WORD_WEIGHT
        padded = f"<{word}>"
        gram = self._gram
        for n in CHAR_SIZES:
            for i in range(max(1, len(padded) - n + 1)):
                idx, sign = gram(padded[i : i + n])
                feats[idx] = feats.get(idx, 0.0) + sign * CHAR_WEIGHT
        return tuple(feats.items())

    def _pair_feature(self, pair: str) -> tuple[int, float]:
        idx, sign = _bucket("b:" + pair, self.dim)
        return idx, sign * BIGRAM_WEIGHT

    def embed_one(self, text: str) -> np.ndarray:
        """Sum of the features' signed weights, L2-normalised.

        The features are summed in float32 in text order by one `np.add.at` (unbuffered, in
        order: the same vector, bit for bit, as adding them one by one; ~20% faster).
        """
        vec = np.zeros(self.dim, dtype=np.float32)
        words = _TOKEN.findall(text.lower()) if text else []
        feats: list[tuple[int, float]] = []
        for word in words:
            feats.extend(self._word(word))
        feats.extend(self._pair(a + " " + b) for a, b in zip(words, words[1:], strict=False))
        if feats:
            idx, weight = zip(*feats, strict=True)
            np.add.at(vec, np.asarray(idx, dtype=np.intp), np.asarray(weight, dtype=np.float32))
        norm = float(np.linalg.norm(vec))
        if norm > 0:
            vec /= norm
        return vec

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """`embed_one` of each text, bit for bit, with the work per word done once per
        distinct word (and word pair) of the batch: the texts' words become ids, each distinct
        one's features are looked up once, and every occurrence's features are gathered with
        numpy in `embed_one`'s order (text by text: its words' features, then its pairs'),
        summed by one `np.add.at` (unbuffered, in order: the same float32 sums), then each
        row is normalised by its own ``dot`` (what `np.linalg.norm` computes). An import
        embeds 100k nodes this way, `BATCH` texts at a time (the gathered features of a batch
        take about 40 bytes each: ~100 per text)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), BATCH):  # each batch summed in its rows of `out`
            self._embed_batch(texts[start : start + BATCH], out[start : start + BATCH])
        return out

    def _embed_batch(self, texts: Sequence[str], out: np.ndarray | None = None) -> np.ndarray:
        """`embed` of at most `BATCH` texts, into `out` (zeros, one row per text, contiguous;
        None: a new array)."""
        n, dim = len(texts), self.dim
        if out is None:
            out = np.zeros((n, dim), dtype=np.float32)
        words, wid, sizes = batch_words(texts)
        if not wid.shape[0]:
            return out
        base = np.repeat(np.arange(n, dtype=np.intp) * dim, sizes)  # each word's row start
        target = out.reshape(-1)
        # every word's features, then every pair's: within one row (all a cell ever sees),
        # the order `embed_one` adds them in
        np.add.at(target, *self._word_features_at(words, wid, base))
        np.add.at(target, *self._pair_features_at(words, wid, base))
        norms = np.sqrt(np.array([row.dot(row) for row in out], dtype=np.float32))
        nonzero = norms > 0
        out[nonzero] /= norms[nonzero, None]
        return out

    def _word_features_at(
        self, words: list[str], wid: np.ndarray, base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(flat index, weight) of every feature of every word occurrence, in order."""
        feats = [self._word(w) for w in words]
        lengths = np.fromiter(map(len, feats), dtype=np.intp, count=len(feats))
        f_idx = np.fromiter((i for f in feats for i, _ in f), dtype=np.intp)
        f_w = np.asarray([w for f in feats for _, w in f], dtype=np.float32)
        offsets = np.zeros(len(feats) + 1, dtype=np.intp)
        np.cumsum(lengths, out=offsets[1:])
        counts = lengths[wid]
        ends = np.cumsum(counts)
        gather = np.repeat(offsets[wid] - (ends - counts), counts)
        gather += np.arange(int(ends[-1]), dtype=np.intp)
        flat = np.repeat(base, counts)
        flat += f_idx[gather]
        return flat, f_w[gather]

    def _pair_features_at(
        self, words: list[str], wid: np.ndarray, base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(flat index, weight) of the feature of every pair of neighbouring words of one
        text, in order."""
        same = base[:-1] == base[1:]
        first, second = wid[:-1][same], wid[1:][same]
        if not first.shape[0]:
            return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float32)
        distinct, inverse = np.unique(first * len(words) + second, return_inverse=True)
        feats = [
            self._pair(words[k // len(words)] + " " + words[k % len(words)])
            for k in distinct.tolist()
        ]
        p_idx = np.fromiter((i for i, _ in feats), dtype=np.intp, count=len(feats))
        p_w = np.asarray([w for _, w in feats], dtype=np.float32)
        return base[:-1][same] + p_idx[inverse], p_w[inverse]

    def __repr__(self) -> str:
        return f"HashingProfile(dim={self.dim}, name={self.name!r})"
