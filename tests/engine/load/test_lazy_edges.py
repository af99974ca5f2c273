"""A store opened from columns keeps its edges as arrays (`lazy_edges`): the edge map makes a
record on the first read of its key, the adjacency a node's list on the first read of its id.
Reads, writes, undone transactions and rollbacks on edges never read must leave what an eager
store leaves, and an edge deleted after its first read must stay deleted."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin import Edge, Store
from memgraph_plugin.engine.graph.store_revert import revert
from memgraph_plugin.engine.load.lazy_edges import LazyAdjacency, LazyEdges, _csr, stable_order
from memgraph_plugin.storage.format.graph_columns import state_tables
from tests.story_graph import story_data

from ..graph.test_store import snapshot

IDS = [f"n_{i}" for i in range(1, 15)]
TYPES = ["involved_in", "mentions", "allied_with", "contains", "occurred_at", "related"]


def _opened(data: dict[str, Any]) -> Store:
    nodes, edges = state_tables(Store.from_dict(data).to_dict())
    return Store.from_columns(nodes, edges, data["nodeSeq"], data["seqCounter"])


def _made(store: Store) -> int:
    return dict.__len__(store.internals()[1])


def test_an_open_makes_no_edge_record_and_a_read_makes_one() -> None:
    store = _opened(story_data())
    edges, out_adj, in_adj = store.internals()[1:4]
    assert isinstance(edges, LazyEdges) and isinstance(out_adj, LazyAdjacency)
    assert _made(store) == 0 and store.edge_count == 17
    assert dict.__len__(out_adj) == 0 and dict.__len__(in_adj) == 0
    assert store.edge(("n_7", "involved_in", "n_2")) == Edge("n_7", "n_2", "involved_in", 3)
    assert store.edge(("n_2", "allied_with", "n_1")) is not None  # symmetric: stored n_1 first
    assert store.edge(("n_7", "mentions", "n_2")) is None
    assert _made(store) == 2
    assert [k.target for k in store.out_edges("n_11")] == ["n_5", "n_6", "n_7"] * 2
    assert dict.__len__(out_adj) == 1 and dict.__len__(in_adj) == 0
    assert store.in_edges("n_13") == ()  # no edges: no entry
    assert dict.__len__(in_adj) == 0


def test_an_edge_removed_after_its_read_stays_removed() -> None:
    data = story_data()
    lazy, eager = _opened(data), Store.from_dict(data)
    for store in (lazy, eager):
        assert store.remove_edge(("n_9", "mentions", "n_1"))
        assert store.edge(("n_9", "mentions", "n_1")) is None
        assert not store.remove_edge(("n_9", "mentions", "n_1"))
        assert store.add_edge(Edge("n_9", "n_1", "mentions", 12))  # again, at the end
    assert snapshot(lazy) == snapshot(eager)
    assert list(lazy.iter_edges()) == list(eager.iter_edges())


EDGE_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "read", "out", "in", "undone"]),
        st.sampled_from(IDS),
        st.sampled_from(TYPES),
        st.sampled_from(IDS),
    ),
    max_size=25,
)


def _run(store: Store, op: str, a: str, t: str, b: str) -> Any:
    if op == "add":
        return store.add_edge(Edge(a, b, t, 7))
    if op == "remove":
        return store.remove_edge((a, t, b))
    if op == "read":
        return store.edge((a, t, b))
    if op == "out":
        return store.out_edges(a)
    if op == "in":
        return store.in_edges(b)
    with pytest.raises(RuntimeError), store.transaction():  # undone
        store.remove_edge((a, t, b))
        store.add_edge(Edge(b, a, t))
        raise RuntimeError("undo")
    return None


@settings(max_examples=80, deadline=None)
@given(ops=EDGE_OPS)
def test_edge_ops_right_after_an_open_equal_an_eager_store(ops: list) -> None:
    data = story_data()
    lazy, eager = _opened(data), Store.from_dict(data)
    for op in ops:
        assert _run(lazy, *op) == _run(eager, *op), op
        assert lazy.edge_count == eager.edge_count
    assert snapshot(lazy) == snapshot(eager)
    assert list(lazy.iter_edges()) == list(eager.iter_edges())  # serial order included


def test_a_rollback_of_edge_writes_on_unread_edges_equals_an_eager_store() -> None:
    data = story_data()
    lazy, eager = _opened(data), Store.from_dict(data)
    befores = []
    for store in (lazy, eager):
        with store.transaction():
            store.remove_edge(("n_5", "involved_in", "n_1"))
            store.remove_edge(("n_1", "allied_with", "n_2"))
            store.add_edge(Edge("n_13", "n_14", "related"))
        cs = store.take_changeset()
        assert cs is not None
        befores.append(cs.before)
    revert(lazy, [befores[0]])
    revert(eager, [befores[1]])
    assert snapshot(lazy) == snapshot(eager)
    assert list(lazy.iter_edges()) == list(eager.iter_edges())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=300), st.integers(0, 20))
def test_the_csr_groups_each_rows_edges_in_serial_order(rows: list[int], extra: int) -> None:
    """`_csr` orders its rows by `stable_order` (radix passes) instead of a stable
    argsort: the same order."""
    n = 41 + extra
    array = np.asarray(rows, dtype=np.int64)
    ptr, order = _csr(array, n)
    assert order.tolist() == np.argsort(array, kind="stable").tolist()
    assert ptr.tolist() == [0, *np.cumsum(np.bincount(array, minlength=n)).tolist()]


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from([1, 300, 1 << 16, (1 << 16) + 1, 100_000, 1 << 32, (1 << 32) + 1, 1 << 45]),
    st.lists(st.integers(0, 2**62), max_size=400),
)
def test_stable_order_is_the_stable_argsort_for_every_bound(bound: int, raw: list[int]) -> None:
    """One radix pass below 2**16, two below 2**32, one shifted sort above: each the order a
    stable argsort gives, as int64."""
    values = np.asarray([x % bound for x in raw], dtype=np.int64)
    order = stable_order(values, bound)
    assert order.dtype == np.int64
    assert order.tolist() == np.argsort(values, kind="stable").tolist()
