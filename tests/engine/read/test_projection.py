"""Projection: lifting, projected edges and edge summaries against a brute-force reference."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgraph_plugin import Edge, Node, Store
from memgraph_plugin.engine.model.schema import SYMMETRIC_RELATIONS
from memgraph_plugin.engine.read.projection import (
    Lifter,
    edge_summary,
    expand_from_seeds,
    nearest_visible_ancestor_id,
    project_edges,
)
from tests.story_graph import build_store, node

# -- an independent reference: full scans, written straight from the notes --------


def ref_lift(store: Store, id: str, visible: set[str]) -> str | None:
    seen = set()
    while id and id not in seen:
        n = store.node(id)
        if n is None or n.archived:
            return None
        if id in visible:
            return id
        seen.add(id)
        id = n.parent_id
    return None


def ref_summary(store: Store, id: str, visible: set[str], limit: int = 8) -> dict:
    merged: dict[tuple[str, str, str], int] = {}
    latest: dict[str, int] = {}
    for e in store.iter_edges():
        a, b = ref_lift(store, e.source, visible), ref_lift(store, e.target, visible)
        if a is None or b is None or a == b:
            continue
        if e.type in SYMMETRIC_RELATIONS and b < a:
            a, b = b, a
        merged[(a, b, e.type)] = merged.get((a, b, e.type), 0) + 1
        if id in (a, b):
            other = b if a == id else a
            seq = e.seq_to
            if seq is None:
                ends = [s for s in (store.node(e.source).seq_to, store.node(e.target).seq_to)
                        if s is not None]
                seq = max(ends) if ends else -1
            latest[other] = max(latest.get(other, -1), seq)
    degree = 0
    relations: dict[tuple[str, str], int] = {}
    neighbours = set()
    for (a, b, t), w in merged.items():
        if id not in (a, b):
            continue
        other = b if a == id else a
        n = store.node(other)
        if n is None or n.archived or other not in visible:
            continue
        degree += max(1, w)
        key = (t, "out" if a == id else "in")
        relations[key] = relations.get(key, 0) + 1
        neighbours.add(other)
    rel = sorted(relations.items(), key=lambda kv: -kv[1])
    sample = sorted(((latest[n], n) for n in neighbours), key=lambda x: (-x[0], x[1]))[:limit]
    return {
        "degree": degree,
        "relations": [(r, d, c) for (r, d), c in rel],
        "sample": [(n, None if s < 0 else s) for s, n in sample],
    }


def as_dict(summary) -> dict:  # type: ignore[no-untyped-def]
    return {
        "degree": summary.degree,
        "relations": [(r.relation, r.direction, r.count) for r in summary.relations],
        "sample": [(s.id, s.to_seq) for s in summary.sample_neighbors],
    }


# -- examples --------


def test_nearest_visible_ancestor_walk(story: Store) -> None:
    pool = set(story.pool_rank())
    assert nearest_visible_ancestor_id(story, "n_5", pool) == "n_11"
    assert nearest_visible_ancestor_id(story, "n_11", pool) == "n_11"  # itself
    assert nearest_visible_ancestor_id(story, "n_12", pool) is None  # archived
    assert nearest_visible_ancestor_id(story, "nope", pool) is None
    assert nearest_visible_ancestor_id(story, "n_5", {"n_1"}) is None


def test_archived_node_on_the_way_ends_the_walk() -> None:
    store = build_store([
        node("top", "event"), node("mid", "event", parentId="top", archived=True),
        node("leaf", "event", parentId="mid"),
    ])
    assert nearest_visible_ancestor_id(store, "leaf", {"top"}) is None


def test_walk_is_cycle_safe() -> None:
    store = build_store([node("a", "event", parentId="b"), node("b", "event", parentId="a")])
    assert nearest_visible_ancestor_id(store, "a", {"x"}) is None
    assert Lifter(store, {"x"})("a") is None
    assert edge_summary(store, "a", {"a"}).degree == 0


def test_projected_edges_merge_and_weight(story: Store) -> None:
    pool = set(story.pool_rank())
    rows = project_edges(story, pool)
    assert ("n_11", "n_2", "involved_in", 2) in rows  # n_5->n_2 and n_7->n_2 merged
    assert ("n_11", "n_3", "occurred_at", 1) in rows
    assert not any(t in ("contains", "semantic_contains") for _, _, t, _ in rows)
    assert not any(a == b for a, b, _, _ in rows)
    assert not any("n_12" in (a, b) for a, b, _, _ in rows)  # archived end: dropped
    inner = project_edges(story, pool, exclude_internal=False)
    assert not any(t == "contains" for _, _, t, _ in inner)  # both ends meet in n_11
    only = project_edges(story, pool, edge_types=["MENTIONS"])
    assert only == [("n_9", "n_1", "mentions", 1)]


def test_symmetric_projection_orders_ends() -> None:
    store = build_store(
        [node("z", "thread"), node("r", "event"), node("leaf", "event", parentId="r")],
        [("z", "hostile_to", "leaf")],
    )
    assert project_edges(store, {"z", "r"}) == [("r", "z", "hostile_to", 1)]
    s = edge_summary(store, "z", {"z", "r"})
    assert [(r.relation, r.direction) for r in s.relations] == [("hostile_to", "in")]


def test_edge_summary_of_the_rollup(story: Store) -> None:
    s = edge_summary(story, "n_11", set(story.pool_rank()))
    assert s.degree == 4
    assert [(r.relation, r.direction, r.count) for r in s.relations] == [
        ("involved_in", "out", 2), ("occurred_at", "out", 1)
    ]
    assert [(n.id, n.to_seq) for n in s.sample_neighbors] == [("n_2", 3), ("n_1", 2), ("n_3", 2)]
    assert [n.title for n in s.sample_neighbors] == ["Bram", "Eileen", "Rosewood Garden"]
    assert edge_summary(story, "n_11", set(story.pool_rank()), limit=1).sample_neighbors[0].id \
        == "n_2"


def test_edge_summary_of_a_node_outside_the_visible_set_is_zero(story: Store) -> None:
    assert edge_summary(story, "n_5", set(story.pool_rank())).degree == 0


def test_drill_expansion(story: Store) -> None:
    pool = set(story.pool_rank())
    ids = expand_from_seeds(story, ["n_11"], allowed=pool)
    assert ids[0] == "n_11"
    assert set(ids) == {"n_11", "n_5", "n_6", "n_7", "n_1", "n_2", "n_3"}
    raw = expand_from_seeds(story, ["n_2"], allowed=None, edge_types=["involved_in"])
    assert raw == ["n_2", "n_5", "n_7", "n_8"]
    assert expand_from_seeds(story, ["n_12"], allowed=pool) == []  # archived seed
    two = expand_from_seeds(story, ["n_4"], hops=2, allowed=pool,
                            edge_types=["related", "advances", "involved_in"])
    assert two[:1] == ["n_4"] and "n_2" in two


# -- property: subtree-based summaries == full-scan reference --------

_IDS = [f"n{i}" for i in range(10)]


@st.composite
def graphs(draw):  # type: ignore[no-untyped-def]
    nodes = []
    for nid in _IDS:
        nodes.append(Node(
            nid,
            draw(st.sampled_from(["event", "thread"])),
            title=nid,
            parent_id=draw(st.one_of(st.just(""), st.sampled_from(_IDS))),
            seq_to=draw(st.one_of(st.none(), st.integers(0, 6))),
            archived=draw(st.integers(0, 4)) == 0,
        ))
    edges = draw(st.lists(st.tuples(
        st.sampled_from(_IDS), st.sampled_from(_IDS),
        st.sampled_from(["related", "allied_with", "contains", "mentions"]),
        st.one_of(st.none(), st.integers(0, 6)),
    ), max_size=25))
    visible = draw(st.one_of(st.none(), st.sets(st.sampled_from(_IDS))))
    return nodes, edges, visible


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_edge_summary_matches_full_scan_reference(g) -> None:  # type: ignore[no-untyped-def]
    nodes, edges, visible = g
    store = Store()
    with store.transaction():
        for n in nodes:
            store.put_node(n)
        for a, b, t, s in edges:
            store.add_edge(Edge(a, b, t, s))
    vis = set(store.pool_rank()) if visible is None else visible
    lift = Lifter(store, vis)
    for nid in _IDS:
        assert lift(nid) == ref_lift(store, nid, vis)
        got = as_dict(edge_summary(store, nid, vis, limit=3, lift=lift))
        if nid not in vis:
            assert got["degree"] == 0
            continue
        assert got == ref_summary(store, nid, vis, limit=3)
