"""The kept edge summaries (`memgraph_plugin.engine.read.edge_summaries`) and the store's change log
behind them.

The cache must always answer what a fresh computation answers: a property test throws random
batches, rollups, reparentings, archivals, failed transactions and new visible sets at a store
and compares every cached summary with `projection.edge_summary` after each step. The other
tests pin down that the cache really is kept (a write recomputes only what it touched).
"""

from __future__ import annotations

import contextlib

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memgraph_plugin.api.injection import InjectionHub
from memgraph_plugin.api.read import ReadApi, get_read_api
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.models import Edge, Node
from memgraph_plugin.engine.read import edge_summaries as summaries_module
from memgraph_plugin.engine.read.edge_summaries import summaries_for
from memgraph_plugin.engine.read.projection import edge_summary
from memgraph_plugin.engine.write.batch import apply_batch
from memgraph_plugin.engine.write.rollups import apply_rollup
from memgraph_plugin.errors import MemoryGraphError

from ..graph.test_properties import batches, seeded

LIMITS = (8, 2)


def assert_cache_matches(store: Store, visible) -> None:
    """Every node's kept summary equals a fresh one over `visible`."""
    cache = summaries_for(store)
    for node in store.iter_nodes():
        for limit in LIMITS:
            fresh = edge_summary(store, node.id, visible, limit=limit)
            assert cache.summary(node.id, visible, limit) == fresh, (node.id, limit)


def _ids(store: Store) -> list[str]:
    return sorted(n.id for n in store.iter_nodes())


def layered() -> Store:
    """`seeded()` plus depth: events rolled up twice (hidden subtrees two deep), with edges
    that carry no seq (their summaries read the seq of both ends)."""
    store = seeded()
    leaves = [f"n_{i}" for i in range(20, 26)]
    for i, nid in enumerate(leaves):
        store.put_node(Node(id=nid, type="event", title=f"leaf {i}", seq_to=i))
    low = [apply_rollup(store, "event", leaves[i : i + 2], f"pair {i}", None)[0] for i in (0, 2, 4)]
    apply_rollup(store, "event", low[:2], "top", None)
    others = ["n_3", "n_4", "n_5", "n_6"]
    for i, nid in enumerate(leaves):
        store.add_edge(Edge(nid, others[i % 4], "related"))
    store.add_edge(Edge(low[0], low[2], "related"))
    return store


@st.composite
def steps(draw):
    kinds = ["batch", "rollup", "reparent", "archive", "fail", "visible", "seq", "edge", "unlink"]
    return draw(st.sampled_from(kinds)), draw(batches), draw(st.randoms(use_true_random=False))


def _step(store: Store, kind: str, batch_list, rnd) -> None:
    ids = _ids(store)
    if kind == "batch":
        apply_batch(store, batch_list[0], max_seq=rnd.randint(0, 20))
    elif kind == "rollup":  # children of one type among the visible ones, so most succeed
        type_ = rnd.choice(["event", "character_sheet"])
        pool = [i for i in store.pool_rank() if store.node(i).type == type_]
        kids = rnd.sample(pool, min(len(pool), rnd.randint(1, 3)))
        with contextlib.suppress(MemoryGraphError):  # refused (bad children): cache still right
            apply_rollup(store, type_, kids, "rolled up", None)
    elif kind == "reparent":
        node = store.node(rnd.choice(ids))
        parent = rnd.choice([*ids, ""])
        store.put_node(attrs.evolve(node, parent_id="" if parent == node.id else parent))
    elif kind == "archive":
        node = store.node(rnd.choice(ids))
        store.put_node(attrs.evolve(node, archived=not node.archived))
    elif kind == "seq":
        node = store.node(rnd.choice(ids))
        store.put_node(attrs.evolve(node, seq_to=rnd.choice([None, rnd.randint(0, 40)])))
    elif kind == "edge":
        a, b = rnd.sample(ids, 2)
        store.add_edge(Edge(a, b, rnd.choice(["related", "mentions"])))
    elif kind == "unlink":
        edges = list(store.iter_edges())
        if edges:
            store.remove_edge(rnd.choice(edges).key)
    elif kind == "fail":
        with pytest.raises(RuntimeError), store.transaction():
            a, b = rnd.sample(ids, 2)
            store.add_edge(Edge(a, b, "related", rnd.randint(0, 9)))
            node = store.node(a)
            store.put_node(attrs.evolve(node, seq_to=99, parent_id=b))
            raise RuntimeError("undo")


@pytest.mark.slow
@given(plan=st.lists(steps(), min_size=1, max_size=10), start=st.sampled_from([seeded, layered]))
def test_kept_summaries_equal_fresh_ones_after_any_writes(plan, start):
    store = start()
    visible = store.pool_rank()
    assert_cache_matches(store, visible)
    for kind, batch_list, rnd in plan:
        if kind == "visible":  # a recorded set: some pool members left out, some others put in
            ids = _ids(store)
            keep = [i for i in store.pool_rank() if rnd.random() < 0.8]
            extra = [i for i in ids if rnd.random() < 0.2]
            visible = rnd.choice([frozenset(keep + extra), store.pool_rank()])
        else:
            _step(store, kind, batch_list, rnd)
        if not isinstance(visible, frozenset):
            visible = store.pool_rank()  # the pool moved on: the default follows it
        assert_cache_matches(store, visible)


