"""The batch pipeline: normalisation, per-op rejection codes, refs, latest-only merge, rollback."""

from __future__ import annotations

import copy
import datetime
import json

import pytest

from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.index.name_index import split_aliases
from memgraph_plugin.engine.model.frozen import json_problem
from memgraph_plugin.engine.model.models import Edge, EdgeKey, Node
from memgraph_plugin.engine.write.batch import apply_batch
from memgraph_plugin.engine.write.ops import normalize_op
from memgraph_plugin.engine.write.rollups import build_rollup
from memgraph_plugin.errors import MemoryGraphError


def codes(result):
    return [r.error.code for r in result.rejected]


def make(store, *ops, max_seq=None):
    return apply_batch(store, list(ops), max_seq=max_seq)


def upsert(source, target, relation, **link):
    """A `link_upsert` op with one link between live ids."""
    return {
        "op": "link_upsert",
        "source_node_id": source,
        "links": [{"target_node_id": target, "relation": relation, **link}],
    }


@pytest.fixture
def store():
    s = Store()
    make(
        s,
        {
            "op": "create",
            "type": "character_sheet",
            "title": "Eileen",
            "fields": {"aliases": ["艾琳"]},
        },
        {"op": "create", "type": "event", "title": "Inn fight", "fields": {"summary": "a fight"}},
        {"op": "create", "type": "location_state", "title": "Garden", "fields": {}},
        {
            "op": "create",
            "type": "thread",
            "title": "Quest",
            "fields": {"status": "open", "note": "n"},
        },
        max_seq=1,
    )
    return s


def test_docs_batch_example_create_and_link_by_ref(store):
    result = make(
        store,
        {
            "op": "create",
            "type": "character_sheet",
            "ref": "c1",
            "fields": {"name": "Mara", "aliases": ["玛拉"]},
        },
        {
            "op": "link_upsert",
            "sourceRef": "c1",
            "links": [{"targetNodeId": "n_2", "relation": "mentions"}],
        },
    )
    assert len(result.applied) == 2 and result.rejected == ()
    new_id = result.refs["c1"]
    assert store.node(new_id).title == "Mara"
    # bidirectional by default: both directions stored
    assert store.edge(EdgeKey(new_id, "mentions", "n_2")) is not None
    assert store.edge(EdgeKey("n_2", "mentions", new_id)) is not None
    assert result.added == 2


def test_refs_defined_later_in_the_batch_resolve(store):
    result = make(
        store,
        {
            "op": "link_upsert",
            "source_ref": "late",
            "links": [{"target_ref": "later", "relation": "related", "direction": "outgoing"}],
        },
        {"op": "create", "type": "event", "ref": "late", "fields": {"summary": "one"}},
        {"op": "create", "type": "event", "ref": "later", "fields": {"summary": "two"}},
    )
    assert result.rejected == ()
    a, b = result.refs["late"], result.refs["later"]
    assert store.edge(EdgeKey(a, "related", b)) is not None
    assert store.edge(EdgeKey(b, "related", a)) is None
    # applied keeps batch order and gives each op's node
    assert [op["op"] for op in result.applied] == ["link_upsert", "create", "create"]
    assert result.node_ids == (a, a, b)


def test_camel_and_snake_case_are_the_same_op():
    camel = normalize_op(
        {"op": "edit", "nodeId": "n_1", "setFields": {"a": 1}, "clearFields": ["b"]}
    )
    snake = normalize_op(
        {"op": "edit", "node_id": "n_1", "set_fields": {"a": 1}, "clear_fields": ["b"]}
    )
    assert camel == snake


