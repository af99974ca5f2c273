"""`Store.from_dict`'s bulk path: its decoders and indices equal the validating, write-by-write
reference (`node_from_dict`, `edge_from_dict`, `put_node` / `add_edge` one at a time)."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin import MemoryGraphError, Node, Store
from memgraph_plugin.engine.graph.store import normalize_edge
from memgraph_plugin.engine.index.deferred import realize_all
from memgraph_plugin.engine.index.name_index import NameIndex
from memgraph_plugin.engine.load import gc_paused
from memgraph_plugin.engine.load.column_loader import LoadedPoolOrder
from memgraph_plugin.engine.model.frozen import FrozenDict
from memgraph_plugin.engine.model.json_records import (
    _edges_from_raw,
    _plain_node,
    edge_from_dict,
    node_from_dict,
    node_to_dict,
)
from memgraph_plugin.engine.model.models import EdgeKey
from memgraph_plugin.engine.model.views import NodeView
from memgraph_plugin.storage.format.graph_columns import state_tables
from tests.story_graph import node, story_data

# -- decoding one node --------------------------------------------------------------------------

ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 5),
    st.sampled_from([0.0, 2.0, 2.5, "", "x", "n_1", "Event", [], [1, 2], ["a", "b"], (), {}]),
    st.just({"start": 1, "end": 2}),
    st.just(("a", 3)),
)
FIELD_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 3)), inner, max_size=3),
    ),
    max_leaves=6,
)
PLAIN = node("n_1", "event", "A title", 3, fields={"summary": "s"})
KEYS = [*PLAIN, "floorRange", "supersededBy", "parent_id", "seq_to", "unknown"]


@st.composite
def raw_nodes(draw: Any) -> dict[str, Any]:
    """A node dict near the usual shape: some keys dropped, changed or added."""
    raw = dict(PLAIN)
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4)):
        if key == "fields":
            raw[key] = draw(st.one_of(ODD_VALUES, st.dictionaries(st.text(max_size=4),
                                                                  FIELD_VALUES, max_size=3)))
        elif draw(st.booleans()) and key in raw:
            del raw[key]
        else:
            raw[key] = draw(ODD_VALUES)
    return raw


def decoded(raw: Any, key: str | None) -> Node | MemoryGraphError:
    try:
        return node_from_dict(raw, key=key)
    except MemoryGraphError as exc:
        return exc


ONE_VALUES = [None, True, False, -1, 0, 3, 0.0, 2.0, 2.5, "", "x", "n_1", [], ["a", "b"], [1],
              ("a",), {}, {"start": 1, "end": 2}, {"a": [1, {"b": 2}]}, {1: "x"}, ("a", 3)]


def test_plain_node_equals_node_from_dict_or_declines_for_every_single_change() -> None:
    """Every key of the usual shape dropped, or set to each value of a list of awkward ones."""
    for key in KEYS:
        changed = [{k: v for k, v in PLAIN.items() if k != key}]
        changed += [{**PLAIN, key: value} for value in ONE_VALUES]
        for raw in changed:
            for nid in ("n_1", "n_2", None):
                assert_plain_node_agrees(raw, nid)


@given(raw=raw_nodes(), key=st.sampled_from(["n_1", "n_2", None]))
def test_plain_node_equals_node_from_dict_or_declines(raw: dict[str, Any], key: str | None):
    assert_plain_node_agrees(raw, key)


def assert_plain_node_agrees(raw: dict[str, Any], key: str | None) -> None:
    """`_plain_node` declines, or returns what `node_from_dict` returns (types included)."""
    fast = _plain_node(raw, key)
    ref = decoded(raw, key)
    if fast is None:
        return
    assert isinstance(ref, Node), "the fast path took a node the validating one rejects"
    assert fast == ref and hash(fast) == hash(ref)
    for a in attrs.fields(Node):
        assert type(getattr(fast, a.name)) is type(getattr(ref, a.name)), a.name
    assert type(fast.fields) is FrozenDict and type(fast.children_ids) is tuple


@given(raw=raw_nodes(), key=st.sampled_from(["n_1", "n_2"]))
def test_from_dict_decodes_nodes_like_node_from_dict(raw: dict[str, Any], key: str):
    """The store sees the same node or the same error, whichever path decoded it."""
    ref = decoded(raw, key)
    if isinstance(ref, MemoryGraphError):
        with pytest.raises(MemoryGraphError) as info:
            Store.from_dict({"nodes": {key: raw}})
        assert (info.value.code, info.value.message) == (ref.code, ref.message)
    else:
        assert Store.from_dict({"nodes": {key: raw}}).node(key) == ref


def test_plain_node_takes_what_to_dict_writes() -> None:
    """The fast path is the one stores written by this engine take (floorRange aside)."""
    full = Node(
        "n_9", "event", "episodic", "t", {"a": [1, {"b": (2,)}], "c": None}, "n_1",
        ("n_2", "n_3"), 7, 2, True, True, None, "n_4",
    )
    for n in [full, *(node_from_dict(raw) for raw in story_data()["nodes"].values())]:
        fast = _plain_node(node_to_dict(n), n.id)
        assert fast is not None and fast == n
    ranged = node_to_dict(Node("n_5", "event", floor_range=(1, 4)))
    assert _plain_node(ranged, "n_5") is None
    assert Store.from_dict({"nodes": {"n_5": ranged}}).node("n_5").floor_range == (1, 4)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "event", "seqTo": True}, "nodes['a'].seqTo: expected an integer, got True"),
        ({"type": "event", "semanticRollup": 1}, "nodes['a'].semanticRollup: expected true"),
        ({"type": "event", "childrenIds": ["b", 3]}, "nodes['a'].childrenIds: expected ids"),
        ({"type": "event", "title": 5}, "nodes['a'].title: expected a string, got int"),
        ({"type": "event", "parentId": 4}, "nodes['a'].parentId: expected a string"),
        ({"type": "event", "level": 3}, "nodes['a'].level: expected a string, got 3"),
        ({"type": "event", "supersededBy": 4}, "nodes['a'].supersededBy: expected a string"),
        ({"type": "event", "floorRange": [1]}, "nodes['a'].floorRange: expected [start, end]"),
        ({"type": ""}, "nodes['a'].type: expected a non-empty string"),
    ],
)
def test_bad_nodes_are_rejected_with_the_key_named(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(MemoryGraphError) as info:
        Store.from_dict({"nodes": {"a": {"id": "a", **raw}}})
    assert info.value.code == "BAD_ARGS"
    assert info.value.message.startswith(message)


# -- decoding edges ----------------------------------------------------------------------------

EDGE_ENDS = st.sampled_from(["a", "b", "c", "ghost", "", None, 3])
raw_edges = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"from": EDGE_ENDS, "to": EDGE_ENDS,
             "type": st.sampled_from(["related", "Allied_With", "allied_with", "", None])},
            optional={"seqTo": st.one_of(st.none(), st.integers(-1, 3), st.just(2.0),
                                         st.just("x"), st.booleans()),
                      "source": EDGE_ENDS, "extra": st.just(1)},
        ),
        st.just("not an edge"),
    ),
    max_size=8,
)


def reference_edges(raw: list[Any], nodes: dict[str, Any]) -> dict[EdgeKey, Any]:
    """What `from_dict` did before its edge decoding was inlined."""
    edges: dict[EdgeKey, Any] = {}
    for i, r in enumerate(raw):
        edge = edge_from_dict(r, index=i)
        if edge.source == edge.target or edge.source not in nodes or edge.target not in nodes:
            continue
        edge = normalize_edge(edge)
        edges.setdefault(edge.key, edge)
    return edges


@given(raw=raw_edges)
def test_edges_decode_like_edge_from_dict(raw: list[Any]) -> None:
    nodes = {"a": None, "b": None, "c": None}
    try:
        ref = reference_edges(raw, nodes)
    except MemoryGraphError as exc:
        with pytest.raises(MemoryGraphError) as info:
            _edges_from_raw(raw, nodes)  # type: ignore[arg-type]
        assert (info.value.code, info.value.message) == (exc.code, exc.message)
        return
    got = _edges_from_raw(raw, nodes)  # type: ignore[arg-type]
    assert list(got.items()) == list(ref.items())
    assert all(type(k) is EdgeKey for k in got)


# -- indices: the bulk load against single writes ----------------------------------------------

TYPES = ["event", "event", "character_sheet", "thread", "recall_trace", "Event"]
IDS = [f"n_{i}" for i in range(1, 10)]
NAMES = ["Eileen", "eileen; Bob", "Qel", ""]


@st.composite
def graphs(draw: Any) -> dict[str, Any]:
    """A store dict with hierarchies, parent loops, missing parents, archived, episodic and
    diagnostic nodes, latest-only names, and edges (some dangling, duplicated or symmetric)."""
    nodes = {}
    for nid in draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=9, unique=True)):
        ntype = draw(st.sampled_from(TYPES))
        name = draw(st.sampled_from(NAMES))
        nodes[nid] = node(
            nid, ntype, name, draw(st.one_of(st.none(), st.integers(0, 4))),
            parentId=draw(st.one_of(st.just(""), st.sampled_from([*IDS, "ghost"]))),
            archived=draw(st.booleans()) and draw(st.booleans()),
            level=draw(st.sampled_from(["semantic", "semantic", "episodic"])),
            semanticDepth=draw(st.integers(0, 2)),
            fields={"title": name, "aliases": draw(st.lists(st.sampled_from(NAMES), max_size=2)),
                    "summary": draw(st.sampled_from(["harbor guild", "storm", ""]))},
        )
    edges = [
        {"from": draw(st.sampled_from([*IDS, "ghost"])), "to": draw(st.sampled_from(IDS)),
         "type": draw(st.sampled_from(["related", "Mentions", "allied_with", "contains"]))}
        for _ in range(draw(st.integers(0, 12)))
    ]
    return {"nodes": nodes, "edges": edges, "nodeSeq": 0, "seqCounter": 0}


def written_one_by_one(data: dict[str, Any]) -> Store:
    store = Store()
    for nid, raw in data["nodes"].items():
        store.put_node(node_from_dict(raw, key=nid))
    for raw in data.get("edges", ()):
        edge = edge_from_dict(raw)
        if edge.source in store.internals()[0] and edge.target in store.internals()[0]:
            store.add_edge(edge)
    return store


# built on first use (compared through their results below), or bookkeeping of writes
LAZY = {"_views", "_keywords", "_kw_dirty", "_names", "_names_dirty", "_pool_rank",
        "_visible_cache", "_loaded_order"}
WRITES = {"version", "_depth", "_undo", "_pending", "_pending_nodes", "_pending_edges",
          "_pending_counters", "_node_seq", "_seq_counter", "_changes", "_changes_base"}
ORDERED = {"_nodes", "_edges"}


def assert_same_indices(loaded: Store, written: Store) -> None:
    """Every index of `loaded` equals `written`'s. An attribute not named above is compared as
    it is: an index added to the write path must be built by the bulk load too. Indices a
    columnar load defers to their first read are built here first (as any read would)."""
    realize_all(loaded)
    assert loaded._deferred == {}
    assert set(vars(loaded)) == set(vars(written))
    for name in sorted(set(vars(loaded)) - LAZY - WRITES):
        a, b = getattr(loaded, name), getattr(written, name)
        if name == "_pool":
            assert a.frozen() == b.frozen()
        elif name == "_type_pools":
            assert {t: p.frozen() for t, p in a.items()} == {t: p.frozen() for t, p in b.items()}
        elif name in ORDERED:
            assert list(a.items()) == list(b.items()), name
        else:
            assert a == b, name
    for view in loaded.candidate_views():
        assert view == NodeView.from_node(loaded.node(view.id)) and loaded.view(view.id) is view
    assert loaded.name_index().ids == written.name_index().ids
    assert loaded.name_index().names == written.name_index().names
    for nid in written.internals()[0]:
        assert loaded.keywords.tokens_of(nid) == written.keywords.tokens_of(nid)


@pytest.mark.slow
@given(data=graphs())
def test_bulk_load_builds_the_indices_single_writes_build(data: dict[str, Any]) -> None:
    assert_same_indices(Store.from_dict(data), written_one_by_one(data))


def test_bulk_load_of_the_story_builds_the_indices_single_writes_build() -> None:
    data = story_data()
    assert_same_indices(Store.from_dict(data), written_one_by_one(data))


def test_name_index_built_on_first_lookup_sees_writes_made_before_it() -> None:
    """The load leaves the name index to its first lookup; writes before that one (a rename, an
    archive, a new node, a rolled-back write) are what the lookup sees."""
    data = story_data()
    store = Store.from_dict(data)
    eager = Store.from_dict(data)
    eager.name_index()  # built now: later writes only mark their nodes
    for s in (store, eager):
        n1, n2 = s.node("n_1"), s.node("n_2")
        s.put_node(Node("n_1", "character_sheet", title="Eileen", fields={"title": "Lena"},
                        seq_to=n1.seq_to))
        s.put_node(Node("n_2", n2.type, title=n2.title, fields=n2.fields, archived=True))
        s.put_node(Node("n_20", "character_sheet", title="Bob", fields={"title": "Bob"}))
        with pytest.raises(RuntimeError), s.transaction():
            s.put_node(Node("n_21", "character_sheet", title="Qel", fields={"title": "Qel"}))
            raise RuntimeError("undo")
    fresh = NameIndex(store.schema, ((n.id, n) for n in store.iter_nodes()))
    for s in (store, eager):
        assert s.name_index().ids == fresh.ids
        assert s.name_index().names == fresh.names
    spec = store.schema.get("character_sheet")
    assert store.name_index().find(spec, ["lena"]) == "n_1"
    assert store.name_index().find(spec, ["bob"]) == "n_20"
    assert store.name_index().find(spec, ["bram"]) is None  # archived
    assert store.name_index().find(spec, ["qel"]) is None  # rolled back


def test_pool_views_made_on_first_read_follow_writes_made_before_it() -> None:
    """A loaded pool makes its views on the first read: writes before it (a changed member, one
    archived, a new one, a rolled-back change) and a view asked for by id all show up as they
    would in a pool whose views were made at once."""
    data = story_data()
    store = Store.from_dict(data)
    early = store.view("n_1")
    n8, n10 = store.node("n_8"), store.node("n_10")
    store.put_node(Node(n8.id, n8.type, title="Bram repents", fields=n8.fields, seq_to=n8.seq_to))
    store.put_node(Node(n10.id, n10.type, title=n10.title, fields=n10.fields, archived=True))
    store.put_node(Node("n_30", "event", title="New", seq_to=9))
    with pytest.raises(RuntimeError), store.transaction():
        store.put_node(Node("n_9", "event", title="undone", seq_to=6))
        raise RuntimeError("undo")
    reference = written_one_by_one(store.to_dict())
    assert store.candidate_views() == reference.candidate_views()
    for t in ("event", "thread", "character_sheet", "location_state"):
        assert store.type_pool(t) == reference.type_pool(t)
    views = {v.id: v for v in store.candidate_views()}
    assert views["n_1"] is early and views["n_8"].title == "Bram repents"
    assert "n_10" not in views and views["n_30"].title == "New"
    for t in ("event", "thread"):
        for view in store.type_pool(t).views:
            assert view is views[view.id] is store.view(view.id)


def test_a_loaded_store_is_freed_as_soon_as_it_is_dropped() -> None:
    """No reference cycle through the store (its pools make views without holding it): a
    dropped chat's memory comes back without waiting for a garbage collection."""
    gc.disable()
    try:
        store = Store.from_dict(story_data())
        store.candidate_views()
        ref = weakref.ref(store)
        del store
        assert ref() is None
    finally:
        gc.enable()


