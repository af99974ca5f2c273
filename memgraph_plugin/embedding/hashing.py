"""The built-in offline `hashing` profile: feature hashing of words, word pairs and char n-grams."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from hashlib import blake2b

import numpy as np

_TOKEN = re.compile(r"\w+", re.UNICODE)

WORD_WEIGHT = 1.0
BIGRAM_WEIGHT = 0.6
CHAR_WEIGHT = 0.35
CHAR_SIZES = (3, 4)


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """A stable (index, sign) for a feature: blake2b, never Python's per-process hash()."""
    h = int.from_bytes(blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


class HashingProfile:
    """Deterministic, download-free embeddings; similar wording gives similar vectors."""

    def __init__(self, dim: int = 384, *, name: str = "hashing") -> None:
        if dim < 8:
            raise ValueError(f"hashing profile dimension must be >= 8, got {dim}")
        self.name = name
        self.dim = int(dim)
        self._word = lru_cache(maxsize=200_000)(self._word_features)
        self._pair = lru_cache(maxsize=200_000)(self._pair_feature)
        self._word_columns = lru_cache(maxsize=200_000)(self._word_column_pair)

    def _word_features(self, word: str) -> tuple[tuple[int, float], ...]:
        feats: dict[int, float] = {}
        idx, sign = _bucket("w:" + word, self.dim)
        feats[idx] = feats.get(idx, 0.0) + sign * WORD_WEIGHT
        padded = f"<{word}>"
        for n in CHAR_SIZES:
            for i in range(max(1, len(padded) - n + 1)):
                idx, sign = _bucket("c:" + padded[i : i + n], self.dim)
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
        """`embed_one` of each text, bit for bit, with the numpy work done once for the batch:
        every text's features gathered in one flat list (text by text, in `embed_one`'s
        order), summed by one `np.add.at` over the matrix, then each row normalised by its
        own ``dot`` (what `np.linalg.norm` computes). An import embeds 100k nodes this way."""
        n, dim = len(texts), self.dim
        out = np.zeros((n, dim), dtype=np.float32)
        if not n:
            return out
        index: list[int] = []
        weight: list[float] = []
        sizes: list[int] = []
        columns, pair, findall = self._word_columns, self._pair, _TOKEN.findall
        for text in texts:
            start = len(index)
            words = findall(text.lower()) if text else []
            for word in words:
                idx, w = columns(word)
                index.extend(idx)
                weight.extend(w)
            for a, b in zip(words, words[1:], strict=False):
                idx1, w1 = pair(a + " " + b)
                index.append(idx1)
                weight.append(w1)
            sizes.append(len(index) - start)
        if index:
            flat = np.asarray(index, dtype=np.intp)
            flat += np.repeat(np.arange(n, dtype=np.intp) * dim, sizes)
            np.add.at(out.reshape(-1), flat, np.asarray(weight, dtype=np.float32))
        norms = np.sqrt(np.array([row.dot(row) for row in out], dtype=np.float32))
        nonzero = norms > 0
        out[nonzero] /= norms[nonzero, None]
        return out

    def _word_column_pair(self, word: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """A word's features as (indices, weights)."""
        feats = self._word(word)
        return tuple(i for i, _ in feats), tuple(w for _, w in feats)

    def __repr__(self) -> str:
        return f"HashingProfile(dim={self.dim}, name={self.name!r})"