@pytest.mark.parametrize(
    ("op", "code", "needle"),
    [
        ("not an op", "BAD_OP", "mapping"),
        ({"op": "explode"}, "UNKNOWN_OP", "explode"),
        ({"op": "create"}, "BAD_OP", "type"),
        ({"op": "create", "type": "unicorn", "title": "x"}, "VALIDATION_SKIP", "unicorn"),
        ({"op": "create", "type": "thread", "title": "Quest"}, "VALIDATION_SKIP", "status"),
        ({"op": "create", "type": "event", "fields": {"what": "x"}}, "VALIDATION_SKIP", "summary"),
        ({"op": "create", "type": "event", "title": "t", "fields": "nope"}, "BAD_OP", "fields"),
        # an edit is rejected only with the codes the contract lists for it
        ({"op": "edit"}, "VALIDATION_SKIP", "node_id"),
        ({"op": "edit", "node_id": 7, "title": "x"}, "VALIDATION_SKIP", "node_id"),
        ({"op": "edit", "node_id": "n_1", "title": 3}, "VALIDATION_SKIP", "title"),
        ({"op": "edit", "node_id": "n_404", "title": "x"}, "NODE_NOT_FOUND", "n_404"),
        ({"op": "edit", "node_id": "n_1"}, "VALIDATION_SKIP", "nothing to change"),
        (
            {"op": "edit", "node_id": "n_1", "type": "event", "title": "x"},
            "TYPE_MISMATCH",
            "character_sheet",
        ),
        ({"op": "edit", "node_id": "n_4", "clear_fields": ["status"]}, "VALIDATION_SKIP", "status"),
        ({"op": "edit", "node_id": "n_1", "set_fields": ["a"]}, "VALIDATION_SKIP", "set_fields"),
        (
            {"op": "edit", "node_id": "n_1", "clear_fields": "status"},
            "VALIDATION_SKIP",
            "clear_fields",
        ),
        ({"op": "delete", "node_id": "n_404"}, "NODE_NOT_FOUND", "n_404"),
        (
            {"op": "link_upsert", "links": [{"target_node_id": "n_2", "relation": "r"}]},
            "BAD_OP",
            "source",
        ),
        ({"op": "link_upsert", "source_node_id": "n_1", "links": []}, "BAD_OP", "links"),
        (
            {
                "op": "link_upsert",
                "source_node_id": "n_1",
                "links": [{"target_ref": "nope", "relation": "r"}],
            },
            "BAD_REF",
            "nope",
        ),
        (
            upsert("n_1", "n_9", "r"),
            "NODE_NOT_FOUND",
            "n_9",
        ),
        (
            upsert("n_1", "n_2", ""),
            "BAD_RELATION",
            "relation",
        ),
        (
            upsert("n_1", "n_2", "contains"),
            "BAD_RELATION",
            "internal",
        ),
        (
            upsert("n_1", "n_2", "r", direction="up"),
            "BAD_OP",
            "direction",
        ),
        (
            {
                "op": "link_delete",
                "source_node_id": "n_1",
                "target_node_id": "n_77",
                "relation": "r",
            },
            "NODE_NOT_FOUND",
            "n_77",
        ),
    ],
)
def test_rejection_codes_name_what_was_wrong_and_change_nothing(store, op, code, needle):
    before = copy.deepcopy(store.to_dict())
    version = store.version
    result = make(store, op)
    assert codes(result) == [code]
    assert needle in result.rejected[0].error.message
    assert result.rejected[0].op is op
    assert result.applied == ()
    assert store.to_dict() == before
    assert store.version == version and not result.changed


def test_rejection_unpacks_as_op_and_error(store):
    result = make(store, {"op": "delete", "node_id": "n_404"})
    for op, error in result.rejected:
        assert op == {"op": "delete", "node_id": "n_404"}
        assert error.code == "NODE_NOT_FOUND"


def test_archived_node_rejects_edit_and_delete(store):
    assert make(store, {"op": "delete", "node_id": "n_3"}).applied
    assert codes(make(store, {"op": "edit", "node_id": "n_3", "title": "x"})) == ["NODE_ARCHIVED"]
    assert codes(make(store, {"op": "delete", "node_id": "n_3"})) == ["NODE_ARCHIVED"]
    link = upsert("n_1", "n_3", "r")
    assert codes(make(store, link)) == ["NODE_ARCHIVED"]