def test_anchors_follow_parent_chains_loops_and_archived_nodes() -> None:
    """The one-pass anchor build equals a walk per node (`_anchor_walk`) on awkward shapes."""
    data = {"nodes": {
        "a": node("a", "event", seq=1, parentId="b", level="episodic"),
        "b": node("b", "event", seq=1, parentId="a", level="episodic"),  # a loop, no member
        "c": node("c", "event", seq=1, parentId="a", level="episodic"),  # below the loop
        "d": node("d", "event", seq=1, parentId="e", level="episodic"),
        "e": node("e", "thread", seq=1, parentId="d"),  # a loop through a pool member
        "f": node("f", "event", seq=1, parentId="g", level="episodic"),
        "g": node("g", "event", seq=1, parentId="h", archived=True),  # archived on the way
        "h": node("h", "thread", seq=1),
        "i": node("i", "event", seq=1, parentId="ghost", level="episodic"),  # missing parent
        "j": node("j", "event", seq=1, parentId="h", level="episodic"),
    }}
    store = Store.from_dict(data)
    walked = {nid: store._anchor_walk(nid) for nid in data["nodes"]}
    assert dict(store.pool_anchors()) == walked
    assert walked == {"a": None, "b": None, "c": None, "d": "e", "e": "e", "f": None, "g": None,
                      "h": "h", "i": None, "j": "h"}
    assert list(store.pool_anchors()) == list(data["nodes"])
    assert_same_indices(store, written_one_by_one(data))


