"""A store opened from columns makes its `Node`s on first read (`LazyNodes`) and its indices'
containers on first read (`Deferred`): it must behave exactly like a store built eagerly from
the same graph, for reads, writes, rollbacks and deletes of nodes never read."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin import Edge, Node, Store
from memgraph_plugin.engine.graph.store_revert import revert
from memgraph_plugin.engine.load import lazy_nodes
from memgraph_plugin.engine.load.column_loader import LoadedPoolOrder, load_node_columns
from memgraph_plugin.engine.load.lazy_nodes import LazyNodes
from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA
from memgraph_plugin.storage.format.graph_columns import state_tables
from tests.engine.column_stores import graph_tables, made_records, opened
from tests.story_graph import story_data

from ..graph.test_store import snapshot


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lazy_nodes, "BLOCK", 3)


def test_an_open_makes_no_node_and_a_read_makes_one_block(small_blocks: None) -> None:
    store = opened(story_data())
    assert isinstance(store.internals()[0], LazyNodes)
    assert made_records(store) == 0 and len(store) == 14
    assert set(store._deferred) >= {"_visible", "_pool", "_pool_of", "_anchor", "_type_pools"}
    nodes = store.internals()[0]
    assert "n_9" in nodes and "n_99" not in nodes and made_records(store) == 0
    node = store.node("n_9")
    assert node is not None and node.title == "Eileen heals a stranger"
    assert made_records(store) == 3  # its block of rows only
    assert store.node("n_9") is node  # made once, then kept
    assert sorted(store.node_ids()) == sorted(Store.from_dict(story_data()).node_ids())
    assert made_records(store) == 3


def test_reads_equal_an_eager_store(small_blocks: None) -> None:
    data = story_data()
    lazy, eager = opened(data), Store.from_dict(data)
    assert lazy.is_visible("n_8") and not lazy.is_visible("n_5")
    assert [v.id for v in lazy.newest_in_pool("event", 2)] == [
        v.id for v in eager.newest_in_pool("event", 2)
    ]
    assert lazy.keywords.search("garden", None, 5) == eager.keywords.search("garden", None, 5)
    names = lazy.name_index(), eager.name_index()
    assert names[0].known_as("character_sheet", "bramwell") == names[1].known_as(
        "character_sheet", "bramwell"
    )
    assert snapshot(lazy) == snapshot(eager)
    assert lazy.internals()[0].complete  # iterating made every record, then dropped columns


def test_pool_order_reads_the_load_until_the_node_map_drops_its_columns(
    small_blocks: None,
) -> None:
    data = story_data()
    lazy, eager = opened(data), Store.from_dict(data)
    assert isinstance(lazy.pool_order(), LoadedPoolOrder)
    assert dict(lazy.pool_order()) == dict(eager.pool_order())
    list(lazy.iter_nodes())  # every record made: the columns are dropped
    assert lazy.internals()[0].complete
    order = lazy.pool_order()
    assert not isinstance(order, LoadedPoolOrder) and lazy._loaded_order is None
    assert list(order.items()) == list(eager.pool_order().items())


def _writes_on_unread_nodes(store: Store) -> list[Any]:
    """Writes right after an open, each on nodes nothing read before; the changesets' befores."""
    befores = []

    def commit() -> None:
        cs = store.take_changeset()
        assert cs is not None
        befores.append(cs.before)

    with store.transaction():
        old = store.node("n_10")
        assert old is not None
        store.put_node(attrs.evolve(old, title="Night at the rose garden", seq_to=9))
    commit()
    with store.transaction():
        store.put_node(attrs.evolve(store.node("n_7"), archived=True))  # archive = delete
        store.remove_edge(("n_7", "involved_in", "n_2"))
        store.put_node(attrs.evolve(store.node("n_6"), parent_id=""))  # out of its rollup
        store.add_edge(Edge("n_9", "n_3", "occurred_at", 8))
    commit()
    with store.transaction():
        nid = store.allocate_id()
        store.put_node(Node(id=nid, type="event", title="A new storm", seq_to=10))
        store.add_edge(Edge(nid, "n_2", "involved_in"))
    commit()
    with pytest.raises(RuntimeError), store.transaction():  # undone: nothing changes
        store.put_node(attrs.evolve(store.node("n_8"), title="never"))
        store.add_edge(Edge("n_8", "n_9", "related"))
        raise RuntimeError("boom")
    return befores


def test_writes_undo_and_rollback_right_after_an_open_equal_an_eager_store(
    small_blocks: None,
) -> None:
    data = story_data()
    lazy, eager = opened(data), Store.from_dict(data)
    lazy_befores = _writes_on_unread_nodes(lazy)
    eager_befores = _writes_on_unread_nodes(eager)
    assert not lazy.internals()[0].complete  # nothing so far needed every record
    revert(lazy, lazy_befores[1:])  # a rollback of the two newest commits
    revert(eager, eager_befores[1:])
    assert lazy.node("n_16") is None and lazy.node("n_15") is None
    assert snapshot(lazy) == snapshot(eager)
    revert(lazy, lazy_befores)
    revert(eager, eager_befores)
    assert snapshot(lazy) == snapshot(eager)
    fresh = Store.from_dict(data)
    assert lazy.to_dict()["nodes"] == fresh.to_dict()["nodes"]