def test_delete_archives_and_keeps_edges_and_children(store):
    make(store, upsert("n_1", "n_2", "mentions"))
    kid = make(
        store,
        {
            "op": "create",
            "type": "event",
            "title": "child",
            "fields": {"summary": "c"},
            "parent_id": "n_2",
        },
    ).node_ids[0]
    result = make(store, {"op": "delete", "node_id": "n_2"})
    assert result.applied and result.node_ids == ("n_2",)
    node = store.node("n_2")
    assert node.archived is True
    assert store.edge(EdgeKey("n_1", "mentions", "n_2")) is not None
    assert store.node(kid).parent_id == "n_2" and kid in node.children_ids


def test_create_with_parent_adds_contains_edge(store):
    result = make(
        store,
        {
            "op": "create",
            "type": "event",
            "title": "sub",
            "fields": {"summary": "s"},
            "parentId": "n_2",
        },
    )
    child = result.node_ids[0]
    assert store.node(child).parent_id == "n_2"
    assert child in store.node("n_2").children_ids
    assert store.edge(EdgeKey("n_2", "contains", child)) is not None


def test_latest_only_create_merges_by_title_or_alias(store):
    # by alias (split on , ; | and compared lower-case)
    result = make(
        store,
        {"op": "create", "type": "character_sheet", "title": "艾琳", "fields": {"traits": "kind"}},
    )
    assert result.node_ids == ("n_1",)
    assert store.node("n_1").fields["traits"] == "kind"
    # by title, case-insensitive, and new aliases are unioned in
    result = make(
        store,
        {
            "op": "create",
            "type": "character_sheet",
            "title": "EILEEN",
            "fields": {"aliases": "Lina; Ei"},
        },
    )
    assert result.node_ids == ("n_1",)
    node = store.node("n_1")
    assert node.title == "Eileen"
    assert len([n for n in store.iter_nodes() if n.type == "character_sheet"]) == 1
    result = make(store, {"op": "create", "type": "character_sheet", "title": "lina"})
    assert result.node_ids == ("n_1",)
    # a different name: a new node
    result = make(store, {"op": "create", "type": "character_sheet", "title": "Bob"})
    assert result.node_ids != ("n_1",)


def test_latest_only_merge_never_loses_a_name(store):
    """A merge used to replace a list of aliases by a string alias (or vice versa): the lost name
    then made a duplicate. Name columns now gather both sides; a new title joins the aliases."""
    assert store.node("n_1").fields["aliases"] == ("艾琳",)
    make(store, {"op": "create", "type": "character_sheet", "title": "Eileen",
                 "fields": {"aliases": "the healer; LENA"}})
    assert store.node("n_1").fields["aliases"] == ("艾琳", "the healer", "LENA")
    # matched through an alias, the create's own title is a new name of the node
    result = make(store, {"op": "create", "type": "character_sheet", "title": "Vane",
                          "fields": {"aliases": ["lena"]}})
    assert result.node_ids == ("n_1",)
    node = store.node("n_1")
    assert node.title == "Eileen"
    assert node.fields["aliases"] == ("艾琳", "the healer", "LENA", "Vane")
    for name in ("艾琳", "the healer", "vane"):
        again = make(store, {"op": "create", "type": "character_sheet", "title": name})
        assert again.node_ids == ("n_1",)
    assert [n.id for n in store.iter_nodes() if n.type == "character_sheet"] == ["n_1"]
    # nothing new: the value is left exactly as it was (no change, no commit)
    version = store.version
    assert not make(store, {"op": "create", "type": "character_sheet", "title": "eileen",
                            "fields": {"aliases": "lena, VANE"}}).changed
    assert store.version == version


def test_latest_only_merge_follows_edits_and_archives(store):
    make(store, {"op": "edit", "node_id": "n_1", "title": "Eileen Vane"})
    assert make(
        store, {"op": "create", "type": "character_sheet", "title": "eileen vane"}
    ).node_ids == ("n_1",)
    make(store, {"op": "delete", "node_id": "n_1"})
    fresh = make(
        store, {"op": "create", "type": "character_sheet", "title": "Eileen Vane"}
    ).node_ids[0]
    assert fresh != "n_1"