# -- the collector pause ----------------------------------------------------------------------


def test_gc_paused_nests_and_restores_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()
    with pytest.raises(MemoryGraphError):
        Store.from_dict({"nodes": {"a": {"id": "a"}}})
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_gc_paused_across_threads_enables_when_the_last_block_ends() -> None:
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with gc_paused():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=hold)
    worker.start()
    inside.wait(5)
    with gc_paused():
        pass
    assert not gc.isenabled()  # the worker's block still runs
    release.set()
    worker.join(5)
    assert gc.isenabled()


# -- a snapshot's columns: indices computed over whole columns -----------------------------------


def _columns_of(data: dict[str, Any]) -> tuple[Any, Any]:
    from memgraph_plugin.storage.format.graph_columns import state_tables

    return state_tables(Store.from_dict(data).to_dict())


@pytest.mark.slow
@given(data=graphs())
def test_column_load_builds_the_indices_single_writes_build(data: dict[str, Any]) -> None:
    nodes, edges = _columns_of(data)
    loaded = Store.from_columns(nodes, edges, 0, 0)
    assert_same_indices(loaded, written_one_by_one(data))
    reference = Store.from_dict(data)
    assert list(loaded.iter_nodes()) == list(reference.iter_nodes())
    assert loaded.node_seq == reference.node_seq
    assert dict(loaded.pool_anchors()) == dict(reference.pool_anchors())