def test_a_deferred_index_built_after_writes_sees_them(small_blocks: None) -> None:
    """Writes build each index they touch from the load first; an index first read after them
    equals the eager store's."""
    data = story_data()
    lazy, eager = opened(data), Store.from_dict(data)
    for s in (lazy, eager):
        s.put_node(attrs.evolve(s.node("n_4"), archived=True))
    assert lazy.pool_anchors() == eager.pool_anchors()
    assert lazy.candidate_keys() == eager.candidate_keys()
    assert lazy.visible_ids() == eager.visible_ids()


# -- LazyNodes as a mapping ------------------------------------------------------------------

IDS = [f"n_{i}" for i in range(1, 15)] + ["x_1", "x_2"]  # the story's ids and two new ones
OPS = st.lists(
    st.tuples(
        st.sampled_from(["get", "item", "in", "len", "set", "del", "pop", "setdefault", "own"]),
        st.sampled_from(IDS),
    ),
    max_size=30,
)


def _apply(m: dict[str, Any], op: str, key: str, made: Node) -> Any:
    try:
        if op == "get":
            return m.get(key, "none")
        if op == "item":
            return m[key]
        if op == "in":
            return key in m
        if op == "len":
            return len(m)
        if op == "set":
            m[key] = made
            return None
        if op == "del":
            del m[key]
            return None
        if op == "pop":
            return m.pop(key, "none")
        if op == "setdefault":
            return m.setdefault(key, made)
        if op == "own":
            return m.own_id(key) if isinstance(m, LazyNodes) else m[key].id
    except KeyError:
        return "KeyError"
    raise AssertionError(op)


@settings(max_examples=60, deadline=None)
@given(ops=OPS, block=st.sampled_from([1, 2, 5, 64]))
def test_lazy_nodes_behave_like_the_dict_an_eager_load_fills(ops: list, block: int) -> None:
    data = story_data()
    nodes, _edges = graph_tables(data)
    reference = dict(Store.from_dict(data).internals()[0])
    old = lazy_nodes.BLOCK
    lazy_nodes.BLOCK = block
    try:
        loaded = load_node_columns(nodes, 0, DEFAULT_SCHEMA)
        assert loaded is not None
        lazy = loaded.nodes
        for op, key in ops:
            made = Node(id=key, type="event", title=f"written {key}")
            assert _apply(lazy, op, key, made) == _apply(reference, op, key, made), (op, key)
            assert len(lazy) == len(reference)
        assert list(lazy.ids()) == list(reference)
        assert list(lazy.items()) == list(reference.items())  # order included
        assert lazy == reference and lazy.complete
    finally:
        lazy_nodes.BLOCK = old


def test_every_record_written_before_its_first_read(small_blocks: None) -> None:
    """Writes that replace every loaded record before any read leave no block to make: the
    columns are dropped and the map is the written records, in row order."""
    data = story_data()
    nodes, _edges = graph_tables(data)
    loaded = load_node_columns(nodes, 0, DEFAULT_SCHEMA)
    assert loaded is not None
    lazy, reference = loaded.nodes, dict(Store.from_dict(data).internals()[0])
    for key in reversed(list(reference)):
        lazy[key] = reference[key] = attrs.evolve(reference[key], title="rewritten")
    assert dict.__len__(lazy) == len(lazy) == len(reference)
    assert lazy.get("n_3") is reference["n_3"]
    assert list(lazy.items()) == list(reference.items())


def test_edge_columns_normalise_like_the_dict_load() -> None:
    """Edge rows as an import may have stored them (upper-case types, a symmetric relation the
    larger id first, duplicates once normalised, self-edges, a missing end) load into the same
    edge map, adjacency and order as `from_dict` gives."""
    data = story_data()
    data["edges"] = [
        {"from": "n_2", "to": "n_1", "type": "allied_with", "seqTo": 4},  # symmetric, reversed
        {"from": "n_1", "to": "n_2", "type": "Allied_With"},  # its duplicate once normalised
        {"from": "n_9", "to": "n_1", "type": "Mentions", "seqTo": 6},
        {"from": "n_9", "to": "n_9", "type": "related"},  # self-edge
        {"from": "ghost", "to": "n_1", "type": "related"},  # missing end
        {"from": "n_8", "to": "n_4", "type": "advances", "seqTo": 5},
        {"from": "n_4", "to": "n_8", "type": "ADVANCES", "seqTo": 7},  # not symmetric: kept
        {"from": "n_8", "to": "n_4", "type": "Advances", "seqTo": 8},  # duplicate: first wins
        {"from": "n_11", "to": "n_5", "type": "contains"},
    ]
    nodes, edges = state_tables(data)
    lazy = Store.from_columns(nodes, edges, data["nodeSeq"], data["seqCounter"])
    eager = Store.from_dict(data)
    assert list(lazy.iter_edges()) == list(eager.iter_edges())
    assert lazy.internals()[1:4] == eager.internals()[1:4]
    assert list(lazy.internals()[2]) == list(eager.internals()[2])  # adjacency key order
    assert lazy.edge(("n_2", "allied_with", "n_1")).seq_to == 4


def test_a_dropped_opened_store_is_freed_without_a_collection() -> None:
    """Deferred builders and the pools read the node map, never the store: no reference cycle
    keeps an evicted chat's store alive until the cyclic collector runs."""
    import gc
    import weakref

    store = opened(story_data())
    store.node("n_3")
    gone = weakref.ref(store)
    gc.disable()
    try:
        del store
        assert gone() is None
    finally:
        gc.enable()
