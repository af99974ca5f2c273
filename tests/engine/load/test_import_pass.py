"""The one-pass check and normal form of an import (`engine/load/import_pass.py`):
`checked_normal_store` answers only for stores `store_problems` passes, and what it makes (and
anchors) is exactly the slow path's: a `Store` loaded and written back, then `anchor_store`."""

from __future__ import annotations

import contextlib
import copy
import random
from typing import Any

import pytest

from memgraph_plugin.engine.load.import_pass import checked_normal_store
from memgraph_plugin.engine.load.store_file import (
    StoreFileError,
    read_normal_store,
    store_problems,
)
from memgraph_plugin.engine.load.store_import import (
    NormalStore,
    anchored_store,
    normalised_store,
)
from memgraph_plugin.engine.model.values import Limits

from .test_store_import import _mutations, _node, _slow, _store


def _odd_nodes(data: dict[str, Any]) -> dict[str, Any]:
    """The same graph with nodes the quick check passes but not in the normal form (defaults
    left out, an empty level, a None title, an empty supersededBy, pinned False, an edge type
    in capitals and a repeated symmetric edge)."""
    out = copy.deepcopy(data)
    nodes = out["nodes"]
    nodes["n_1"] = {"id": "n_1", "type": "event", "fields": {"summary": "bare"}, "parentId": "n_7"}
    nodes["n_2"]["level"] = ""
    nodes["n_2"]["title"] = None
    nodes["n_6"]["supersededBy"] = ""
    nodes["n_6"]["pinned"] = False
    out["edges"] += [
        {"from": "n_4", "to": "n_3", "type": "RELATED"},
        {"from": "n_4", "to": "n_3", "type": "related", "seqTo": 2},
    ]
    return out


@pytest.mark.parametrize("shape", ["usual", "odd nodes", "no pinned"])
@pytest.mark.parametrize(("seq", "messages"), [(0, 0), (10, 4), (99, None), (25, 9), (3, 2)])
def test_one_pass_makes_the_stores_own_normal_form(shape, seq, messages):
    data = _store() if shape != "odd nodes" else _odd_nodes(_store())
    if shape == "no pinned":
        del data["nodes"]["n_3"]["pinned"]
    assert store_problems(data) == []
    before = copy.deepcopy(data)
    store = checked_normal_store(data)
    assert type(store) is NormalStore
    assert store == normalised_store(data)
    anchored = anchored_store(store, seq, messages)
    assert anchored == _slow(data, seq, messages)
    assert list(anchored["nodes"]) == list(_slow(data, seq, messages)["nodes"])
    assert data == before  # the caller's store is not changed
    # plain: every node has exactly node_to_dict's plain keys (a pinned node has one more)
    assert store.plain is anchored.plain is (shape == "no pinned")


@pytest.mark.parametrize(("what", "mutate"), _mutations(), ids=[m[0] for m in _mutations()])
def test_a_store_with_a_problem_gets_no_quick_answer(what, mutate):
    data = _store()
    mutate(data)
    assert store_problems(data), what
    assert checked_normal_store(data) is None, what


def test_random_stores_agree_with_the_full_check():
    """Random damage to random stores: a quick answer only where the full check finds no
    problem, and then the slow path's normal form."""
    rng = random.Random(3131)
    mutations = _mutations()
    answered = 0
    for _ in range(300):
        data = _odd_nodes(_store()) if rng.random() < 0.5 else _store()
        for _ in range(rng.randint(0, 2)):
            with contextlib.suppress(KeyError, AttributeError):
                mutations[rng.randrange(len(mutations))][1](data)
        problems = store_problems(data, Limits())
        store = checked_normal_store(data, Limits())
        if store is not None:
            answered += 1
            assert problems == []
            assert anchored_store(store, 5, 3) == _slow(data, 5, 3)
    assert answered > 30  # the quick path did answer for the undamaged ones


def test_a_file_read_in_one_pass_or_refused_naming_field_and_node():
    import json

    store = _store()
    assert read_normal_store(json.dumps(store).encode(), "f.json") == normalised_store(store)
    store["nodes"]["n_4"]["seqTo"] = -2
    with pytest.raises(StoreFileError) as err:
        read_normal_store(json.dumps(store).encode(), "f.json")
    assert "n_4" in str(err.value) and "seqTo" in str(err.value)
    unusual = {**_store(), "edges": [{"source": "n_5", "target": "n_6", "type": "follows"}]}
    read = read_normal_store(json.dumps(unusual).encode(), "f.json")  # the long way, same form
    assert read == normalised_store(unusual)