@pytest.mark.slow
@settings(max_examples=60)
@given(data=graphs(), victim=st.integers(0, 8))
def test_pool_order_of_a_column_load_reads_its_arrays_until_the_pool_changes(
    data: dict[str, Any], victim: int
) -> None:
    """The first keyword search after an open breaks ties through `pool_order()` without the
    deferred id -> (key, type) map being built; it answers what that map answers, and a write
    to the pool switches to the map (built, then written to)."""
    nodes, edges = _columns_of(data)
    loaded, reference = Store.from_columns(nodes, edges, 0, 0), Store.from_dict(data)
    order, want = loaded.pool_order(), reference.pool_order()
    assert isinstance(order, LoadedPoolOrder) and "_pool_of" in loaded._deferred
    assert list(order.items()) == list(want.items()) and len(order) == len(want)
    for nid in [*IDS, "ghost", 3, None]:
        assert (nid in order) == (nid in want)
        assert order.get(nid) == want.get(nid)  # type: ignore[arg-type]
        if isinstance(nid, str):
            assert loaded.in_pool(nid) == reference.in_pool(nid)
    for query in ("harbor storm", "eileen", "qel guild"):
        assert loaded.keywords.search(query, order, 3) == reference.keywords.search(
            query, want, 3
        )
    assert "_pool_of" in loaded._deferred  # none of that built it
    members = list(want)
    if members:
        nid = members[victim % len(members)]
        for store in (loaded, reference):
            with store.transaction():
                store.put_node(attrs.evolve(store.node(nid), archived=True))
        after = loaded.pool_order()
        assert not isinstance(after, LoadedPoolOrder) and nid not in after
        assert list(after.items()) == list(reference.pool_order().items())


