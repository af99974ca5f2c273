"""Views: exact attribute names, deep freezing, no shared state, cattrs unstructuring."""

from __future__ import annotations

import json

import attrs
import pytest

from memgraph_plugin import (
    InjectionState,
    Node,
    NodeView,
    RankedView,
    Store,
    converter,
    get_read_api,
)
from memgraph_plugin.api.injection import InjectionHub
from memgraph_plugin.engine.model.frozen import FrozenDict, deep_freeze, thaw
from memgraph_plugin.engine.model.views import (
    CompactionCandidates,
    CompactionGroup,
    EdgeSummaryView,
    EdgeView,
    FindResult,
    NeighborView,
    NodeBriefView,
    SchemaSpecView,
    SchemaView,
)

API_NAMES = {
    NodeView: "id type level title fields seq_to parent_id children_ids archived "
    "semantic_rollup semantic_depth",
    EdgeView: "source target type weight",
    NeighborView: "node edge_type direction",
    EdgeSummaryView: "degree relations sample_neighbors",
    InjectionState: "always_inject_ids recall_selected_ids visible_ids",
    SchemaSpecView: "type table_name table_columns required_columns primary_key_columns "
    "force_update always_inject editable compression_mode",
    SchemaView: "types",
    NodeBriefView: "id level type table_name title summary key_values row_values to_seq "
    "child_count exposure edge_summary always_inject",
    FindResult: "matches",
    CompactionGroup: "depth child_ids fan_in",
    CompactionCandidates: "groups",
}


@pytest.mark.parametrize("cls", list(API_NAMES))
def test_attribute_names_match_the_contract(cls: type) -> None:
    assert [a.name for a in attrs.fields(cls)] == API_NAMES[cls].split()


def test_ranked_view_is_a_node_view_plus_score() -> None:
    names = [a.name for a in attrs.fields(RankedView)]
    assert names == API_NAMES[NodeView].split() + ["score", "score_mode"]


