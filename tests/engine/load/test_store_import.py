"""The quick import pass (`engine/load/store_import.py`): `store_is_clean` never passes
a store `store_problems` refuses, and `normalised_store` is exactly what the slow path (a `Store`
loaded and written back, then `anchor_store`) makes, for the usual shapes and the unusual ones."""

from __future__ import annotations

import contextlib
import copy
import random
from typing import Any

import pytest

from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.load.store_file import anchor_store, store_problems
from memgraph_plugin.engine.load.store_import import normalised_store, store_is_clean
from memgraph_plugin.engine.model.values import Limits


def _node(nid: str, **extra: Any) -> dict[str, Any]:
    node = {
        "id": nid,
        "type": "event",
        "level": "semantic",
        "title": f"title {nid}",
        "fields": {"summary": f"what happened at {nid}", "message": int(nid[2:])},
        "parentId": "",
        "childrenIds": [],
        "seqTo": int(nid[2:]) * 3,
        "semanticDepth": 0,
        "semanticRollup": False,
        "archived": False,
    }
    node.update(extra)
    return node


def _store() -> dict[str, Any]:
    """A clean store in the usual shape, with a rollup, a pinned, a superseded node."""
    nodes = {f"n_{i}": _node(f"n_{i}") for i in range(1, 9)}
    nodes["n_7"].update(childrenIds=["n_1", "n_2"], semanticRollup=True, semanticDepth=1)
    nodes["n_1"]["parentId"] = nodes["n_2"]["parentId"] = "n_7"
    nodes["n_3"]["pinned"] = True
    nodes["n_4"]["supersededBy"] = "n_5"
    nodes["n_5"]["fields"] = {"aliases": ["Wren", "艾琳"], "nested": {"a": [1, 2.5, None]}}
    edges = [
        {"from": "n_7", "to": "n_1", "type": "contains"},
        {"from": "n_7", "to": "n_2", "type": "contains", "seqTo": 4},
        {"from": "n_3", "to": "n_4", "type": "related", "seqTo": 12},
    ]
    return {"nodes": nodes, "edges": edges, "nodeSeq": 8, "seqCounter": 30}


def _slow(data: dict[str, Any], seq: int | None, messages: int | None) -> dict[str, Any]:
    normal = Store.from_dict(data).to_dict()
    return normal if seq is None else anchor_store(normal, seq, messages)


def _unusual(data: dict[str, Any]) -> dict[str, Any]:
    """The same graph in shapes the quick path hands to the engine's decoder."""
    out = copy.deepcopy(data)
    nodes = out["nodes"]
    nodes["n_1"] = {"id": "n_1", "type": "event", "fields": {"summary": "bare"}}  # defaults
    nodes["n_1"]["parentId"] = "n_7"
    nodes["n_2"]["level"] = ""
    nodes["n_2"]["title"] = None
    nodes["n_6"]["supersededBy"] = ""
    nodes["n_6"]["pinned"] = False
    nodes["n_8"] = {**nodes["n_8"], "floorRange": [1, 3]}
    out["edges"] += [
        {"from": "n_4", "to": "n_3", "type": "RELATED"},  # case, then a repeat of a symmetric
        {"from": "n_4", "to": "n_3", "type": "related", "seqTo": 2},
        {"source": "n_5", "target": "n_6", "type": "follows"},
    ]
    return out


@pytest.mark.parametrize("shape", ["usual", "unusual"])
@pytest.mark.parametrize(("seq", "messages"), [(None, None), (0, 0), (10, 4), (99, None), (25, 9)])
def test_the_normal_form_is_the_stores_own(shape, seq, messages):
    data = _store() if shape == "usual" else _unusual(_store())
    assert store_problems(data) == []
    before = copy.deepcopy(data)
    fast = normalised_store(data, seq, messages)
    assert fast == _slow(data, seq, messages)
    assert list(fast["nodes"]) == list(_slow(data, seq, messages)["nodes"])
    assert data == before  # the caller's store is not changed