def _chain_store() -> Store:
    """Three events rolled up into r; each event points at its own character."""
    store = Store()
    ops = [
        {"op": "create", "type": "character_sheet", "ref": f"c{i}", "title": f"C{i}"}
        for i in range(3)
    ] + [
        {
            "op": "create",
            "type": "event",
            "ref": f"e{i}",
            "fields": {"summary": f"event {i}"},
            "links": [{"targetRef": f"c{i}", "relation": "involved_in"}],
        }
        for i in range(3)
    ]
    result = apply_batch(store, ops, max_seq=1)
    assert not result.rejected
    return store


def _spy_parts(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = summaries_module.summary_parts

    def spy(store, id, visible, **kw):
        calls.append(id)
        return real(store, id, visible, **kw)

    monkeypatch.setattr(summaries_module, "summary_parts", spy)
    return calls


def test_a_write_recomputes_only_the_summaries_it_touched(monkeypatch):
    store = _chain_store()
    calls = _spy_parts(monkeypatch)
    read = get_read_api(store, None)
    ids = [v.id for v in read.list_visible_candidates()]
    first = read.get_node_briefs(ids)
    assert len(calls) == len(ids)
    calls.clear()
    assert read.get_node_briefs(ids) == first
    assert calls == []  # nothing written: every summary kept
    by_title = {store.node(i).title: i for i in ids if store.node(i).type == "character_sheet"}
    c0 = by_title["C0"]
    e0 = next(i for i in ids if store.edge((i, "involved_in", c0)))
    store.add_edge(Edge(c0, by_title["C1"], "allied_with", 2))
    again = get_read_api(store, None).get_node_briefs(ids)  # a new session, as every turn
    assert sorted(calls) == sorted([c0, by_title["C1"]])  # the ends of the new edge only
    assert again[ids.index(e0)] == first[ids.index(e0)]


def test_a_rename_shows_in_the_neighbours_samples_without_recomputing(monkeypatch):
    store = _chain_store()
    read = get_read_api(store, None)
    ids = [v.id for v in read.list_visible_candidates()]
    read.get_node_briefs(ids)
    calls = _spy_parts(monkeypatch)
    c0 = next(i for i in ids if store.node(i).title == "C0")
    e0 = next(i for i in ids if store.edge((i, "involved_in", c0)))
    store.put_node(attrs.evolve(store.node(c0), title="Cora"))
    brief = get_read_api(store, None).get_node_brief(e0)
    assert [s.title for s in brief.edge_summary.sample_neighbors] == ["Cora"]
    assert e0 not in calls


def test_a_rollup_moves_its_childrens_edges_to_the_rollup():
    store = _chain_store()
    read = get_read_api(store, None)
    events = [v.id for v in read.list_visible_candidates() if v.type == "event"]
    before = [read.get_edge_summary(e).degree for e in events]
    assert all(before)
    rollup_id, _ = apply_rollup(store, "event", events, "three events", None)
    read = get_read_api(store, None)
    summary = read.get_edge_summary(rollup_id)
    assert summary.degree == sum(before)
    assert {s.title for s in summary.sample_neighbors} == {"C0", "C1", "C2"}
    for e in events:  # hidden now: no projected endpoint of their own
        assert read.get_edge_summary(e).degree == 0


def test_a_recorded_visible_set_is_followed():
    """The default set is the injection state's once the router recorded one."""
    store = _chain_store()
    hub = InjectionHub()
    read = ReadApi(store, None, injection_hub=hub)
    pool = [v.id for v in read.list_visible_candidates()]
    c0 = next(i for i in pool if store.node(i).title == "C0")
    e0 = next(i for i in pool if store.edge((i, "involved_in", c0)))
    degree = read.get_edge_summary(e0).degree
    assert degree > 0
    hub.set(always_inject_ids=[], recall_selected_ids=[], visible_ids=[i for i in pool if i != c0])
    assert read.get_edge_summary(e0).degree == 0  # c0 (its only neighbour) no longer visible
    assert read.get_node_brief(e0).edge_summary.degree == 0
    hub.set(always_inject_ids=[], recall_selected_ids=[], visible_ids=pool)
    assert read.get_node_brief(e0).edge_summary.degree == degree


def test_change_log_names_each_write_and_restarts_when_too_long(monkeypatch):
    store = _chain_store()
    start = store.change_position
    c0 = next(n for n in store.iter_nodes() if n.title == "C0")
    store.put_node(attrs.evolve(c0, title="Cora"))
    store.put_node(attrs.evolve(store.node(c0.id), archived=True))
    assert store.changes_since(start) == [(c0.id, "node"), (c0.id, "moved")]
    mid = store.change_position
    with pytest.raises(RuntimeError), store.transaction():
        store.put_node(attrs.evolve(store.node(c0.id), seq_to=7))
        store.add_edge(Edge(c0.id, "n_4", "related"))
        raise RuntimeError
    assert store.changes_since(mid) == [  # the writes, then their undo, newest first
        (c0.id, "seq"), (c0.id, "edge"), ("n_4", "edge"),
        (c0.id, "edge"), ("n_4", "edge"), (c0.id, "moved"),
    ]
    monkeypatch.setattr("memgraph_plugin.engine.graph.store_transactions.CHANGE_LOG_LIMIT", 3)
    store.put_node(attrs.evolve(store.node(c0.id), title="C"))
    store.put_node(attrs.evolve(store.node(c0.id), title="Co"))
    assert store.changes_since(start) is None  # the log restarted: readers rebuild
    assert summaries_for(store) is summaries_for(store)


def test_a_dropped_store_is_freed_with_its_summaries():
    import gc
    import weakref

    store = _chain_store()
    read = get_read_api(store, None)
    read.get_node_briefs([v.id for v in read.list_visible_candidates()])
    gone = weakref.ref(store)
    del store, read
    gc.collect()
    assert gone() is None