def test_latest_only_index_survives_writes_outside_the_pipeline(store):
    store.put_node(Node(id="x_1", type="character_sheet", title="Zed"))
    assert make(store, {"op": "create", "type": "character_sheet", "title": "zed"}).node_ids == (
        "x_1",
    )


def test_two_creates_of_one_name_in_a_batch_merge(store):
    result = make(
        store,
        {"op": "create", "type": "location_state", "title": "Qel", "ref": "a"},
        {
            "op": "create",
            "type": "location_state",
            "title": "qel",
            "ref": "b",
            "fields": {"state": "calm"},
        },
    )
    assert result.refs["a"] == result.refs["b"]
    assert store.node(result.refs["a"]).fields["state"] == "calm"


def test_event_titles(store):
    given = make(
        store,
        {
            "op": "create",
            "type": "event",
            "title": "Alice draws her sword",
            "fields": {"summary": "s"},
        },
    )
    assert store.node(given.node_ids[0]).title == "Alice draws her sword"
    auto = make(store, {"op": "create", "type": "event", "fields": {"summary": "s"}})
    nid = auto.node_ids[0]
    assert store.node(nid).title == f"Summary {nid[2:]}"


def test_edit_patches_clears_and_renames(store):
    result = make(
        store,
        {
            "op": "edit",
            "node_id": "n_1",
            "set_fields": {"goal": "heal"},
            "clear_fields": ["aliases"],
            "title": "Eileen V",
        },
    )
    assert result.applied and result.changed
    node = store.node("n_1")
    assert node.title == "Eileen V" and node.fields == {"goal": "heal"}
    # an edit that changes nothing is applied but changes nothing
    again = make(store, {"op": "edit", "node_id": "n_1", "set_fields": {"goal": "heal"}})
    assert again.applied and not again.changed


def test_edit_works_on_non_editable_types(store):
    # the docs' session example edits an event right after creating it
    result = make(store, {"op": "edit", "node_id": "n_2", "set_fields": {"who": ["Alice", "Bob"]}})
    assert result.applied
    assert store.node("n_2").fields["who"] == ("Alice", "Bob")


def test_relations_lower_cased_symmetric_once_duplicates_add_nothing(store):
    op = upsert("n_3", "n_1", "Allied_With")
    first = make(store, op)
    assert first.added == 1
    assert store.edge(EdgeKey("n_1", "allied_with", "n_3")) is not None
    assert make(store, op).added == 0
    assert not make(store, op).changed
    out = upsert("n_1", "n_2", "MENTIONS", direction="incoming")
    assert make(store, out).added == 1
    assert store.edge(EdgeKey("n_2", "mentions", "n_1")) is not None
    assert store.edge(EdgeKey("n_1", "mentions", "n_2")) is None


def test_link_delete_per_direction_counts_removed(store):
    make(store, upsert("n_1", "n_2", "mentions"))
    out = make(
        store,
        {
            "op": "link_delete",
            "source_node_id": "n_1",
            "target_node_id": "n_2",
            "relation": "Mentions",
            "direction": "outgoing",
        },
    )
    assert out.removed == 1
    assert store.edge(EdgeKey("n_2", "mentions", "n_1")) is not None
    both = make(
        store,
        {
            "op": "link_delete",
            "source_node_id": "n_1",
            "target_node_id": "n_2",
            "relation": "mentions",
        },
    )
    assert both.removed == 1
    assert (
        make(
            store,
            {
                "op": "link_delete",
                "source_node_id": "n_1",
                "target_node_id": "n_2",
                "relation": "mentions",
            },
        ).removed
        == 0
    )


def test_create_with_bad_link_keeps_node_and_reports_the_link(store):
    result = make(
        store,
        {
            "op": "create",
            "type": "event",
            "title": "e",
            "fields": {"summary": "s"},
            "links": [{"target_ref": "ghost", "relation": "related"}],
        },
    )
    assert len(result.applied) == 1
    assert codes(result) == ["BAD_REF"]
    assert result.rejected[0].op["op"] == "link_upsert"
    assert store.node(result.node_ids[0]) is not None