def test_column_load_of_the_story_builds_the_indices_single_writes_build() -> None:
    data = story_data()
    nodes, edges = _columns_of(data)
    assert_same_indices(Store.from_columns(nodes, edges, 0, 0), written_one_by_one(data))


def test_column_load_decodes_no_node_one_by_one_and_parses_fields_on_first_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opening from plain columns takes no per-node decoder, and a node's fields are parsed
    from their stored text only when something reads them (then equal to a full decode)."""
    from memgraph_plugin.engine.model.frozen import JsonFields

    data = story_data()
    nodes, edges = _columns_of(data)
    calls: list[str] = []

    def counted(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)

        return wrapper

    from memgraph_plugin.engine.load import raw_rows

    monkeypatch.setattr(raw_rows, "node_from_dict", counted("node", raw_rows.node_from_dict))
    store = Store.from_columns(nodes, edges, 0, 0)
    assert calls == []
    with_fields = [n for n in store.iter_nodes() if n.fields]
    assert with_fields and all(isinstance(n.fields, JsonFields) for n in with_fields)
    reference = Store.from_dict(data)
    for n in with_fields:
        assert n.fields == reference.node(n.id).fields
        assert hash(n.fields) == hash(reference.node(n.id).fields)


def test_column_load_decodes_raw_rows_like_the_dict_load() -> None:
    """A row the columns cannot hold (stored as raw JSON) goes through the validating decoder
    (`raw_rows`: the rest stay columns), with the same store as a load from the dict."""
    data = story_data()
    first = next(iter(data["nodes"]))
    data["nodes"][first] = {**data["nodes"][first], "floorRange": [1, 2]}
    nodes, edges = _columns_of(data)
    assert nodes["raw"].null_count < nodes.num_rows
    reference = Store.from_dict(data)
    loaded = Store.from_columns(nodes, edges, reference.node_seq, reference.seq_counter)
    assert loaded.to_dict() == reference.to_dict()
    assert_same_indices(loaded, written_one_by_one(data))


def test_json_fields_parse_all_at_once_equals_parsing_each() -> None:
    from memgraph_plugin.engine.model.frozen import JsonFields

    texts = ['{"a": [1, {"b": 2}]}', '{"c": "x"}', '{"d": null}']
    one = [JsonFields(t) for t in texts]
    each = [JsonFields(t) for t in texts]
    one[1].get("c")  # already parsed: kept
    JsonFields.parse_all([*one, FrozenDict({"e": 1}), None])
    assert one == each and [dict(f) for f in one] == [dict(f) for f in each]
    bad = [JsonFields('{"a": 1}'), JsonFields("[1, 2]")]
    JsonFields.parse_all(bad)  # a text that is no object: left to raise when read
    assert bad[0]["a"] == 1
    with pytest.raises(ValueError, match="not a JSON object"):
        bad[1].get("a")


def test_keyword_index_of_a_column_load_equals_one_of_single_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first search after a load indexes every node (fields parsed in one go): the same
    tokens and results as an index kept by single writes."""
    monkeypatch.setattr("memgraph_plugin.engine.graph.store.BULK_PARSE", 0)
    data = story_data()
    nodes, edges = _columns_of(data)
    loaded, written = Store.from_columns(nodes, edges, 0, 0), written_one_by_one(data)
    for query in ("harbor guild", "Eileen", "storm night"):
        assert loaded.keywords.search(query, None, 10) == written.keywords.search(query, None, 10)
    for nid in written.internals()[0]:
        assert loaded.keywords.tokens_of(nid) == written.keywords.tokens_of(nid)