def test_message_indices_move_down_to_the_destinations_messages():
    """Into a chat of 4 messages the newest imported index (8) comes in as 3; an index that
    would fall below 0 keeps its old value as ``source_message``, on both paths."""
    fast = normalised_store(_store(), 10, 4)
    assert fast == _slow(_store(), 10, 4)
    fields = {nid: node["fields"] for nid, node in fast["nodes"].items()}
    assert [fields[f"n_{i}"]["message"] for i in (6, 7, 8)] == [1, 2, 3]
    assert fields["n_4"]["source_message"] == 4 and "message" not in fields["n_4"]


def test_a_clean_store_passes_quickly_and_an_unusual_one_goes_the_long_way():
    assert store_is_clean(_store())
    unusual = _unusual(_store())
    assert not store_is_clean(unusual)  # a snake_case edge key: the full check decides
    assert store_problems(unusual) == []


def _mutations() -> list[tuple[str, Any]]:
    """(what, mutate(store)) pairs, each making a problem `store_problems` reports."""

    def node(nid: str, **values: Any) -> Any:
        return lambda d: d["nodes"][nid].update(values)

    def edge(i: int, **values: Any) -> Any:
        return lambda d: d["edges"][i].update(values)

    return [
        ("type not a string", node("n_1", type=5)),
        ("empty type", node("n_1", type="")),
        ("control character in type", node("n_1", type="ev\x01")),
        ("id unlike its key", node("n_1", id="n_99")),
        ("title not a string", node("n_1", title=3)),
        ("title too long", node("n_1", title="t" * 2001)),
        ("lone surrogate title", node("n_1", title="a\ud800")),
        ("fields not an object", node("n_1", fields=[1])),
        ("field too big", node("n_1", fields={"summary": "x" * 70_000})),
        ("field name too long", node("n_1", fields={"k" * 300: 1})),
        ("NaN field", node("n_1", fields={"v": float("nan")})),
        ("huge int field", node("n_1", fields={"v": 2**70})),
        ("node too big", node("n_1", fields={f"f{i}": "x" * 60_000 for i in range(20)})),
        ("negative seqTo", node("n_1", seqTo=-1)),
        ("bool depth", node("n_1", semanticDepth=True)),
        ("string flag", node("n_1", archived="no")),
        ("dangling parent", node("n_1", parentId="n_99")),
        ("own parent", node("n_3", parentId="n_3")),
        ("dangling child", node("n_7", childrenIds=["n_99"])),
        ("dangling supersededBy", node("n_4", supersededBy="n_99")),
        ("unknown node key", node("n_1", colour="red")),
        ("dangling edge end", edge(2, to="n_99")),
        ("self edge", edge(2, to="n_3")),
        ("edge type empty", edge(2, type="")),
        ("edge seqTo a string", edge(2, seqTo="4")),
        ("contains without the parent link", edge(2, type="contains")),
        ("unknown edge key", edge(2, weight=1)),
        ("negative seqCounter", lambda d: d.update(seqCounter=-1)),
        ("unknown top key", lambda d: d.update(extra=1)),
        ("edges not a list", lambda d: d.update(edges={})),
        ("no nodes", lambda d: d.pop("nodes")),
    ]


@pytest.mark.parametrize(("what", "mutate"), _mutations(), ids=[m[0] for m in _mutations()])
def test_a_store_with_a_problem_is_never_clean(what, mutate):
    data = _store()
    mutate(data)
    assert store_problems(data), what
    assert not store_is_clean(data), what


def test_random_stores_agree_with_the_full_check():
    """Random damage to random stores: the quick answer is never "clean" where the full check
    finds a problem, and a clean store normalises as the slow path does."""
    rng = random.Random(31)
    mutations = _mutations()
    for _ in range(200):
        data = _store()
        for _ in range(rng.randint(0, 2)):
            with contextlib.suppress(KeyError, AttributeError):  # a part already taken away
                mutations[rng.randrange(len(mutations))][1](data)
        problems = store_problems(data, Limits())
        if store_is_clean(data):
            assert problems == []
        if not problems:
            assert normalised_store(data, 5, 3) == _slow(data, 5, 3)