def test_a_large_message_index_is_anchored_from_the_pass():
    data = _store()
    data["nodes"]["n_9"] = _node("n_9")
    data["nodes"]["n_9"]["fields"]["message"] = 40
    store = checked_normal_store(data)
    assert store is not None and store.top_message == 40
    assert anchored_store(store, 30, 10) == _slow(data, 30, 10)


def test_a_store_without_message_indices_is_anchored_without_looking_again(monkeypatch):
    """The pass notes that no node has a message index (-1), so anchoring it to a chat's
    message count need not read every node's fields again; the result is the slow path's."""
    from memgraph_plugin.engine.load import store_import

    data = _store()
    for node in data["nodes"].values():
        node["fields"].pop("message", None)
    store = checked_normal_store(data)
    assert store is not None and store.top_message == -1
    expected = _slow(data, 30, 10)

    def refuse(_node: Any) -> Any:
        raise AssertionError("anchoring read every node's message index again")

    monkeypatch.setattr(store_import, "_message_index", refuse)
    assert anchored_store(store, 30, 10) == expected


def _random_edges(rng: random.Random, ids: list[str]) -> list[dict[str, Any]]:
    types = ["related", "allied_with", "family_of", "mentions", "x"]
    edges = []
    for _ in range(rng.randint(0, 12)):
        src = rng.choice(ids)
        dst = src if rng.random() < 0.01 else rng.choice([i for i in ids if i != src])
        edge: dict[str, Any] = {"from": src, "to": dst}
        edge["type"] = "Related" if rng.random() < 0.01 else rng.choice(types)
        roll = rng.random()
        if roll < 0.3:
            edge["seqTo"] = rng.randint(0, 9)
        elif roll < 0.31:
            edge["seqTo"] = rng.choice([None, -1, True, "3", 2**64, 1.0])
        if rng.random() < 0.01:  # not text: bytes (pyarrow would read them as text), a number
            edge[rng.choice(["from", "to", "type"])] = rng.choice([src.encode(), 7, None])
        if rng.random() < 0.005:
            edge[rng.choice(["source", "to"])] = "n_1"
            edge.pop("from" if "source" in edge else "to", None)
        edges.append(edge)
    if edges and rng.random() < 0.3:
        edges.append(dict(rng.choice(edges)))  # a repeat
    return edges


def _columns_of(edges: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The edge columns `_edge_columns` hands storage, from the edge dicts (the plain way)."""
    return {
        "src": [e["from"] for e in edges],
        "type": [e["type"] for e in edges],
        "dst": [e["to"] for e in edges],
        "seq_to": [e.get("seqTo") for e in edges],
    }


def test_edges_checked_by_columns_are_the_edge_by_edge_ones():
    """`_edge_columns` (pyarrow) answers only where the edge-by-edge check passes, with the
    same edges: symmetric ones turned into id order, repeats dropped (the first kept)."""
    from memgraph_plugin.engine.load import import_pass

    rng = random.Random(77)
    ids = [f"n_{i}" for i in range(1, 9)]
    answered = turned = 0
    for _ in range(400):
        edges = _random_edges(rng, ids)
        by_columns = import_pass._edge_columns(edges, dict.fromkeys(ids), {})
        one_by_one = import_pass._checked_edges(edges, dict.fromkeys(ids), {})
        if by_columns is import_pass._UNSURE:
            continue
        answered += 1
        kept, columns = by_columns
        assert kept == one_by_one, edges
        assert _columns_of(kept) == columns.to_pydict(), edges
        turned += any(e["from"] > e["to"] for e in edges if e["type"] == "allied_with")
    assert answered > 50 and turned > 10


def test_contains_edges_checked_by_the_node_checks_positions_as_by_the_parent_map():
    """`_edge_columns` given the node check's id array and parent positions (the usual file's
    path) answers as it does from the parent map, and as the edge-by-edge check: a contains
    edge must run from its child's parent to the child."""
    import numpy as np
    import pyarrow as pa

    from memgraph_plugin.engine.load import import_pass

    rng = random.Random(31)
    ids = [f"n_{i}" for i in range(1, 9)]
    answered = refused = 0
    for _ in range(300):
        parents = {c: rng.choice(ids) for c in rng.sample(ids, rng.randint(0, 6))}
        parents = {c: p for c, p in parents.items() if c != p}
        edges = _random_edges(rng, ids)
        for _ in range(rng.randint(0, 4)):  # contains edges: most along a parent link
            child = rng.choice(ids)
            src = parents.get(child, rng.choice(ids)) if rng.random() < 0.8 else rng.choice(ids)
            edges.insert(rng.randint(0, len(edges)), {"from": src, "to": child, "type": "contains"})
        known = pa.array(ids, pa.string())
        parent_at = np.array([ids.index(parents[n]) if n in parents else -1 for n in ids])
        by_positions = import_pass._edge_columns(
            edges, dict.fromkeys(ids), parents, known, parent_at
        )
        by_map = import_pass._edge_columns(edges, dict.fromkeys(ids), parents)
        one_by_one = import_pass._checked_edges(edges, dict.fromkeys(ids), parents)
        if by_map is import_pass._UNSURE:
            assert by_positions is import_pass._UNSURE, edges
            refused += 1
            continue
        answered += 1
        assert by_positions is not import_pass._UNSURE, edges
        assert by_positions[0] == by_map[0] == one_by_one, edges
        assert by_positions[1].equals(by_map[1])
    assert answered > 30 and refused > 30


