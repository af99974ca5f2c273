"""`BasePostings.from_lists`: the inverted lists an open builds from a snapshot's per-row token
lists (16-bit radix passes by token id) equal a plain build, row by row, past 65,536 token ids
too (a second pass)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin.engine.keyword.keyword_postings import BasePostings

ROWS = st.lists(
    st.dictionaries(st.integers(0, 40), st.integers(1, 5), max_size=8) | st.none(), max_size=30
)


def _check(rows: list[dict[int, int] | None], scale: int, vocab: int = 0) -> None:
    vocab = vocab or 41 * scale
    tids = pa.array(
        [None if r is None else [t * scale for t in r] for r in rows], pa.list_(pa.int32())
    )
    tfs = pa.array([None if r is None else list(r.values()) for r in rows], pa.list_(pa.int32()))
    base = BasePostings.from_lists(tids, tfs, vocab)
    for token in {t * scale for r in rows if r for t in r}:
        lo, hi = int(base.ptr[token]), int(base.ptr[token + 1])
        expected = [(i, r[token // scale]) for i, r in enumerate(rows) if r and token // scale in r]
        got = list(zip(base.slots[lo:hi].tolist(), base.freqs[lo:hi].tolist(), strict=True))
        assert got == expected
        assert int(base.df[token]) == len(expected)
    lens = [sum(r.values()) if r else 0 for r in rows]
    assert base.lens.tolist() == lens
    assert int(base.ptr[-1]) == sum(len(r) for r in rows if r)


@settings(max_examples=150, deadline=None)
@given(ROWS)
def test_the_inverted_lists_equal_a_plain_build(rows: list[dict[int, int] | None]) -> None:
    _check(rows, 1)


@settings(max_examples=60, deadline=None)
@given(ROWS)
def test_token_ids_past_16_bits_take_a_second_pass(rows: list[dict[int, int] | None]) -> None:
    _check(rows, 3001)  # ids up to 120,040: the high 16 bits differ


def test_a_large_base_keeps_rows_in_order_within_each_token() -> None:
    rng = np.random.default_rng(5)
    rows = [
        {int(t): int(rng.integers(1, 4)) for t in rng.choice(70_000, 6, replace=False)}
        for _ in range(2_000)
    ]
    _check(rows, 1, 70_000)
