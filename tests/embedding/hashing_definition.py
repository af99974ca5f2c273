"""The `hashing` profile's vectors defined one feature at a time, in plain Python: what
`HashingProfile.embed` must give, bit for bit (stored vectors are reused by profile name).

A text's words are ``\\w+`` of it lower-cased. A word's features are its own (``w:`` word) and
those of the char n-grams of ``<word>`` (``c:`` gram, n in `CHAR_SIZES`), merged per bucket in
Python floats; a neighbouring pair's is ``b:`` first second. The vector is the float32 sum of
the features in text order (each word's, then each pair's), L2-normalised.
"""

from __future__ import annotations

import re
from hashlib import blake2b

import numpy as np

from memgraph_plugin.embedding.hashing import BIGRAM_WEIGHT, CHAR_SIZES, CHAR_WEIGHT, WORD_WEIGHT

TOKEN = re.compile(r"\w+", re.UNICODE)


def bucket(feature: str, dim: int) -> tuple[int, float]:
    """(index, sign) of a feature: its blake2b digest modulo `dim`, signed by its top bit."""
    h = int.from_bytes(blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


def word_features(word: str, dim: int) -> dict[int, float]:
    """A word's features merged per bucket: its own, then its char n-grams' in order."""
    feats: dict[int, float] = {}
    idx, sign = bucket("w:" + word, dim)
    feats[idx] = feats.get(idx, 0.0) + sign * WORD_WEIGHT
    padded = f"<{word}>"
    for n in CHAR_SIZES:
        for i in range(max(1, len(padded) - n + 1)):
            idx, sign = bucket("c:" + padded[i : i + n], dim)
            feats[idx] = feats.get(idx, 0.0) + sign * CHAR_WEIGHT
    return feats


def pair_feature(first: str, second: str, dim: int) -> tuple[int, float]:
    idx, sign = bucket("b:" + first + " " + second, dim)
    return idx, sign * BIGRAM_WEIGHT


def vector(text: str, dim: int) -> np.ndarray:
    """The vector of `text`: each feature added to a float32 vector one at a time."""
    vec = np.zeros(dim, dtype=np.float32)
    words = TOKEN.findall(text.lower())
    for word in words:
        for idx, weight in word_features(word, dim).items():
            vec[idx] += np.float32(weight)
    for a, b in zip(words, words[1:], strict=False):
        idx, weight = pair_feature(a, b, dim)
        vec[idx] += np.float32(weight)
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec
