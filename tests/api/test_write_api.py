"""The write API: the docs' examples for every method, argument checks, on_commit."""

from __future__ import annotations

import copy

import pytest

from memgraph_plugin.api.write import WriteApi, get_write_api
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model import results
from memgraph_plugin.engine.model.models import EdgeKey
from memgraph_plugin.errors import MemoryGraphError


def _event_under(parent: str, title: str) -> dict:
    """A create op of an event whose parent is `parent`."""
    return {
        "op": "create",
        "type": "event",
        "title": title,
        "fields": {"summary": "s"},
        "parent_id": parent,
    }


@pytest.fixture
def store():
    return Store()


@pytest.fixture
def commits():
    return []


@pytest.fixture
def api(store, commits):
    return get_write_api(store, None, on_commit=lambda s: commits.append(s.version))


async def test_docs_create_node_example(api, store):
    result = await api.create_node(
        type="character_sheet", title="Eileen", fields={"name": "Eileen", "aliases": ["艾琳"]}
    )
    assert isinstance(result, results.CreateResult)
    node = store.node(result.id)
    assert node.title == "Eileen" and node.fields["aliases"] == ("艾琳",)
    assert result.ref is None
    echoed = await api.create_node(type="event", title="E", fields={"summary": "s"}, ref="e1")
    assert echoed.ref == "e1"


async def test_docs_session_example_sequence(api, store):
    alice = (await api.create_node(type="character_sheet", title="Alice")).id
    bob = (await api.create_node(type="character_sheet", title="Bob")).id
    created = await api.create_node(
        type="event", title="Alice draws her sword", fields={"what": "..."}
    )
    nid = created.id
    assert store.node(nid).title == "Alice draws her sword"
    edited = await api.edit_node(id=nid, set_fields={"who": ["Alice", "Bob"]})
    assert edited == results.EditResult(ok=True, changed=True)
    linked = await api.upsert_links(
        source={"id": nid}, links=[{"target": {"id": alice}, "relation": "about"}]
    )
    assert linked == results.UpsertLinksResult(applied=2)
    await api.upsert_links(
        source={"id": nid},
        links=[{"target": {"id": bob}, "relation": "about", "direction": "outgoing"}],
    )
    removed = await api.delete_links(source={"id": nid}, target={"id": bob}, relation="about")
    assert removed == results.DeleteLinksResult(removed=1)
    assert store.edge(EdgeKey(nid, "about", bob)) is None
    assert store.edge(EdgeKey(nid, "about", alice)) is not None


async def test_docs_upsert_links_example(api, store):
    eileen = (await api.create_node(type="character_sheet", title="Eileen")).id
    event = (await api.create_node(type="event", title="e", fields={"summary": "s"})).id
    garden = (await api.create_node(type="location_state", title="Garden")).id
    result = await api.upsert_links(
        source={"id": eileen},
        links=[
            {"target": {"id": event}, "relation": "mentions"},
            {"target": {"id": garden}, "relation": "located_in", "direction": "outgoing"},
        ],
    )
    assert result.applied == 3  # 2 for the bidirectional link, 1 for the outgoing one
    again = await api.upsert_links(
        source={"id": eileen}, links=[{"target": {"id": event}, "relation": "Mentions"}]
    )
    assert again.applied == 0


async def test_docs_delete_node_example(api, store):
    nid = (await api.create_node(type="event", title="obsolete", fields={"summary": "s"})).id
    assert await api.delete_node(id=nid) == results.DeleteResult(ok=True)
    assert store.node(nid).archived
    again = await api.delete_node(id=nid)
    assert again.ok is False and again.rejected[0].error.code == "NODE_ARCHIVED"
    missing = await api.delete_node(id="n_missing")
    assert missing.ok is False and missing.rejected[0].error.code == "NODE_NOT_FOUND"


async def test_edit_node_silent_skip(api, store):
    skipped = await api.edit_node(id="n_missing", title="x")
    assert skipped.ok is False and skipped.rejected[0].error.code == "NODE_NOT_FOUND"
    nid = (await api.create_node(type="character_sheet", title="Ann")).id
    await api.delete_node(id=nid)
    assert (await api.edit_node(id=nid, set_fields={"goal": "g"})).ok is False
    other = (await api.create_node(type="character_sheet", title="Ben")).id
    assert await api.edit_node(id=other, set_fields={"profession": "healer"}) == results.EditResult(
        ok=True, changed=True
    )
    assert await api.edit_node(id=other, set_fields={"profession": "healer"}) == results.EditResult(
        ok=True, changed=False
    )


async def test_upsert_links_to_a_missing_node_applies_nothing_and_says_why(api, store):
    nid = (await api.create_node(type="character_sheet", title="Eileen")).id
    before = store.to_dict()
    result = await api.upsert_links(
        source={"id": nid}, links=[{"target": {"id": "n_gone"}, "relation": "mentions"}]
    )
    assert result.applied == 0
    assert result.rejected[0].error.code == "NODE_NOT_FOUND"
    assert "n_gone" in result.rejected[0].error.message
    assert store.to_dict() == before
    by_ref = await api.upsert_links(
        source={"ref": "c1"}, links=[{"target": {"id": nid}, "relation": "mentions"}]
    )
    assert by_ref.applied == 0 and by_ref.rejected[0].error.code == "BAD_REF"


async def test_create_node_op_failed_carries_rejected(api, store):
    before = copy.deepcopy(store.to_dict())
    with pytest.raises(MemoryGraphError) as err:
        await api.create_node(type="thread", title="Quest")  # status and note are required
    assert err.value.code == "OP_FAILED"
    assert "VALIDATION_SKIP" in err.value.message
    assert err.value.rejected[0].error.code == "VALIDATION_SKIP"
    assert store.to_dict() == before


async def test_latest_only_create_returns_the_existing_id(api):
    first = await api.create_node(type="location_state", title="Qel", fields={"aliases": "岐尔"})
    again = await api.create_node(type="location_state", title="岐尔", fields={"state": "calm"})
    assert again.id == first.id


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda api: api.create_node(type=None), "type"),
        (lambda api: api.create_node(type=""), "type"),
        (lambda api: api.create_node(type="event", fields=[1]), "fields"),
        (lambda api: api.create_node(type="event", links="x"), "links"),
        (lambda api: api.edit_node(id=None), "id"),
        (lambda api: api.edit_node(id="n_1", set_fields=[1]), "set_fields"),
        (lambda api: api.delete_node(id=""), "id"),
        (lambda api: api.upsert_links(source=None, links=[]), "source"),
        (lambda api: api.upsert_links(source={"id": "n_1"}, links=None), "links"),
        (
            lambda api: api.upsert_links(source={"id": "n_1"}, links=[{"relation": "r"}]),
            "links[0].target",
        ),
        (
            lambda api: api.upsert_links(source={"id": "n_1"}, links=[{"target": {"id": "n_2"}}]),
            "links[0].relation",
        ),
        (lambda api: api.delete_links(source=None, target={"id": "a"}, relation="r"), "source"),
        (lambda api: api.delete_links(source={"id": "a"}, target=None, relation="r"), "target"),
        (
            lambda api: api.delete_links(source={"id": "a"}, target={"id": "b"}, relation=""),
            "relation",
        ),
        (
            lambda api: api.delete_links(
                source={"id": "a"}, target={"id": "b"}, relation="r", direction="sideways"
            ),
            "direction",
        ),
        (lambda api: api.compact_nodes(type=None, child_ids=["a"], summary="s"), "type"),
        (lambda api: api.compact_nodes(type="event", child_ids=[], summary="s"), "child_ids"),
        (lambda api: api.compact_nodes(type="unicorn", child_ids=["a"], summary="s"), "type"),
        (lambda api: api.compact_nodes(type="event", child_ids=["a"], summary=""), "summary"),
        (lambda api: api.apply_extraction_batch(ops=None), "ops"),
        (lambda api: api.apply_extraction_batch(ops="create"), "ops"),
    ],
)
async def test_bad_arguments_name_the_argument(api, store, commits, call, argument):
    before = copy.deepcopy(store.to_dict())
    with pytest.raises(MemoryGraphError) as err:
        await call(api)
    assert err.value.code == "BAD_ARGS"
    assert err.value.message.startswith(argument)
    assert store.to_dict() == before and commits == []


