"""Schema: the four default types, normalisation, TOML/JSON loading, replace vs extend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgraph_plugin import DEFAULT_SCHEMA, MemoryGraphError
from memgraph_plugin.engine.model.schema import (
    DEFAULT_DRILL_EDGE_TYPES,
    INTERNAL_EDGE_TYPES,
    RELATIONS,
    SYMMETRIC_RELATIONS,
    Compression,
    extend_schema,
    is_diagnostic_type,
    load_schema,
    normalize_schema,
    normalize_type_id,
)


def test_default_types_in_order() -> None:
    assert DEFAULT_SCHEMA.ids == ("event", "character_sheet", "location_state", "thread")


def test_default_event() -> None:
    e = DEFAULT_SCHEMA.get("event")
    assert e is not None
    assert (e.table_name, e.table_columns, e.required_columns, e.primary_key_columns) == (
        "event_table", ("summary",), ("summary",), ()
    )
    flags = (e.always_inject, e.editable, e.latest_only, e.force_update)
    assert flags == (True, False, False, True)
    assert e.compression == Compression("hierarchical", 5, 3, 10, 3)
    assert e.keywords == ("battle", "reveal", "deal", "betrayal", "event", "outcome")
    assert e.level == "semantic" and e.embedding_columns


def test_default_character_location_thread() -> None:
    c = DEFAULT_SCHEMA.get("character_sheet")
    assert c is not None
    assert c.table_name == "character_table"
    assert c.table_columns == (
        "title", "aliases", "traits", "identity", "goal", "inventory", "language_sample",
        "addressing_user",
    )
    assert (c.required_columns, c.primary_key_columns) == (("title",), ("title", "aliases"))
    assert (c.always_inject, c.editable, c.latest_only, c.compression.mode) == (
        False, True, True, "none"
    )
    loc = DEFAULT_SCHEMA.get("location_state")
    assert loc is not None
    assert loc.table_name == "location_table"
    assert loc.table_columns == ("title", "aliases", "controller", "danger", "resources", "state")
    assert (loc.required_columns, loc.primary_key_columns) == (("title",), ("title", "aliases"))
    assert (loc.always_inject, loc.editable, loc.latest_only) == (False, True, True)
    t = DEFAULT_SCHEMA.get("thread")
    assert t is not None
    assert (t.table_name, t.table_columns) == ("thread_table", ("title", "status", "note"))
    assert (t.required_columns, t.primary_key_columns) == (("title", "status", "note"), ("title",))
    assert (t.always_inject, t.editable, t.latest_only, t.compression.mode) == (
        True, True, True, "none"
    )
    for spec in DEFAULT_SCHEMA:
        assert spec.level == "semantic"
        assert spec.force_update is (spec.type == "event")


def test_get_is_case_insensitive() -> None:
    assert DEFAULT_SCHEMA.get("EVENT") is DEFAULT_SCHEMA.get("event")
    assert DEFAULT_SCHEMA.get("nope") is None
    assert DEFAULT_SCHEMA.get(None) is None
    assert "Thread" in DEFAULT_SCHEMA


def test_relations() -> None:
    assert len(RELATIONS) == 15 and "debt_owed_to" in RELATIONS
    assert {"allied_with", "hostile_to", "family_of", "partner_of"} == SYMMETRIC_RELATIONS
    assert {"contains", "semantic_contains"} == INTERNAL_EDGE_TYPES
    assert DEFAULT_DRILL_EDGE_TYPES == (
        "related", "involved_in", "mentions", "evidence", "contains", "updates", "advances",
        "occurred_at",
    )


def test_diagnostic_types() -> None:
    assert is_diagnostic_type("recall") and is_diagnostic_type("recall_trace")
    assert not is_diagnostic_type("recaller") and not is_diagnostic_type("event")


def test_normalisation_of_ids_and_compression() -> None:
    assert normalize_type_id("My Type!") == "my_type_"
    assert normalize_type_id("Quest-Log") == "quest-log"
    s = normalize_schema([
        {"id": "Quest Log", "compression": {"mode": "Hierarchical", "threshold": 9}},
        {"id": "arc", "compression": {"mode": "hierarchical", "threshold": 1, "fanIn": 1,
                                      "maxDepth": 0, "keepRecentLeaves": -4}},
        {"id": "plain"},
    ])
    q, arc, plain = s.types
    assert q.type == "quest_log" and q.compression.mode == "none"  # not exactly "hierarchical"
    # clamped to minimums; maxDepth 0 stays 0: never compacted
    assert arc.compression == Compression("hierarchical", 2, 2, 0, 0)
    assert plain.compression == Compression("none", 6, 3, 6, 0)  # defaults
    assert plain.table_name == "plain_table" and plain.editable and not plain.always_inject


def test_camel_and_snake_case_specs_agree() -> None:
    camel = normalize_schema([{
        "id": "quest", "tableName": "quest_table", "tableColumns": ["title", "status"],
        "requiredColumns": ["title"], "primaryKeyColumns": ["title"], "forceUpdate": True,
        "alwaysInject": True, "editable": False, "latestOnly": True,
        "compression": {"mode": "hierarchical", "fanIn": 4, "maxDepth": 3,
                        "keepRecentLeaves": 1},
        "embeddingColumns": ["title"], "keywords": ["Quest"],
    }])
    snake = normalize_schema([{
        "type": "quest", "table_name": "quest_table", "table_columns": ["title", "status"],
        "required_columns": ["title"], "primary_key_columns": ["title"], "force_update": True,
        "always_inject": True, "editable": False, "latest_only": True,
        "compression": {"mode": "hierarchical", "fan_in": 4, "max_depth": 3,
                        "keep_recent_leaves": 1},
        "embedding_columns": ["title"], "keywords": ["quest"],
    }])
    assert camel == snake
    assert normalize_schema(camel.to_list()) == camel


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("event", "schema"),
        ([], "schema"),
        ([5], "schema[0]"),
        ([{"tableName": "x"}], "schema[0].id"),
        ([{"id": ""}], "schema[0].id"),
        ([{"id": "a", "tableColumns": "title"}], "schema[0].table_columns"),
        ([{"id": "a", "alwaysInject": "yes"}], "schema[0].always_inject"),
        ([{"id": "a", "level": "deep"}], "schema[0].level"),
        ([{"id": "a", "compression": {"threshold": "many"}}], "schema[0].compression.threshold"),
        ([{"id": "a"}, {"id": "A"}], "schema[1].id"),
        ([{"id": "a", "keywords": "x"}], "schema[0].keywords"),
    ],
)
def test_bad_schema_input_names_the_field(raw: object, named: str) -> None:
    with pytest.raises(MemoryGraphError) as info:
        normalize_schema(raw)
    assert info.value.code == "BAD_ARGS"
    assert info.value.message.startswith(named)


def test_extend_replaces_same_id_and_appends_new() -> None:
    s = extend_schema(DEFAULT_SCHEMA, [
        {"id": "thread", "tableColumns": ["title"], "alwaysInject": False},
        {"id": "faction", "tableColumns": ["title", "leader"]},
    ])
    assert s.ids == ("event", "character_sheet", "location_state", "thread", "faction")
    thread = s.get("thread")
    assert thread is not None and thread.table_columns == ("title",) and not thread.always_inject


def test_load_toml_replace_and_extend(tmp_path: Path) -> None:
    replace = tmp_path / "schema.toml"
    replace.write_text(
        '[[types]]\nid = "Faction"\ntableColumns = ["title", "leader"]\n'
        '[types.compression]\nmode = "hierarchical"\nthreshold = 4\n',
        encoding="utf-8",
    )
    s = load_schema(replace)
    assert s.ids == ("faction",)
    assert s.types[0].compression.threshold == 4
    extend = tmp_path / "more.toml"
    extend.write_text('extend = true\n[[types]]\nid = "faction"\n', encoding="utf-8")
    assert load_schema(str(extend)).ids[-1] == "faction"
    assert len(load_schema(str(extend)).ids) == 5


def test_load_json_list_and_object(tmp_path: Path) -> None:
    p = tmp_path / "schema.json"
    p.write_text(json.dumps([{"id": "a"}, {"id": "b"}]), encoding="utf-8")
    assert load_schema(p).ids == ("a", "b")
    p.write_text(json.dumps({"types": [{"id": "c"}], "extend": True}), encoding="utf-8")
    assert load_schema(p).ids[-1] == "c"
    assert load_schema(None) is DEFAULT_SCHEMA
    assert load_schema([{"id": "x"}]).ids == ("x",)


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[[types]\n", encoding="utf-8")
    with pytest.raises(MemoryGraphError) as info:
        load_schema(bad)
    assert info.value.code == "BAD_ARGS" and "bad.toml" in info.value.message
    with pytest.raises(MemoryGraphError) as info:
        load_schema(tmp_path / "missing.json")
    assert "missing.json" in info.value.message
    nokey = tmp_path / "nokey.toml"
    nokey.write_text('x = 1\n', encoding="utf-8")
    with pytest.raises(MemoryGraphError) as info:
        load_schema(nokey)
    assert "types" in info.value.message


def test_default_schema_is_already_normalised() -> None:
    assert normalize_schema(DEFAULT_SCHEMA.to_list()) == DEFAULT_SCHEMA
    assert load_schema(DEFAULT_SCHEMA) is DEFAULT_SCHEMA


async def test_a_user_schema_file_reaches_the_session(tmp_path: Path) -> None:
    """settings ``schema`` = a TOML path extending the defaults: sessions see and write it."""
    from memgraph_plugin.service import MemoryGraph

    path = tmp_path / "schema.toml"
    path.write_text(
        'extend = true\n[[types]]\nid = "Faction"\ntableColumns = ["title", "leader"]\n'
        'primaryKeyColumns = ["title"]\nlatestOnly = true\n',
        encoding="utf-8",
    )

    class Ctx:
        chat_id = "c-schema"
        host = None

    service = MemoryGraph(None, settings={"schema": str(path)})
    try:
        session = await service.open_session(Ctx())
        assert [s.type for s in session.get_schema().types][-1] == "faction"
        first = await session.create_node(type="faction", title="Guild", fields={"leader": "A"})
        again = await session.create_node(type="Faction", title="guild", fields={"leader": "B"})
        assert again.id == first.id  # latest-only: merged on the primary key
        assert session.get_node(first.id).fields["leader"] == "B"
    finally:
        service.close()


def test_python_api_replace_and_extend_on_a_store() -> None:
    from memgraph_plugin import Store, get_read_api

    replaced = Store(schema=[{"id": "faction"}])
    assert get_read_api(replaced).get_schema().types[0].type == "faction"
    extra = [{"id": "faction"}, {"id": "thread", "editable": False}]
    extended = extend_schema(DEFAULT_SCHEMA, extra)
    assert extended.ids == ("event", "character_sheet", "location_state", "thread", "faction")
    assert not extended.get("thread").editable
    store = Store()
    store.set_schema(extended)
    assert get_read_api(store).get_schema().types[-1].type == "faction"
