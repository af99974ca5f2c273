"""`keyword_text.tokenize` of many texts at once, as one flat column of tokens (issue 31).

An import tokenizes every node (100k): one regex call per text, then a Python list per text to
count, flatten and encode again. Here the texts are lower-cased by Python (exactly
`tokenize`'s ``str.lower``), and pyarrow cuts them all (RE2, without the GIL): every run of
characters that are neither ASCII letters and digits nor CJK ideographs becomes a space, a
space is put between an ASCII run and a CJK run that touch (`tokenize`'s alternation makes
them two segments), and the texts are split at the spaces. Segments of at least two
characters are kept; a CJK one becomes its overlapping character bigrams (the only step done
in Python, on those segments alone). The tokens come out row by row, each row's in text
order, the same list as ``[w for t in texts for w in tokenize(t)]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .keyword_text import _CJK

__all__ = ["flat_tokens"]

_OTHER = rf"[^a-z0-9{_CJK}]+"
_ASCII_THEN_CJK = rf"([a-z0-9])([{_CJK}])"
_CJK_THEN_ASCII = rf"([{_CJK}])([a-z0-9])"


def flat_tokens(texts: Sequence[str]) -> tuple[pa.Array, np.ndarray]:
    """`(tokens, rows)`: the tokens of every text as one string array, in row order and each
    row's in text order (what `tokenize` gives each), and the row (index into `texts`) of each
    token as int64."""
    lowered = pa.array([t.lower() for t in texts], pa.string())
    spaced = pc.replace_substring_regex(lowered, _OTHER, " ")
    spaced = pc.replace_substring_regex(spaced, _ASCII_THEN_CJK, r"\1 \2")
    spaced = pc.replace_substring_regex(spaced, _CJK_THEN_ASCII, r"\1 \2")
    pieces = pc.split_pattern(spaced, " ")
    flat = pc.list_flatten(pieces)
    rows = pc.list_parent_indices(pieces).to_numpy(zero_copy_only=False).astype(np.int64)
    lengths = pc.utf8_length(flat).to_numpy(zero_copy_only=False)
    keep = lengths >= 2
    segments = flat.filter(pa.array(keep))
    rows, lengths = rows[keep], lengths[keep]
    cjk = ~pc.string_is_ascii(segments).to_numpy(zero_copy_only=False).astype(bool)
    if not cjk.any():
        return segments, rows
    # a CJK segment of n characters gives n - 1 bigrams, in its place
    counts = np.where(cjk, lengths - 1, 1).astype(np.int64)
    starts = np.cumsum(counts) - counts
    total = int(counts.sum())
    plain = ~cjk
    runs = segments.filter(pa.array(cjk)).to_pylist()
    bigrams = [seg[i : i + 2] for seg in runs for i in range(len(seg) - 1)]
    source = pa.concat_arrays([segments.filter(pa.array(plain)), pa.array(bigrams, pa.string())])
    at_plain = np.zeros(total, dtype=bool)
    at_plain[starts[plain]] = True
    order = np.empty(total, dtype=np.int64)
    kept = int(plain.sum())
    order[at_plain] = np.arange(kept, dtype=np.int64)
    order[~at_plain] = kept + np.arange(total - kept, dtype=np.int64)
    return source.take(pa.array(order)), np.repeat(rows, counts)