async def test_none_store_raises_memory_store_missing():
    api = get_write_api(None, None)
    for call in (
        api.create_node(type="event"),
        api.edit_node(id="n_1"),
        api.delete_node(id="n_1"),
        api.apply_extraction_batch(ops=[]),
    ):
        with pytest.raises(MemoryGraphError) as err:
            await call
        assert err.value.code == "MEMORY_STORE_MISSING"


async def test_on_commit_only_when_something_changed(api, store, commits):
    nid = (await api.create_node(type="character_sheet", title="Eileen")).id
    assert commits == [store.version]
    await api.edit_node(id=nid, title="Eileen")  # no change
    await api.edit_node(id="n_missing", title="x")  # skipped
    await api.apply_extraction_batch(ops=[{"op": "delete", "node_id": "n_missing"}])
    await api.upsert_links(source={"id": nid}, links=[])
    assert len(commits) == 1
    await api.edit_node(id=nid, title="Eileen Vane")
    assert len(commits) == 2


async def test_on_commit_may_be_async_and_get_the_result():
    seen = []

    async def flush(store, result):
        seen.append((store.version, len(result.applied)))

    store = Store()
    api = get_write_api(store, None, on_commit=flush)
    await api.apply_extraction_batch(
        ops=[{"op": "create", "type": "event", "title": "t", "fields": {"summary": "s"}}] * 2
    )
    assert seen == [(store.version, 2)]


async def test_a_write_api_calls_on_commit_with_store_result_and_kind():
    """`WriteApi` has one `CommitCallback` signature: ``(store, result, kind)``, every write."""
    seen = []
    store = Store()
    api = WriteApi(store, None, on_commit=lambda s, r, k: seen.append((s is store, k, r.changed)))
    nid = (await api.create_node(type="character_sheet", title="Eileen")).id
    await api.edit_node(id=nid, title="Eileen Vane")
    await api.apply_extraction_batch(ops=[{"op": "delete", "node_id": nid}])
    assert seen == [(True, "create_node", True), (True, "edit_node", True), (True, "batch", True)]


async def test_apply_extraction_batch_docs_example(api, store):
    event = (await api.create_node(type="event", title="ev", fields={"summary": "s"})).id
    result = await api.apply_extraction_batch(
        ops=[
            {
                "op": "create",
                "type": "character_sheet",
                "ref": "c1",
                "fields": {"name": "Eileen", "aliases": ["艾琳"]},
            },
            {
                "op": "link_upsert",
                "sourceRef": "c1",
                "links": [{"targetNodeId": event, "relation": "mentions"}],
            },
        ]
    )
    assert isinstance(result, results.BatchResult)
    assert len(result.applied) == 2 and len(result.rejected) == 0
    assert store.edge(EdgeKey(result.refs["c1"], "mentions", event)) is not None


async def test_compact_nodes_docs_flow(api, store, commits):
    ids = []
    for i in range(3):
        r = await api.apply_extraction_batch(
            ops=[{"op": "create", "type": "event", "title": f"e{i}", "fields": {"summary": "s"}}],
            max_seq=i + 1,
        )
        ids.append(r.node_ids[0])
    count = len(commits)
    result = await api.compact_nodes(type="event", child_ids=ids, summary="three things")
    assert isinstance(result, results.CompactResult)
    rollup = store.node(result.rollup_node_id)
    assert rollup.semantic_rollup and rollup.fields["summary"] == "three things"
    assert rollup.seq_to == 3
    assert len(commits) == count + 1
    with pytest.raises(MemoryGraphError) as err:
        await api.compact_nodes(type="event", child_ids=[ids[0]], summary="again")
    assert err.value.code == "CHILD_HAS_PARENT"
    with pytest.raises(MemoryGraphError) as err:
        await api.compact_nodes(type="event", child_ids=["n_nope"], summary="x")
    assert err.value.code == "CHILD_NOT_FOUND" and "n_nope" in err.value.message
    assert len(commits) == count + 1


