"""The journal's JSON form of engine records is the store's own (the contract's shape,
docs/contract.md)."""

from __future__ import annotations

import json

from memgraph_plugin.engine.model.frozen import FrozenDict
from memgraph_plugin.engine.model.json_records import edge_to_dict, node_to_dict
from memgraph_plugin.engine.model.models import Edge, Node
from memgraph_plugin.storage.journal.change_codec import (
    change_payload,
    changeset_to_change,
    node_to_json,
    thaw,
)


def _nodes() -> list[Node]:
    return [
        Node(id="n_1", type="event", title="plain", fields={"summary": "s", "n": 2}),
        Node(
            id="n_2",
            type="thread",
            title="all set",
            fields={"tags": ["a", "b"], "nested": {"deep": [{"x": 1.5, "y": None}]}},
            parent_id="n_1",
            children_ids=("n_3", "n_4"),
            seq_to=7,
            semantic_depth=2,
            semantic_rollup=True,
            archived=True,
            floor_range=(3, 9),
            superseded_by="n_9",
        ),
    ]


def test_node_to_json_is_the_stores_node_shape():
    for node in _nodes():
        assert node_to_json(node) == node_to_dict(node)
        assert json.dumps(node_to_json(node)) == json.dumps(node_to_dict(node))  # key order too


def test_thaw_makes_plain_json_data():
    frozen = FrozenDict({"a": (1, FrozenDict({"b": frozenset({"c"})})), 2: "two", "f": 0.5})
    assert thaw(frozen) == {"a": [1, {"b": ["c"]}], "2": "two", "f": 0.5}
    assert thaw(True) is True and thaw(None) is None and thaw("s") == "s"


def test_a_changesets_payload_holds_the_stores_shapes():
    class Changeset:
        nodes = tuple(_nodes())
        edges_added = (Edge("n_1", "n_2", "related", seq_to=4), Edge("n_2", "n_1", "part_of"))
        edges_removed = (("n_1", "old", "n_3"),)
        node_seq = 9
        seq_counter = 7

    change = changeset_to_change(Changeset, applied=5)
    raw = json.loads(change_payload(change))
    assert raw["nodes"] == [node_to_dict(n) for n in Changeset.nodes]
    assert raw["edgesAdded"] == [edge_to_dict(e) for e in Changeset.edges_added]
    assert raw["edgesRemoved"] == [["n_1", "old", "n_3"]]
    assert (raw["nodeSeq"], raw["seqCounter"], change.applied) == (9, 7, 5)