def test_links_of_a_create_archived_later_in_the_batch_are_refused(store):
    """Links run after every create/edit/delete: a create's own links must see the node as it is
    then (archived by a later op), exactly like a `link_upsert` from it would."""
    before = store.edge_count
    result = make(
        store,
        {
            "op": "create",
            "type": "event",
            "title": "gone",
            "fields": {"summary": "s"},
            "ref": "g",
            "links": [{"target_node_id": "n_1", "relation": "related"}],
        },
        {"op": "delete", "node_id": "n_5"},
        {"op": "link_upsert", "source_ref": "g", "links": [{"target_node_id": "n_3",
                                                            "relation": "related"}]},
    )
    assert store.node("n_5").archived
    assert codes(result) == ["NODE_ARCHIVED", "NODE_ARCHIVED"]
    assert result.rejected[1].op["from_op"] == 0
    assert store.edge_count == before
    assert store.in_edges("n_5") == () and store.out_edges("n_5") == ()


@pytest.mark.parametrize(
    "value", [datetime.date(2024, 1, 1), b"raw", object(), ["ok", {"deep": bytearray(b"x")}]]
)
def test_field_values_that_are_no_json_data_are_rejected_naming_the_column(store, value):
    """Stores are written out as JSON: a date in a field used to be stored, then broke
    `to_dict()` and persistence after the write had happened."""
    before = copy.deepcopy(store.to_dict())
    result = make(
        store,
        {"op": "create", "type": "event", "title": "e", "fields": {"summary": "s", "when": value}},
        {"op": "edit", "node_id": "n_1", "set_fields": {"when": value}},
    )
    assert codes(result) == ["BAD_OP", "VALIDATION_SKIP"]  # an edit's code, as the contract lists
    assert "fields.when" in result.rejected[0].error.message
    assert "set_fields.when" in result.rejected[1].error.message
    assert store.to_dict() == before
    json.dumps(store.to_dict())
    with pytest.raises(MemoryGraphError) as info, store.transaction():
        build_rollup(store, "event", ["n_2"], "s", {"when": value})
    assert info.value.code == "BAD_ARGS" and info.value.message.startswith("fields.when")
    assert store.to_dict() == before


def test_json_field_values_of_every_kind_are_kept(store):
    fields = {"summary": "s", "n": 1, "x": 1.5, "ok": True, "none": None,
              "tags": ("a", "b"), "set": {"z", "y"}, "map": {"k": [1, {"j": "v"}]}}
    result = make(store, {"op": "create", "type": "event", "title": "e", "fields": fields})
    assert not result.rejected
    assert json.loads(json.dumps(store.to_dict()))["nodes"][result.node_ids[0]]["fields"] == {
        **fields, "tags": ["a", "b"], "set": ["y", "z"]
    }


def test_json_problem_paths_and_depth():
    assert json_problem({"a": [1, {"b": None}]}, "fields") is None
    assert json_problem({"a": [1, {"b": 2j}]}, "fields") == (
        "fields.a[1].b: expected JSON data, got complex"
    )
    loop: list = []
    loop.append(loop)
    assert "nested more than" in json_problem(loop, "fields.x")


def test_seq_stamps_and_advances_counter(store):
    assert store.seq_counter == 1
    result = make(
        store,
        {"op": "create", "type": "event", "title": "later", "fields": {"summary": "s"}},
        max_seq=7,
    )
    assert store.seq_counter == 7
    assert store.node(result.node_ids[0]).seq_to == 7
    default = make(
        store, {"op": "create", "type": "event", "title": "now", "fields": {"summary": "s"}}
    )
    assert store.node(default.node_ids[0]).seq_to == 7
    # a batch that applies nothing changes nothing, its seq included
    assert not make(store, max_seq=9).changed and store.seq_counter == 7
    assert not make(store, {"op": "explode"}, max_seq=10**12).changed
    assert store.seq_counter == 7
    with pytest.raises(MemoryGraphError) as err:
        make(store, max_seq=-1)
    assert err.value.code == "BAD_ARGS" and "max_seq" in err.value.message


