"""The built-in offline `hashing` profile: feature hashing of words, word pairs and char n-grams."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from hashlib import blake2b

import numpy as np

from memgraph_plugin.embedding.hashing_batch import batch_words, pair_features, word_features

_TOKEN = re.compile(r"\w+", re.UNICODE)

WORD_WEIGHT = 1.0
BIGRAM_WEIGHT = 0.6
CHAR_WEIGHT = 0.35
CHAR_SIZES = (3, 4)
#: texts embedded together by `HashingProfile.embed` (bounds its memory: ~16 MB of gathered
#: features at 4096 texts, reused batch after batch; at 16,384 texts the ~65 MB temporaries
#: cost a cold process (an import's) ~0.1-0.2 s more in page faults)
BATCH = 4096


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
        distinct word (and word pair) of the texts: the texts' words become ids
        (`hashing_batch.batch_words`), each distinct word's and pair's features are hashed
        once, and every occurrence's features are gathered with numpy in `embed_one`'s order
        (text by text: its words' features, then its pairs'), summed by one `np.add.at` per
        `BATCH` texts (unbuffered, in order: the same float32 sums), then each row is
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
            # sees), the order `embed_one` adds them in
            np.add.at(target, *_gathered(offsets, f_idx, f_w, wid[lo:hi], base))
            first, last = np.searchsorted(paired, [lo, hi - 1])  # pairs within the batch
            pair_base = (text_of[paired[first:last]] - start) * dim
            np.add.at(target, pair_base + p_idx[first:last], p_w[first:last])
        # each row's own ``dot`` (the BLAS dot `embed_one`'s norm calls), stacked: one call
        norms = np.sqrt(np.matmul(out[:, None, :], out[:, :, None]).reshape(n))
        nonzero = norms > 0
        if nonzero.all():
            out /= norms[:, None]
        else:
            out[nonzero] /= norms[nonzero, None]
        return out

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
