"""Hostile values: every bad value is a rejection with a code and the field
path, never a raw exception; nothing stored can make an export invalid JSON."""

from __future__ import annotations

import json

import pytest

from memgraph_plugin.api.write import get_write_api
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.values import (
    DEFAULT_MAX_FIELD_BYTES,
    DEFAULT_MAX_NODE_BYTES,
    DEFAULT_MAX_TITLE_CHARS,
)
from memgraph_plugin.errors import MemoryGraphError


class _Ctx:
    def __init__(self, **settings) -> None:
        self.settings = settings
        self.chat_id = "c"


def _good(summary: str = "fine") -> dict:
    return {"op": "create", "type": "event", "fields": {"summary": summary}}


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


async def _batch(ops, *, max_seq=None, **settings):
    store = Store()
    api = get_write_api(store, _Ctx(**settings))
    before = json.dumps(store.to_dict())
    result = await api.apply_extraction_batch(ops=ops, max_seq=max_seq)
    return store, result, before


async def test_huge_max_seq_is_bad_args_not_overflow():
    store = Store()
    api = get_write_api(store)
    with pytest.raises(MemoryGraphError) as info:
        await api.apply_extraction_batch(ops=[_good()], max_seq=2**63)
    assert info.value.code == "BAD_ARGS" and "max_seq" in info.value.message
    assert store.to_dict()["nodes"] == {}


def _with(summary: object = "s", **extra: object) -> dict:
    return {"op": "create", "type": "event", "fields": {"summary": summary, **extra}}


@pytest.mark.parametrize(
    ("op", "path"),
    [
        ({**_with(), "title": "bad \ud800"}, "title"),
        ({"op": "create", "type": "event", "fields": {"summary": "s", "k\udfff": 1}}, "fields"),
        (_with(["ok", "x\ud800"]), "fields.summary[1]"),
        (_with(n=float("nan")), "fields.n"),
        (_with(n=float("inf")), "fields.n"),
        (_with(n={"d": -float("inf")}), "fields.n.d"),
        (_with(n=2**63), "fields.n"),
        ({**_with(), "ref": "r\x00"}, "ref"),
        ({**_with(), "type": "ev\ud800ent"}, "type"),
        ({"op": "edit", "node_id": "n_1\x00", "set_fields": {"summary": "x"}}, "node_id"),
        ({"op": "delete", "node_id": "n\n1"}, "node_id"),
    ],
)
async def test_a_bad_value_rejects_its_op_with_a_path_and_the_rest_applies(op, path):
    store, result, _before = await _batch([_good("kept"), op])
    assert len(result.applied) == 1
    (rejection,) = result.rejected
    # an edit's malformed shapes are VALIDATION_SKIP: the codes the contract lists for an edit
    assert rejection.error.code == ("VALIDATION_SKIP" if op["op"] == "edit" else "BAD_OP")
    assert f"{path}:" in rejection.error.message
    _strict(json.dumps(store.to_dict()))  # what was stored exports as strict JSON


async def test_size_limits_have_defaults_and_are_settings():
    big_title = {
        "op": "create",
        "type": "event",
        "title": "t" * (DEFAULT_MAX_TITLE_CHARS + 1),
        "fields": {"summary": "s"},
    }
    big_field = {
        "op": "create",
        "type": "event",
        "fields": {"summary": "x" * (DEFAULT_MAX_FIELD_BYTES + 1)},
    }
    store, result, before = await _batch([big_title, big_field])
    assert not result.applied and json.dumps(store.to_dict()) == before
    messages = [r.error.message for r in result.rejected]
    assert "title:" in messages[0] and str(DEFAULT_MAX_TITLE_CHARS) in messages[0]
    assert "fields.summary:" in messages[1] and str(DEFAULT_MAX_FIELD_BYTES) in messages[1]
    # a smaller limit from the settings
    _store, result, _ = await _batch([_good("x" * 50)], max_field_bytes=20)
    assert result.rejected and "fields.summary:" in result.rejected[0].error.message
    _store, result, _ = await _batch(
        [{"op": "create", "type": "event", "title": "abcdef", "fields": {"summary": "s"}}],
        max_title_chars=3,
    )
    assert result.rejected and "title:" in result.rejected[0].error.message


async def test_edit_with_a_bad_value_is_rejected_and_leaves_the_node():
    store = Store()
    api = get_write_api(store)
    created = await api.create_node(type="event", fields={"summary": "one"})
    before = json.dumps(store.to_dict())
    result = await api.edit_node(id=created.id, set_fields={"summary": float("nan")})
    assert not result.ok and result.rejected[0].error.code == "VALIDATION_SKIP"
    assert "set_fields.summary:" in result.rejected[0].error.message
    assert json.dumps(store.to_dict()) == before
    result = await api.edit_node(id=created.id, title="\ud800")
    assert not result.ok and "title:" in result.rejected[0].error.message


async def test_link_relation_with_a_lone_surrogate_is_rejected():
    store = Store()
    api = get_write_api(store)
    a = await api.create_node(type="event", fields={"summary": "a"})
    b = await api.create_node(type="event", fields={"summary": "b"})
    result = await api.apply_extraction_batch(
        ops=[
            {
                "op": "link_upsert",
                "source_node_id": a.id,
                "links": [{"target_node_id": b.id, "relation": "re\ud800l"}],
            }
        ]
    )
    assert result.rejected and "links[0].relation:" in result.rejected[0].error.message


async def test_compact_with_nan_in_fields_is_bad_args():
    store = Store()
    api = get_write_api(store)
    a = await api.create_node(type="event", fields={"summary": "a"})
    with pytest.raises(MemoryGraphError) as info:
        await api.compact_nodes(
            type="event", child_ids=[a.id], summary="s", fields={"x": float("nan")}
        )
    assert info.value.code == "BAD_ARGS" and "fields.x:" in info.value.message


async def test_a_huge_field_name_and_a_huge_node_are_refused():
    """A 10 MB field name and a node of many fields each within max_field_bytes."""
    name_op = {"op": "create", "type": "event", "fields": {"summary": "s", "k" * 10_000_000: 1}}
    part = "x" * (DEFAULT_MAX_FIELD_BYTES - 100)
    many = {f"f{i}": part for i in range(DEFAULT_MAX_NODE_BYTES // DEFAULT_MAX_FIELD_BYTES + 2)}
    node_op = {"op": "create", "type": "event", "fields": {"summary": "s", **many}}
    store, result, before = await _batch([name_op, node_op, _good("kept")])
    assert len(result.applied) == 1 and json.dumps(store.to_dict()) != before
    messages = [r.error.message for r in result.rejected]
    assert "field name of 10000001 characters" in messages[0] or "10000000" in messages[0]
    assert "max_field_name_chars" in messages[0] and "max_node_bytes" in messages[1]
    # an edit that grows a node past the limit is refused, the node stays
    store = Store()
    api = get_write_api(store, _Ctx(max_node_bytes=1000))
    created = await api.create_node(type="event", fields={"summary": "one"})
    grown = await api.edit_node(id=created.id, set_fields={"a": "y" * 600, "b": "z" * 600})
    assert not grown.ok and "max_node_bytes" in grown.rejected[0].error.message
    assert set(store.node(created.id).fields) == {"summary"}
    # the settings lower the caps
    _store, result, _ = await _batch(
        [{"op": "create", "type": "event", "fields": {"summary": "s", "abcdef": 1}}],
        max_field_name_chars=3,
    )
    assert result.rejected and "max_field_name_chars" in result.rejected[0].error.message