def test_edges_are_stamped_with_the_batch_seq(store):
    make(
        store,
        upsert("n_1", "n_2", "mentions", direction="outgoing"),
        max_seq=4,
    )
    assert store.edge(EdgeKey("n_1", "mentions", "n_2")).seq_to == 4


def test_unexpected_failure_rolls_the_whole_batch_back(store, monkeypatch):
    before = copy.deepcopy(store.to_dict())
    version = store.version
    real = store.add_edge
    calls = {"n": 0}

    def flaky(edge: Edge) -> bool:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("disk on fire")
        return real(edge)

    monkeypatch.setattr(store, "add_edge", flaky)
    ops = [
        {"op": "create", "type": "event", "ref": "e", "title": "x", "fields": {"summary": "s"}},
        {"op": "edit", "node_id": "n_1", "title": "Renamed"},
        {"op": "delete", "node_id": "n_3"},
        {
            "op": "link_upsert",
            "source_ref": "e",
            "links": [{"target_node_id": "n_1", "relation": "mentions"}],
        },
    ]
    with pytest.raises(MemoryGraphError) as err:
        apply_batch(store, ops, max_seq=5)
    assert err.value.code == "OP_FAILED" and "disk on fire" in err.value.message
    assert store.to_dict() == before
    assert store.version == version
    monkeypatch.undo()
    # the latest-only index was rebuilt: a later create still merges correctly
    assert make(store, {"op": "create", "type": "character_sheet", "title": "eileen"}).node_ids == (
        "n_1",
    )


def test_bad_batch_arguments(store):
    with pytest.raises(MemoryGraphError) as err:
        apply_batch(store, {"op": "create"})
    assert err.value.code == "BAD_ARGS" and "ops" in err.value.message
    with pytest.raises(MemoryGraphError) as err:
        apply_batch(None, [])
    assert err.value.code == "MEMORY_STORE_MISSING"


def test_split_aliases():
    assert split_aliases("A, b;C | d") == ["a", "b", "c", "d"]
    assert split_aliases(["X|Y", "z"]) == ["x", "y", "z"]
    assert split_aliases(None) == []


def test_build_rollup_shape(store):
    ids = [
        make(
            store,
            {"op": "create", "type": "event", "title": f"e{i}", "fields": {"summary": "s"}},
            max_seq=i + 2,
        ).node_ids[0]
        for i in range(3)
    ]
    with store.transaction():
        rollup_id = build_rollup(store, "event", ids, "it all happened", {"mood": "grim"})
    rollup = store.node(rollup_id)
    assert rollup.semantic_rollup and rollup.semantic_depth == 1
    assert rollup.title == f"event Summary L1 #{rollup_id[2:]}"
    assert rollup.seq_to == 4
    assert rollup.fields == {"summary": "it all happened", "mood": "grim"}
    assert rollup.children_ids == tuple(ids)
    for child in ids:
        assert store.node(child).parent_id == rollup_id
        assert store.edge(EdgeKey(rollup_id, "contains", child)) is not None
        assert store.edge(EdgeKey(rollup_id, "semantic_contains", child)) is not None
    with pytest.raises(MemoryGraphError) as err, store.transaction():
        build_rollup(store, "event", ids[:1], "again")
    assert err.value.code == "CHILD_HAS_PARENT" and ids[0] in err.value.message


def test_nested_source_and_target_spellings(store):
    result = make(
        store,
        {"op": "create", "type": "event", "ref": "e", "title": "x", "fields": {"summary": "s"}},
        {
            "op": "link_upsert",
            "source": {"ref": "e"},
            "links": [{"target": {"id": "n_1"}, "relation": "mentions", "direction": "outgoing"}],
        },
        {
            "op": "link_upsert",
            "source": {"id": "n_1"},
            "links": [{"target": {"ref": "e"}, "relation": "related", "direction": "outgoing"}],
        },
    )
    assert result.rejected == ()
    e = result.refs["e"]
    assert store.edge(EdgeKey(e, "mentions", "n_1")) is not None
    assert store.edge(EdgeKey("n_1", "related", e)) is not None
    removed = make(
        store,
        {
            "op": "link_delete",
            "source": {"id": e},
            "target": {"id": "n_1"},
            "relation": "mentions",
            "direction": "outgoing",
        },
    )
    assert removed.removed == 1 and removed.rejected == ()