async def test_compact_failure_is_all_or_nothing(api, store):
    ok = (await api.create_node(type="event", title="a", fields={"summary": "s"})).id
    before = copy.deepcopy(store.to_dict())
    with pytest.raises(MemoryGraphError):
        await api.compact_nodes(type="event", child_ids=[ok, "n_ghost"], summary="x")
    assert store.to_dict() == before


async def test_child_with_parent_of_other_type_is_reparented(api, store):
    thread = (
        await api.create_node(type="thread", title="T", fields={"status": "open", "note": "n"})
    ).id
    batch = await api.apply_extraction_batch(
        ops=[
            {"op": "create", "type": "event", "title": "a", "fields": {"summary": "s"}},
            {"op": "create", "type": "event", "title": "b", "fields": {"summary": "s"}},
        ]
    )
    a, b = batch.node_ids
    await api.apply_extraction_batch(ops=[_event_under(thread, "c")])
    c = next(n.id for n in store.iter_nodes() if n.title == "c")
    rollup = (
        await api.compact_nodes(type="event", child_ids=[a, b, c], summary="x")
    ).rollup_node_id
    assert store.node(c).parent_id == rollup
    assert c not in store.node(thread).children_ids
    assert store.edge(EdgeKey(thread, "contains", c)) is None


async def test_compacting_a_child_with_its_old_parent_keeps_both_sides_agreeing(api, store):
    """Found by hypothesis: the old parent, itself a child of the rollup, kept listing the child."""
    thread = (
        await api.create_node(type="thread", title="T", fields={"status": "open", "note": "n"})
    ).id
    batch = await api.apply_extraction_batch(ops=[_event_under(thread, "c")])
    c = batch.node_ids[0]
    rollup = (
        await api.compact_nodes(type="event", child_ids=[c, thread], summary="x")
    ).rollup_node_id
    assert store.node(c).parent_id == rollup and store.node(thread).parent_id == rollup
    assert c not in store.node(thread).children_ids
    assert store.node(rollup).children_ids == (c, thread)


async def test_a_child_leaving_an_old_rollup_takes_no_hierarchy_edge_along(api, store):
    """Reparenting a child drops both hierarchy edges of its old parent (contains and
    semantic_contains), so no stale rollup edge projects onto the child's new rollup."""
    batch = await api.apply_extraction_batch(
        ops=[
            {"op": "create", "type": "event", "title": t, "fields": {"summary": "s"}}
            for t in ("a", "b")
        ]
    )
    a, b = batch.node_ids
    events = (await api.compact_nodes(type="event", child_ids=[a, b], summary="x")).rollup_node_id
    assert store.edge(EdgeKey(events, "semantic_contains", a)) is not None
    threads = (await api.compact_nodes(type="thread", child_ids=[a], summary="y")).rollup_node_id
    assert store.node(a).parent_id == threads
    assert store.node(events).children_ids == (b,)
    assert store.edge(EdgeKey(events, "contains", a)) is None
    assert store.edge(EdgeKey(events, "semantic_contains", a)) is None
    assert [(e.source, e.type) for e in store.iter_edges() if e.target == a] == [
        (threads, "contains"),
        (threads, "semantic_contains"),
    ]


async def test_results_unstructure_to_plain_data(api, store):
    import json

    from memgraph_plugin.engine.model.converter import converter
    from memgraph_plugin.engine.model.results import CommitInfo

    result = await api.apply_extraction_batch(
        ops=[
            {"op": "create", "type": "event", "title": "t", "fields": {"summary": "s"}, "ref": "a"},
            {"op": "edit", "node_id": "n_404", "title": "x"},
        ],
        max_seq=2,
    )
    data = converter.unstructure(result)
    assert json.loads(json.dumps(data)) == data
    assert data["applied"][0]["ref"] == "a" and data["refs"] == {"a": "n_1"}
    assert data["rejected"][0]["error"]["code"] == "NODE_NOT_FOUND"
    assert converter.unstructure(results.CreateResult("n_1", "a")) == {"id": "n_1", "ref": "a"}
    info = converter.unstructure(CommitInfo(version=3, applied=1, chat_id="c", node_ids=("n_1",)))
    assert info["version"] == 3 and info["node_ids"] == ["n_1"]


