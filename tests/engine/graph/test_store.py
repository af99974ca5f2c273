"""Store: JSON round trip, validation, adjacency, visibility, pool, transactions, changesets."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgraph_plugin import DEFAULT_SCHEMA, Edge, EdgeKey, MemoryGraphError, Node, Store
from memgraph_plugin.engine.graph.store import recency_key
from memgraph_plugin.engine.model.frozen import FrozenDict
from tests.story_graph import build_store, node


def snapshot(store: Store) -> dict:
    """Everything observable about a store, indices included (orders too)."""
    return {
        "dict": store.to_dict(),
        "visible": sorted(store.visible_ids()),
        "pool": [n.id for n in store.candidate_pool()],
        "views": [(v.id, v.title, v.seq_to) for v in store.candidate_views()],
        "pool_nodes": [n == store.node(n.id) for n in store.candidate_pool()],
        "types": {t: [v.id for v in store.type_pool(t).views] for t in ("event", "thread")},
        "rank": store.pool_rank(),
        "out": {n.id: list(store.out_edges(n.id)) for n in store.iter_nodes()},
        "in": {n.id: list(store.in_edges(n.id)) for n in store.iter_nodes()},
        "kids": {n.id: sorted(store.child_ids(n.id)) for n in store.iter_nodes()},
        "tokens": {n.id: sorted(store.keywords.tokens_of(n.id)) for n in store.iter_nodes()},
        "node_seq": store.node_seq,
        "seq_counter": store.seq_counter,
        "version": store.version,
    }


def rebuilt(store: Store) -> dict:
    """The indices a fresh load of the same data computes (the reference for incremental ones)."""
    fresh = Store.from_dict(store.to_dict(), schema=store.schema)
    snap = snapshot(fresh)
    snap["version"] = store.version
    # a load lifts nodeSeq to the largest n_<k> id; the live counter is lifted lazily instead
    snap["node_seq"] = snap["dict"]["nodeSeq"] = store.node_seq
    return snap


# -- JSON shape -------------------------------------------------------------------------------


def test_round_trip_is_identity(story: Store) -> None:
    data = story.to_dict()
    again = Store.from_dict(data).to_dict()
    assert again == data
    assert data["nodeSeq"] == 14 and data["seqCounter"] == 7
    assert data["nodes"]["n_1"]["fields"]["aliases"] == ["艾琳", "the healer"]
    assert {"from": "n_7", "to": "n_2", "type": "involved_in", "seqTo": 3} in data["edges"]
    assert set(data["nodes"]["n_11"]) >= {
        "id", "type", "level", "title", "fields", "parentId", "childrenIds", "seqTo",
        "semanticDepth", "semanticRollup", "archived",
    }


def test_from_dict_accepts_snake_case_keys() -> None:
    store = Store.from_dict({
        "nodes": {"a": {"id": "a", "type": "event", "parent_id": "", "seq_to": 4,
                        "semantic_depth": 2, "semantic_rollup": True, "children_ids": ["b"],
                        "floor_range": [1, 3], "superseded_by": "z"}},
        "edges": [],
        "node_seq": 3,
        "seq_counter": 9,
    })
    n = store.node("a")
    assert n is not None
    assert (n.seq_to, n.semantic_depth, n.semantic_rollup, n.children_ids) == (4, 2, True, ("b",))
    assert n.floor_range == (1, 3) and n.superseded_by == "z"
    assert store.seq_counter == 9 and store.node_seq == 3
    d = store.to_dict()["nodes"]["a"]
    assert d["floorRange"] == [1, 3] and d["supersededBy"] == "z"


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ([], "data"),
        ({"nodes": 5}, "nodes"),
        ({"nodes": {"a": "x"}}, "nodes['a']"),
        ({"nodes": {"a": {"id": "a"}}}, "nodes['a'].type"),
        ({"nodes": {"a": {"id": "b", "type": "event"}}}, "nodes['a'].id"),
        ({"nodes": {"a": {"type": "event", "seqTo": "late"}}}, "nodes['a'].seqTo"),
        ({"nodes": {"a": {"type": "event", "fields": [1]}}}, "nodes['a'].fields"),
        ({"nodes": {"a": {"type": "event", "archived": "no"}}}, "nodes['a'].archived"),
        ({"nodes": {"a": {"type": "event", "childrenIds": "b"}}}, "nodes['a'].childrenIds"),
        ({"nodes": {"a": {"type": "event", "semanticDepth": -1}}}, "nodes['a'].semanticDepth"),
        ({"nodes": {}, "edges": {}}, "edges"),
        ({"nodes": {}, "edges": [{"from": "a", "type": "x"}]}, "edges[0].to"),
        ({"nodes": {}, "nodeSeq": "7"}, "nodeSeq"),
        ({"nodes": {}, "seqCounter": -2}, "seqCounter"),
    ],
)
def test_from_dict_rejects_malformed_input_naming_the_key(data: object, named: str) -> None:
    with pytest.raises(MemoryGraphError) as info:
        Store.from_dict(data)  # type: ignore[arg-type]
    assert info.value.code == "BAD_ARGS"
    assert info.value.message.startswith(named)


def test_from_dict_keeps_node_seq_above_existing_ids() -> None:
    store = build_store([node("n_41", "event"), node("n_7", "event")], node_seq=3)
    assert store.node_seq == 41
    assert store.allocate_id() == "n_42"


def test_allocate_id_skips_taken_ids() -> None:
    store = build_store([node("n_1", "event"), node("n_3", "event")], node_seq=0)
    # from_dict lifts node_seq to 3; a node inserted later under n_4 is skipped too
    store.put_node(Node("n_4", "event"))
    assert store.allocate_id() == "n_5"


def test_import_drops_self_dangling_and_duplicate_edges_and_orders_symmetric() -> None:
    store = build_store(
        [node("a", "event"), node("b", "event")],
        [("a", "related", "a"), ("a", "related", "ghost"), ("a", "related", "b"),
         ("a", "related", "b"), ("b", "allied_with", "a")],
    )
    assert [e.key for e in store.iter_edges()] == [
        EdgeKey("a", "related", "b"),
        EdgeKey("a", "allied_with", "b"),
    ]


def test_imported_relation_types_are_lower_cased_like_written_ones() -> None:
    """The original keeps a relation's case on write and lower-cases it on read: an imported
    ``Mentions`` is the ``mentions`` the batch writes (filters, dedup, symmetric order, delete)."""
    store = build_store(
        [node("a", "character_sheet", "A", 1), node("b", "character_sheet", "B", 2)],
        [("a", "Mentions", "b"), ("a", "mentions", "b"), ("b", "Allied_With", "a")],
    )
    assert [e.key for e in store.iter_edges()] == [
        EdgeKey("a", "mentions", "b"),
        EdgeKey("a", "allied_with", "b"),
    ]
    assert store.edge(("b", "ALLIED_WITH", "a")) is not None
    assert store.add_edge(Edge("a", "b", "MENTIONS")) is False
    assert store.to_dict()["edges"] == [
        {"from": "a", "to": "b", "type": "mentions"},
        {"from": "a", "to": "b", "type": "allied_with"},
    ]
    assert store.remove_edge(("a", "Mentions", "b")) is True
    assert [e.type for e in store.iter_edges()] == ["allied_with"]


# -- edges and adjacency ------------------------------------------------------------------------


def test_add_edge_rules(story: Store) -> None:
    assert story.add_edge(Edge("n_1", "n_1", "related")) is False
    assert story.add_edge(Edge("n_5", "n_1", "involved_in")) is False  # duplicate
    assert story.add_edge(Edge("n_9", "n_8", "hostile_to", 6)) is True
    assert story.edge(("n_8", "hostile_to", "n_9")) == Edge("n_8", "n_9", "hostile_to", 6)
    assert story.add_edge(Edge("n_8", "n_9", "hostile_to")) is False  # same, either order
    with pytest.raises(MemoryGraphError) as info:
        story.add_edge(Edge("n_1", "nope", "related"))
    assert info.value.code == "NODE_NOT_FOUND"
    assert EdgeKey("n_8", "hostile_to", "n_9") in story.out_edges("n_8")
    assert EdgeKey("n_8", "hostile_to", "n_9") in story.in_edges("n_9")


def test_remove_edge_updates_adjacency(story: Store) -> None:
    key = EdgeKey("n_1", "allied_with", "n_2")
    assert story.remove_edge(("n_2", "allied_with", "n_1")) is True  # symmetric key either way
    assert story.edge(key) is None
    assert key not in story.out_edges("n_1") and key not in story.in_edges("n_2")
    assert story.remove_edge(key) is False


def test_adjacency_lists_edges_of_a_node(story: Store) -> None:
    assert set(story.out_edges("n_8")) == {
        EdgeKey("n_8", "involved_in", "n_2"), EdgeKey("n_8", "advances", "n_4")
    }
    assert EdgeKey("n_9", "mentions", "n_1") in story.in_edges("n_1")
    assert {e.key for e in story.edges_of("n_8")} == set(story.out_edges("n_8"))


# -- visibility and the pool ----------------------------------------------------------------------


def test_visibility_rules(story: Store) -> None:
    assert story.is_visible("n_11")  # top rollup
    assert not story.is_visible("n_5")  # under a same-type active rollup
    assert not story.is_visible("n_12")  # archived
    assert story.is_visible("n_8") and story.is_visible("n_1")
    assert story.is_visible("n_13") and story.is_visible("n_14")  # visible, but not in the pool


def test_children_become_visible_when_parent_is_archived_and_back(story: Store) -> None:
    rollup = story.node("n_11")
    assert rollup is not None
    story.put_node(attrs.evolve(rollup, archived=True))
    assert {"n_5", "n_6", "n_7"} <= story.visible_ids()
    assert "n_11" not in story.visible_ids()
    story.put_node(attrs.evolve(rollup, archived=False))
    assert not ({"n_5", "n_6", "n_7"} & story.visible_ids())


def test_parent_of_another_type_keeps_child_visible() -> None:
    store = build_store([node("p", "thread"), node("c", "event", parentId="p")])
    assert store.is_visible("c")
    store.put_node(Node("p", "event"))  # same type now: the child is hidden
    assert not store.is_visible("c")


def test_only_a_hierarchical_parent_of_the_same_type_hides_a_node() -> None:
    """The notes: a leaf of a hierarchical type is replaced by its top rollup; nodes of other
    types are all visible. A thread under a thread rollup used to vanish from the pool."""
    threads = [node(i, "thread", i, 1) for i in ("t1", "t2")]
    store = build_store([node("r", "thread", "r", 1, childrenIds=["t1", "t2"],
                              semanticDepth=1, semanticRollup=True),
                         *[{**t, "parentId": "r"} for t in threads],
                         node("e", "event", "e", 1), node("c", "event", "c", 1, parentId="e")])
    assert {"r", "t1", "t2", "e"} <= store.visible_ids() and not store.is_visible("c")
    assert [n.id for n in store.type_pool("thread").nodes] == ["r", "t1", "t2"]
    # a schema that makes threads hierarchical (and events not) moves visibility along
    schema = [{**spec.to_dict(), "compression": {"mode": "none"}} if spec.type == "event" else
              {**spec.to_dict(), "compression": {"mode": "hierarchical"}}
              if spec.type == "thread" else spec for spec in DEFAULT_SCHEMA.types]
    store.set_schema(schema)
    assert not store.is_visible("t1") and not store.is_visible("t2") and store.is_visible("c")
    assert [n.id for n in store.type_pool("thread").nodes] == ["r"]
    assert store.pool_anchors()["t1"] == "r" and store.pool_anchors()["c"] == "c"
    fresh = Store.from_dict(store.to_dict(), schema=schema)
    assert store.candidate_keys() == fresh.candidate_keys()
    assert store.visible_ids() == fresh.visible_ids()
    assert dict(store.pool_anchors()) == dict(fresh.pool_anchors())


def test_candidate_pool_membership_and_recency_order(story: Store) -> None:
    ids = [n.id for n in story.candidate_pool()]
    assert set(ids) == {"n_1", "n_2", "n_3", "n_4", "n_8", "n_9", "n_10", "n_11"}
    nodes = [story.node(i) for i in ids]
    assert ids == [n.id for n in sorted(nodes, key=recency_key)]  # type: ignore[arg-type]
    assert ids == ["n_10", "n_9", "n_8", "n_4", "n_11", "n_2", "n_1", "n_3"]
    assert [v.id for v in story.candidate_views()] == ids
    assert story.pool_rank()["n_10"] == 0


def test_pool_cache_follows_writes(story: Store) -> None:
    before = story.candidate_pool()
    assert story.candidate_pool() is before  # cached
    story.put_node(Node("n_20", "thread", title="new", seq_to=9))
    assert story.candidate_pool()[0].id == "n_20"
    story.put_node(Node("n_21", "event", seq_to=None))
    assert story.candidate_pool()[-1].id == "n_21"  # missing seq sorts as -1: last
    view = story.view("n_20")
    story.put_node(Node("n_20", "thread", title="renamed", seq_to=9))
    assert story.view("n_20") is not view
    assert story.candidate_views()[0].title == "renamed"


def test_type_pool(story: Store) -> None:
    tp = story.type_pool("event")
    assert [n.id for n in tp.nodes] == ["n_10", "n_9", "n_8", "n_11"]
    assert [v.id for v in tp.views] == ["n_10", "n_9", "n_8", "n_11"]


def test_keyword_index_follows_put_node(story: Store) -> None:
    assert "艾琳" in story.keywords.tokens_of("n_1")
    n = story.node("n_1")
    assert n is not None
    story.put_node(attrs.evolve(n, fields={"title": "Eileen", "aliases": ["Lina"]}))
    assert "艾琳" not in story.keywords.tokens_of("n_1")
    assert "lina" in story.keywords.tokens_of("n_1")


def test_node_fields_are_deep_frozen() -> None:
    n = Node("a", "event", fields={"who": ["x", {"y": [1]}]})
    assert isinstance(n.fields, FrozenDict)
    assert n.fields["who"] == ("x", FrozenDict({"y": (1,)}))
    with pytest.raises(TypeError):
        n.fields["who"] = 1  # type: ignore[index]
    hash(n)


# -- transactions and changesets ------------------------------------------------------------------


def test_exception_inside_transaction_restores_everything(story: Store) -> None:
    before = snapshot(story)
    with pytest.raises(RuntimeError), story.transaction():
        new_id = story.allocate_id()
        story.put_node(Node(new_id, "event", title="x", seq_to=8, parent_id="n_8"))
        rollup = story.node("n_11")
        assert rollup is not None
        story.put_node(attrs.evolve(rollup, archived=True))
        story.remove_edge(EdgeKey("n_5", "involved_in", "n_1"))
        story.remove_edge(EdgeKey("n_11", "contains", "n_5"))
        story.add_edge(Edge(new_id, "n_1", "mentions"))
        story.set_seq_counter(8)
        raise RuntimeError("boom")
    assert snapshot(story) == before
    assert story.take_changeset() is None


def test_nested_transaction_failure_undoes_only_the_inner_block(story: Store) -> None:
    with story.transaction():
        story.put_node(Node("x1", "event", seq_to=1))
        with pytest.raises(ValueError), story.transaction():
            story.put_node(Node("x2", "event", seq_to=1))
            raise ValueError
        assert story.node("x2") is None
    assert story.node("x1") is not None
    cs = story.take_changeset()
    assert cs is not None and [n.id for n in cs.nodes] == ["x1"]


def test_version_and_changeset(story: Store) -> None:
    assert story.version == 0
    assert story.take_changeset() is None
    with story.transaction():
        pass
    assert story.version == 0
    with story.transaction():
        story.put_node(Node("x", "event", seq_to=8))
        story.add_edge(Edge("x", "n_1", "mentions", 8))
        story.remove_edge(EdgeKey("n_9", "mentions", "n_1"))
        story.set_seq_counter(8)
    assert story.version == 1
    with story.transaction():
        story.add_edge(Edge("x", "n_2", "mentions"))
        story.remove_edge(EdgeKey("x", "mentions", "n_2"))  # net nothing for this edge
        story.put_node(Node("x", "event", title="t", seq_to=8))
    assert story.version == 2
    cs = story.take_changeset()
    assert cs is not None
    assert cs.version == 2
    assert [n.title for n in cs.nodes] == ["t"]
    assert cs.edges_added == (Edge("x", "n_1", "mentions", 8),)
    assert cs.edges_removed == (EdgeKey("n_9", "mentions", "n_1"),)
    assert (cs.node_seq, cs.seq_counter) == (14, 8)
    assert story.take_changeset() is None


def test_a_transaction_that_restores_what_it_changed_is_no_change(story: Store) -> None:
    n = story.node("n_1")
    assert n is not None
    with story.transaction():
        story.put_node(attrs.evolve(n, title="other"))
        story.put_node(n)
    assert story.version == 0 and story.take_changeset() is None


def test_put_node_rejects_non_nodes(story: Store) -> None:
    with pytest.raises(MemoryGraphError) as info:
        story.put_node({"id": "x"})  # type: ignore[arg-type]
    assert info.value.code == "BAD_ARGS" and "node" in info.value.message
    with pytest.raises(MemoryGraphError):
        story.set_seq_counter(-1)


def test_set_schema_rebuilds_keyword_index(story: Store) -> None:
    from memgraph_plugin.engine.model.schema import extend_schema

    assert "stubborn" in story.keywords.tokens_of("n_1")
    story.set_schema(extend_schema(story.schema, [
        {"id": "character_sheet", "tableColumns": ["title"]},
    ]))
    assert "stubborn" not in story.keywords.tokens_of("n_1")
    assert story.schema.get("character_sheet").table_columns == ("title",)  # type: ignore[union-attr]


# -- property test: incremental indices == rebuilt indices ------------------------------------

_IDS = [f"n_{i}" for i in range(1, 9)]
_TYPES = ["event", "thread", "recall_x"]

op_strategy = st.one_of(
    st.tuples(
        st.just("put"),
        st.sampled_from(_IDS),
        st.sampled_from(_TYPES),
        st.one_of(st.just(""), st.sampled_from(_IDS)),
        st.one_of(st.none(), st.integers(0, 5)),
        st.booleans(),
        st.sampled_from(["semantic", "episodic"]),
        st.sampled_from(["", "sword inn", "艾琳走进花园", "garden"]),
    ),
    st.tuples(
        st.just("edge"),
        st.sampled_from(_IDS),
        st.sampled_from(_IDS),
        st.sampled_from(["related", "allied_with", "contains"]),
    ),
    st.tuples(
        st.just("unedge"),
        st.sampled_from(_IDS),
        st.sampled_from(_IDS),
        st.sampled_from(["related", "allied_with", "contains"]),
    ),
    st.tuples(st.just("seq"), st.integers(0, 9)),
)


def _apply(store: Store, op: tuple) -> None:
    if op[0] == "put":
        _, nid, ntype, parent, seq, archived, level, text = op
        store.put_node(Node(nid, ntype, level=level, title=text, parent_id=parent, seq_to=seq,
                            archived=archived, fields={"summary": text}))
    elif op[0] == "edge":
        if store.node(op[1]) and store.node(op[2]):
            store.add_edge(Edge(op[1], op[2], op[3]))
    elif op[0] == "unedge":
        store.remove_edge((op[1], op[3], op[2]))
    else:
        store.set_seq_counter(op[1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=st.lists(
        st.tuples(st.lists(op_strategy, max_size=8), st.booleans()), min_size=1, max_size=6
    )
)
def test_incremental_indices_match_a_rebuild(batches: list) -> None:
    store = Store()
    for ops, fail in batches:
        before = snapshot(store)
        try:
            with store.transaction():
                for op in ops:
                    _apply(store, op)
                if fail:
                    raise KeyError("fail")
        except KeyError:
            assert snapshot(store) == before
        for e in store.iter_edges():
            assert e.source != e.target
            assert store.node(e.source) and store.node(e.target)
        snap = snapshot(store)
        ref = rebuilt(store)
        # adjacency order after a rebuild follows edge order; compare as sets there
        for key in ("out", "in"):
            snap[key] = {k: sorted(v) for k, v in snap[key].items()}
            ref[key] = {k: sorted(v) for k, v in ref[key].items()}
        assert snap == ref


def test_type_pool_matches_types_case_insensitively() -> None:
    store = build_store([node("a", "Quest", seq=1), node("b", "quest", seq=2)])
    assert [n.id for n in store.type_pool("QUEST").nodes] == ["b", "a"]


def test_sorted_pool_chunks_keep_key_order_through_random_changes(monkeypatch):
    """The chunked pool behaves like one sorted list (inserts at the front, removals, splits)."""
    import random

    from memgraph_plugin.engine.graph.store import _SortedPool

    rng = random.Random(5)
    monkeypatch.setattr(_SortedPool, "CHUNK", 4)  # tiny chunks: many splits and emptied chunks
    pool = _SortedPool()
    model: dict[tuple, str] = {}
    for step in range(2000):
        if model and rng.random() < 0.4:
            key = rng.choice(sorted(model))
            if rng.random() < 0.3:
                pool.replace(key, f"node{step}", f"view{step}")  # type: ignore[arg-type]
                model[key] = f"{step}"
            else:
                pool.remove(key)
                del model[key]
        else:
            key = (-rng.randint(0, 60), -rng.randint(0, 2), f"n_{step}")
            pool.insert(key, f"node{step}", f"view{step}")  # type: ignore[arg-type]
            model[key] = f"{step}"
        if step % 97 == 0 or step == 1999:
            frozen = pool.frozen()
            assert list(frozen.keys) == sorted(model)
            assert [n[4:] for n in frozen.nodes] == [model[k] for k in sorted(model)]
            assert [v[4:] for v in frozen.views] == [model[k] for k in sorted(model)]
            assert len(pool) == len(model)
    rebuilt = _SortedPool.from_sorted(list(pool.frozen().keys), list(pool.frozen().nodes),
                                      list(pool.frozen().views))
    assert rebuilt.frozen() == pool.frozen()


def test_pool_anchors_follow_compaction_archive_and_rollback():
    """Each node's nearest pool member is kept current: a rollup takes its leaves, archiving
    the rollup hands them back, a failed batch restores the anchors it moved."""
    from memgraph_plugin.api.read import get_read_api
    from memgraph_plugin.engine.write.batch import apply_batch
    from memgraph_plugin.engine.write.rollups import apply_rollup
    from memgraph_plugin.errors import MemoryGraphError

    store = Store()
    made = apply_batch(
        store,
        [{"op": "create", "type": "event", "title": f"e{i}", "fields": {"summary": "s"}}
         for i in range(4)]
        + [{"op": "create", "type": "character_sheet", "title": "Eileen"}],
        max_seq=1,
    )
    leaves, eileen = list(made.node_ids[:3]), made.node_ids[4]
    for leaf in leaves:
        apply_batch(store, [{"op": "link_upsert", "source_node_id": leaf,
                             "links": [{"target_node_id": eileen, "relation": "mentions"}]}])
    anchors = store.pool_anchors()
    assert all(anchors[leaf] == leaf for leaf in leaves)
    rollup, _ = apply_rollup(store, "event", leaves, "three things")
    assert all(anchors[leaf] == rollup for leaf in leaves) and anchors[rollup] == rollup
    read = get_read_api(store)
    pool = frozenset(v.id for v in read.list_visible_candidates())
    # the default (pool) path and an explicit copy of the pool give the same summary
    assert read.get_edge_summary(eileen) == read.get_edge_summary(eileen, visible_node_ids=pool)
    assert [n.id for n in read.get_edge_summary(eileen).sample_neighbors] == [rollup]
    apply_batch(store, [{"op": "delete", "node_id": rollup}])
    assert anchors[rollup] is None and all(anchors[leaf] == leaf for leaf in leaves)

    real = store.add_edge

    def boom(edge):
        raise RuntimeError("boom")

    store.add_edge = boom  # type: ignore[method-assign]
    try:
        with pytest.raises(MemoryGraphError):
            apply_rollup(store, "event", leaves, "again")
    finally:
        store.add_edge = real  # type: ignore[method-assign]
    assert all(anchors[leaf] == leaf for leaf in leaves)
    assert len(anchors) == len(store)