def test_an_opened_stores_deferred_indices_are_built_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The name index (and every index an open leaves to its first read) is built in bulk with
    the collector held off, on whatever thread reads it first; the collector is back on after."""
    import memgraph_plugin.engine.load.store_loading as store_loading

    seen: list[bool] = []
    build = store_loading.names_from_columns

    def spy(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return build(*args)

    monkeypatch.setattr(store_loading, "names_from_columns", spy)
    data = story_data()
    nodes, edges = state_tables(Store.from_dict(data).to_dict())
    store = Store.from_columns(nodes, edges, data["nodeSeq"], data["seqCounter"])
    assert gc.isenabled()
    assert store.name_index().known_as("character_sheet", "bramwell") == {"n_2"}
    assert seen == [False]
    assert gc.isenabled()


def test_an_index_is_read_while_another_is_still_being_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An open builds the name index on its own thread (`build_soon`); the first turn's read of
    another deferred index (the pool) does not wait for that build to end."""
    import concurrent.futures

    import memgraph_plugin.engine.load.store_loading as store_loading
    from memgraph_plugin.engine.index.deferred import build_soon

    started, release = threading.Event(), threading.Event()
    build = store_loading.names_from_columns

    def slow(*args: Any) -> Any:
        started.set()
        release.wait(60)
        return build(*args)

    monkeypatch.setattr(store_loading, "names_from_columns", slow)
    data = story_data()
    nodes, edges = state_tables(Store.from_dict(data).to_dict())
    store = Store.from_columns(nodes, edges, data["nodeSeq"], data["seqCounter"])
    builder = build_soon(store, "_names")
    assert builder is not None and started.wait(60)
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            read = pool.submit(lambda: list(store.pool_anchors()))
            assert read.result(timeout=60) == list(Store.from_dict(data).pool_anchors())
            assert not release.is_set()  # read while the name index was still being built
    finally:
        release.set()
        builder.result(60)
    assert store.name_index().known_as("character_sheet", "bramwell") == {"n_2"}