def test_the_sample_story_applies_cleanly_and_merges_entities():
    import json
    from pathlib import Path

    from memgraph_plugin.engine.index.name_index import primary_key_values

    path = Path(__file__).resolve().parents[3] / "sample_plugins" / "story" / "story.json"
    turns = json.loads(path.read_text(encoding="utf-8"))["turns"]
    store = Store()
    for seq, turn in enumerate(turns, 1):
        result = apply_batch(store, turn["ops"], max_seq=seq)
        assert result.rejected == (), result.rejected
    assert store.seq_counter == len(turns)
    seen: dict[tuple[str, str], str] = {}
    for node in store.iter_nodes():
        spec = store.schema.get(node.type)
        if not spec.latest_only or node.archived:
            continue
        for name in primary_key_values(spec, node.title, node.fields):
            assert (node.type, name) not in seen, (
                f"{name!r} is both {seen[(node.type, name)]} and {node.id}"
            )
            seen[(node.type, name)] = node.id


def test_name_index_lives_in_the_store_and_is_never_rebuilt_by_writes(store, monkeypatch):
    from memgraph_plugin.engine.index.name_index import NameIndex

    index = store.name_index()
    assert index.find(store.schema.get("character_sheet"), ["艾琳"]) == "n_1"
    notes = {"n": 0}
    real_note = NameIndex.note

    def counting(self, node_id, node):
        notes["n"] += 1
        return real_note(self, node_id, node)

    monkeypatch.setattr(NameIndex, "note", counting)
    for i in range(30):  # writes outside the pipeline bump the version and are still tracked
        store.put_node(Node(id=f"x_{i}", type="event", title=f"e{i}", fields={"summary": "s"}))
    store.put_node(Node(id="x_zed", type="character_sheet", title="Zed"))
    notes["n"] = 0
    result = make(store, {"op": "create", "type": "character_sheet", "title": "zed"})
    assert result.node_ids == ("x_zed",)
    assert store.name_index() is index  # the same index, kept current
    assert notes["n"] <= 32  # only the nodes written since the last lookup were re-read
    notes["n"] = 0
    make(store, {"op": "create", "type": "location_state", "title": "Qel"})
    assert notes["n"] <= 3


def test_name_index_follows_rollback_archive_and_schema_change(store, monkeypatch):
    store.name_index()
    real = store.add_edge

    def boom(edge):
        raise RuntimeError("boom")

    monkeypatch.setattr(store, "add_edge", boom)
    with pytest.raises(MemoryGraphError):
        make(
            store,
            {"op": "create", "type": "character_sheet", "title": "Mira", "ref": "m"},
            {
                "op": "link_upsert",
                "source_ref": "m",
                "links": [{"target_node_id": "n_2", "relation": "mentions"}],
            },
        )
    monkeypatch.setattr(store, "add_edge", real)
    assert store.name_index().ids.get(("character_sheet", "mira")) is None
    created = make(store, {"op": "create", "type": "character_sheet", "title": "Mira"})
    mira = created.node_ids[0]
    assert store.node(mira).title == "Mira"
    make(store, {"op": "delete", "node_id": mira})
    again = make(store, {"op": "create", "type": "character_sheet", "title": "mira"})
    assert again.node_ids[0] != mira  # an archived node is no merge target
    # a schema without latest-only character sheets: the index follows it
    from memgraph_plugin.engine.model.schema import extend_schema

    plain = extend_schema(
        store.schema, [{"id": "character_sheet", "tableColumns": ["title"], "latestOnly": False}]
    )
    assert not plain.get("character_sheet").latest_only
    store.set_schema(plain)
    twice = make(store, {"op": "create", "type": "character_sheet", "title": "Eileen"})
    assert twice.node_ids[0] != "n_1"
