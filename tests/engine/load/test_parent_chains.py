"""`import_hierarchy.parents_end_in_roots` (numpy pointer doubling) answers exactly
"does `parent_problems` find nothing?": any parent map, own parents and cycles of any length."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin.engine.load.import_hierarchy import (
    parent_problems,
    parents_end_in_roots,
    positions_end_in_roots,
)

_IDS = [f"n_{i}" for i in range(12)]


@settings(max_examples=1000, deadline=None)
@given(st.dictionaries(st.sampled_from(_IDS), st.sampled_from(_IDS)))
def test_chains_end_in_roots_exactly_when_no_parent_problem(parents):
    assert parents_end_in_roots(parents) == (not parent_problems(parents, {k: k for k in parents}))


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(_IDS), st.sampled_from(_IDS)))
def test_chains_by_position_end_in_roots_as_chains_by_id_do(parents):
    """The import's column check asks by position (each node's parent's index, -1: none,
    every node listed): the same answer as by id."""
    import numpy as np

    at = {nid: i for i, nid in enumerate(_IDS)}
    parent_at = np.array([at[parents[nid]] if nid in parents else -1 for nid in _IDS])
    assert positions_end_in_roots(parent_at) == parents_end_in_roots(parents)


def test_a_long_chain_and_a_long_cycle():
    chain = {f"n_{i}": f"n_{i + 1}" for i in range(5000)}
    assert parents_end_in_roots(chain)
    chain["n_5000"] = "n_0"  # the root now points back at the start: one ring of 5001
    assert not parents_end_in_roots(chain)
    assert not parents_end_in_roots({"n_1": "n_1"})