def test_the_end_of_a_pause_moves_what_it_made_to_the_old_generation_unwalked() -> None:
    """When the last pause ends, what the blocks made joins the old generation without a
    collection walking it (nothing young is left for the first collections after a load);
    cyclic garbage made in the block is freed by the next full collection. A block that ends
    by an error has its young and middle generations collected at once (a traceback's cycles
    hold a failed load's frames)."""
    gc.collect()

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    walked: list[int] = []

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            walked.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with gc_paused():
            keep = [[i] for i in range(5_000)]
            garbage = weakref.ref(Cycle())
            assert garbage() is not None  # paused: the cycle waits
    finally:
        gc.callbacks.remove(count)
    assert walked == []  # no collection ended the pause
    assert gc.get_count()[0] < 700 and gc.get_count()[1] == 0  # nothing young left to walk
    old = {id(x) for x in gc.get_objects(generation=2)}
    assert id(keep) in old and id(keep[0]) in old
    assert garbage() is not None
    gc.collect()
    assert garbage() is None  # the next full collection frees it
    assert len(keep) == 5_000

    with pytest.raises(ValueError), gc_paused():
        garbage = weakref.ref(Cycle())
        raise ValueError("the load failed")
    assert garbage() is None and gc.isenabled()  # collected when the failed block ended


def test_a_pause_leaves_objects_the_process_froze_frozen() -> None:
    """A process that froze objects of its own (`gc.freeze`, before a fork) keeps them
    frozen: the pause then ends with a collection, not with `unfreeze`."""
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0

        class Cycle:
            def __init__(self) -> None:
                self.me = self

        with gc_paused():
            garbage = weakref.ref(Cycle())
        # still frozen (an unfreeze empties the permanent generation; a frozen object another
        # thread lets go of meanwhile leaves it, so not an exact count: CI saw one go)
        assert gc.get_freeze_count() > frozen // 2
        assert garbage() is None  # collected when the pause ended
    finally:
        gc.unfreeze()