def test_deep_freeze_and_thaw() -> None:
    raw = {"a": [1, {"b": {2, 3}}], "c": ("x",)}
    frozen = deep_freeze(raw)
    assert isinstance(frozen, FrozenDict)
    assert frozen["a"] == (1, FrozenDict({"b": frozenset({2, 3})}))
    hash(frozen)
    assert thaw(frozen) == {"a": [1, {"b": [2, 3]}], "c": ["x"]}
    with pytest.raises(TypeError):
        frozen["a"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        frozen.x = 1  # type: ignore[attr-defined]
    assert FrozenDict(a=1) == {"a": 1}


def test_views_cannot_be_mutated(story: Store) -> None:
    api = get_read_api(story, None, )
    view = api.get_node("n_1")
    assert view is not None
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        view.title = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        view.fields["title"] = "x"  # type: ignore[index]
    assert isinstance(view.fields["aliases"], tuple)
    assert isinstance(view.children_ids, tuple)
    brief = api.get_node_brief("n_1")
    assert brief is not None and brief.edge_summary is not None
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        brief.edge_summary.degree = 0  # type: ignore[misc]
    assert isinstance(brief.edge_summary.relations, tuple)
    state = api.get_injection_state()
    assert isinstance(state.visible_ids, frozenset)
    assert isinstance(api.list_visible_candidates(), tuple)


def test_a_later_write_does_not_change_an_old_view(story: Store) -> None:
    api = get_read_api(story, None)
    before = api.get_node("n_1")
    pool_before = api.list_visible_candidates()
    brief_before = api.get_node_brief("n_1")
    n = story.node("n_1")
    assert n is not None and before is not None
    story.put_node(attrs.evolve(n, title="Changed", fields={"title": "Changed"}, archived=True))
    assert before.title == "Eileen" and before.fields["aliases"] == ("艾琳", "the healer")
    assert "n_1" in [v.id for v in pool_before]
    assert brief_before is not None and brief_before.title == "Eileen"
    after = api.get_node("n_1")
    assert after is not None and after.title == "Changed" and after.archived
    assert "n_1" not in [v.id for v in api.list_visible_candidates()]


def test_converter_gives_plain_json_data_for_every_view(story: Store) -> None:
    import memgraph_plugin.engine.model.views as views_module

    hub = InjectionHub("c")
    hub.set(always_inject_ids={"n_8", "n_4"}, visible_ids={"n_1"})
    api = get_read_api(story, None)
    api = type(api)(story, None, injection_hub=hub)
    values = [
        api.get_node("n_1"),
        api.list_edges(),
        api.get_neighbors("n_1"),
        api.get_edge_summary("n_11", visible_node_ids=[v.id for v in
                                                        api.list_visible_candidates()]),
        api.get_schema(),
        api.get_node_brief("n_11"),
        api.keyword_search(query="Eileen"),
        api.find_by_name(query="艾琳"),
        api.compaction_candidates(type="event"),
        api.get_injection_state(),
        api.project_edges(visible_node_ids=["n_1", "n_2"]),
        views_module.CompactionCandidates(
            groups=[views_module.CompactionGroup(depth=1, child_ids=["n_5", "n_6"], fan_in=2)]
        ),
    ]
    for value in values:
        data = converter.unstructure(value)
        assert json.loads(json.dumps(data)) == data
    # every view class of the module was among them (a new view must join this test)
    seen: set[type] = set()

    def walk(value: object) -> None:
        if attrs.has(type(value)):
            seen.add(type(value))
            for a in attrs.fields(type(value)):
                walk(getattr(value, a.name))
        elif isinstance(value, (tuple, list, frozenset)):
            for item in value:
                walk(item)

    walk(values)
    every_view = {
        v for v in vars(views_module).values()
        if isinstance(v, type) and attrs.has(v) and v.__module__ == views_module.__name__
    }
    assert every_view <= seen, sorted(t.__name__ for t in every_view - seen)
    state = converter.unstructure(api.get_injection_state())
    assert state == {"always_inject_ids": ["n_4", "n_8"], "recall_selected_ids": [],
                     "visible_ids": ["n_1"]}
    node = converter.unstructure(api.get_node("n_1"))
    assert node["fields"]["aliases"] == ["艾琳", "the healer"]
    assert node["children_ids"] == [] and node["seq_to"] == 2
    ranked = converter.unstructure(api.keyword_search(query="Eileen"))
    assert ranked[0]["score_mode"] == "keyword" and isinstance(ranked[0]["score"], float)


def test_a_result_holding_junk_ops_still_unstructures_to_json() -> None:
    """A rejected op is kept as the caller gave it, which may be anything; the converter gives
    such values their repr, so the whole result stays JSON-ready."""
    from memgraph_plugin.engine.write.batch import apply_batch

    junk = object()
    result = apply_batch(Store(), [junk, {"op": b"raw"}, {"op": "create", "type": "event",
                                                          "fields": {"when": bytearray(b"x")}}])
    assert [r.error.code for r in result.rejected] == ["BAD_OP", "UNKNOWN_OP", "BAD_OP"]
    data = converter.unstructure(result)
    assert json.loads(json.dumps(data)) == data
    assert data["rejected"][0]["op"] == repr(junk)
    assert data["rejected"][1]["op"] == {"op": "b'raw'"}
    assert converter.unstructure({"n": 1, "x": 1.5, "ok": True, "s": "t", "none": None}) == {
        "n": 1, "x": 1.5, "ok": True, "s": "t", "none": None}


def test_node_view_from_node_copies_every_attribute() -> None:
    n = Node("a", "event", level="episodic", title="t", fields={"x": [1]}, parent_id="p",
             children_ids=["c"], seq_to=4, semantic_depth=2, semantic_rollup=True, archived=True)
    v = NodeView.from_node(n)
    assert (v.id, v.type, v.level, v.title, v.fields, v.seq_to, v.parent_id, v.children_ids,
            v.archived, v.semantic_rollup, v.semantic_depth) == (
        "a", "event", "episodic", "t", FrozenDict({"x": (1,)}), 4, "p", ("c",), True, True, 2)