def test_an_edge_end_in_bytes_is_left_to_the_full_check():
    data = _store()
    data["edges"].append({"from": b"n_5", "to": "n_6", "type": "related"})
    assert store_problems(data)
    assert checked_normal_store(data) is None


def test_a_symmetric_edge_turned_and_repeated_is_normalised_by_columns():
    data = _store()
    data["nodes"]["n_3"].pop("pinned")
    data["edges"] += [
        {"from": "n_6", "to": "n_5", "type": "allied_with", "seqTo": 3},
        {"from": "n_5", "to": "n_6", "type": "allied_with"},  # the same edge, once turned
    ]
    store = checked_normal_store(data)
    assert store is not None and store == normalised_store(data)
    assert store["edges"][-1] == {"from": "n_5", "to": "n_6", "type": "allied_with", "seqTo": 3}
    assert data["edges"][-2]["from"] == "n_6"  # the caller's edge is not changed


def test_nodes_checked_by_columns_are_the_node_by_node_ones():
    """`import_nodes.plain_nodes` (all nodes at once) answers only where the node-by-node loop
    passes every node as it is, with the loop's parents, float test, message and id maxima."""
    from memgraph_plugin.engine.load import import_pass
    from memgraph_plugin.engine.load.import_nodes import plain_nodes

    rng = random.Random(2024)
    mutations = _mutations()
    answered = refused = 0
    for i in range(400):
        data = _store()
        del data["nodes"]["n_3"]["pinned"]
        if i % 3 == 0:
            data["nodes"]["n_6"]["fields"] = {"aliases": ["Wren", "艾琳"], "n": 2}
        if i % 5 == 0:
            data["nodes"]["n_12"] = _node("n_12", title="艾琳的花园")
        for _ in range(rng.randint(0, 2)):
            with contextlib.suppress(KeyError, AttributeError):
                mutations[rng.randrange(len(mutations))][1](data)
        nodes = data.get("nodes")
        if type(nodes) is not dict:
            continue
        quick = plain_nodes(nodes, Limits())
        loop = import_pass._node_loop(nodes, Limits())
        if quick is None:
            refused += 1
            continue
        answered += 1
        assert loop is not None and loop[2]  # the loop passes them all, plain
        assert (quick.nodes, quick.parents, quick.float_free) == (loop[0], loop[1], loop[3])
        assert (quick.top_message, quick.top_id) == (loop[4], loop[5])
        assert list(quick.nodes) == list(loop[0])
    assert answered > 100 and refused > 100


def test_the_usual_file_takes_the_column_paths_only(monkeypatch):
    """An export-shaped store (every node plain, edges normal) is checked column by column:
    neither the node-by-node loop nor the edge-by-edge check runs, and the result is still the
    slow path's."""
    from memgraph_plugin.engine.load import import_pass

    data = _store()
    del data["nodes"]["n_3"]["pinned"]

    def refuse(*_args: Any) -> Any:
        raise AssertionError("the slow path ran")

    monkeypatch.setattr(import_pass, "_node_loop", refuse)
    monkeypatch.setattr(import_pass, "_checked_edges", refuse)
    store = checked_normal_store(data)
    assert store is not None and store.plain
    assert store.node_columns is not None and store.edge_columns is not None
    assert anchored_store(store, 5, 3) == _slow(data, 5, 3)