PRIMITIVE_AND_OP = [
    (
        "create_node",
        {
            "type": "character_sheet",
            "title": "Mira",
            "fields": {"aliases": ["M"]},
            "links": [{"target": {"id": "n_1"}, "relation": "allied_with"}],
        },
        {
            "op": "create",
            "type": "character_sheet",
            "title": "Mira",
            "fields": {"aliases": ["M"]},
            "links": [{"target_node_id": "n_1", "relation": "allied_with"}],
        },
    ),
    (
        "create_node",  # a merge into the latest-only node of that name
        {"type": "character_sheet", "title": "eileen", "fields": {"goal": "home"}},
        {"op": "create", "type": "character_sheet", "title": "eileen", "fields": {"goal": "home"}},
    ),
    (
        "edit_node",
        {"id": "n_2", "set_fields": {"summary": "new"}, "title": "Renamed"},
        {"op": "edit", "node_id": "n_2", "set_fields": {"summary": "new"}, "title": "Renamed"},
    ),
    ("edit_node", {"id": "n_404", "title": "x"}, {"op": "edit", "node_id": "n_404", "title": "x"}),
    ("delete_node", {"id": "n_2"}, {"op": "delete", "node_id": "n_2"}),
    (
        "upsert_links",
        {
            "source": {"id": "n_2"},
            "links": [
                {"target": {"id": "n_1"}, "relation": "Mentions", "direction": "outgoing"},
                {"target": {"id": "n_1"}, "relation": "related"},
            ],
        },
        {
            "op": "link_upsert",
            "source_node_id": "n_2",
            "links": [
                {"target_node_id": "n_1", "relation": "Mentions", "direction": "outgoing"},
                {"target_node_id": "n_1", "relation": "related"},
            ],
        },
    ),
    (
        "delete_links",
        {"source": {"id": "n_2"}, "target": {"id": "n_1"}, "relation": "involved_in"},
        {
            "op": "link_delete",
            "source_node_id": "n_2",
            "target_node_id": "n_1",
            "relation": "involved_in",
        },
    ),
]


@pytest.mark.parametrize(("primitive", "kwargs", "op"), PRIMITIVE_AND_OP)
async def test_primitives_are_one_op_batches(primitive, kwargs, op):
    """Each primitive leaves the store exactly as the one-op batch does (same pipeline)."""
    seed = [
        {"op": "create", "type": "character_sheet", "title": "Eileen"},
        {
            "op": "create",
            "type": "event",
            "title": "Inn",
            "fields": {"summary": "s"},
            "links": [{"target_node_id": "n_1", "relation": "involved_in"}],
        },
    ]
    by_primitive, by_batch = Store(), Store()
    for s in (by_primitive, by_batch):
        await get_write_api(s).apply_extraction_batch(ops=seed, max_seq=3)
    outcome = await getattr(get_write_api(by_primitive), primitive)(**kwargs)
    batch = await get_write_api(by_batch).apply_extraction_batch(ops=[op])
    assert by_primitive.to_dict() == by_batch.to_dict()
    assert by_primitive.version == by_batch.version
    if primitive == "create_node":
        assert outcome.id == batch.node_ids[0]
    elif primitive in ("edit_node", "delete_node"):
        assert outcome.ok == bool(batch.applied)
    elif primitive == "upsert_links":
        assert outcome.applied == batch.added
    else:
        assert outcome.removed == batch.removed


async def test_a_store_of_the_wrong_kind_is_bad_args():
    from memgraph_plugin.engine.write.batch import apply_batch
    from memgraph_plugin.engine.write.rollups import apply_rollup

    with pytest.raises(MemoryGraphError) as err:
        get_write_api({"nodes": {}})
    assert err.value.code == "BAD_ARGS" and err.value.message.startswith("store")
    for call in (lambda: apply_batch("store", []), lambda: apply_rollup(3, "event", ["a"], "s")):
        with pytest.raises(MemoryGraphError) as err:
            call()
        assert err.value.code == "BAD_ARGS" and err.value.message.startswith("store")
