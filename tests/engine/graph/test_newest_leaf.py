"""The newest leaf event of a chat (what the turn pipeline checks before extracting a message,
and what the offline extractor links a new event to) is found from the pool's keys and the
node columns: after an import every event of the chat sits at one seq, and reading them all
made a record (and a view) of each on the first message."""

from __future__ import annotations

from typing import Any

import pytest

from memgraph_plugin import Node, Store
from memgraph_plugin.engine.load import lazy_nodes
from memgraph_plugin.extraction.graph import newest_event
from tests.engine.column_stores import made_records, opened

EVENTS = 600


def _node(nid: str, seq: int | None, **extra: Any) -> dict[str, Any]:
    return {
        "id": nid, "type": "event", "level": "semantic", "title": "", "fields": {},
        "parentId": "", "childrenIds": [], "seqTo": seq, "semanticDepth": 0,
        "semanticRollup": False, "archived": False, **extra,
    }  # fmt: skip


def _imported(messages: dict[int, int]) -> dict[str, Any]:
    """`EVENTS` events at seq 0 (as an import into an empty chat leaves them), those numbered in
    `messages` carrying that message index; and rollups at depth 1 and 0 with bigger indices,
    which are no leaves."""
    nodes = {}
    for k in range(1, EVENTS + 1):
        fields = {"summary": f"event {k}"}
        if k in messages:
            fields["message"] = messages[k]
        nodes[f"n_{k}"] = _node(f"n_{k}", 0, fields=fields)
    top = EVENTS + 1
    nodes[f"n_{top}"] = _node(
        f"n_{top}", 0, fields={"message": 999}, semanticDepth=1, semanticRollup=True
    )
    nodes[f"n_{top + 1}"] = _node(f"n_{top + 1}", 0, fields={"message": 998}, semanticRollup=True)
    return {"nodes": nodes, "edges": [], "nodeSeq": top + 1, "seqCounter": 0}


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lazy_nodes, "BLOCK", 4)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ({}, f"n_{EVENTS}"),  # no message index: the newest id (n_600 after n_99, by number)
        ({7: 3, 250: 12, 90: 12, 400: 5}, "n_250"),  # the highest index, then the newest id
    ],
)
def test_the_newest_leaf_of_one_seq_makes_only_its_own_record(
    small_blocks: None, messages: dict[int, int], expected: str
) -> None:
    data = _imported(messages)
    store = opened(data)
    newest = newest_event(store)
    assert newest is not None and newest.id == expected
    assert made_records(store) <= 4  # the answer's block of rows, none of the other events
    eager = newest_event(Store.from_dict(data))
    assert eager is not None and eager.id == expected


def test_records_read_or_written_since_the_open_count_with_their_values(
    small_blocks: None,
) -> None:
    store = opened(_imported({10: 4}))
    assert store.node("n_300") is not None  # made from the columns: its values are the same
    with store.transaction():
        store.put_node(Node(id="n_20", type="event", fields={"message": 8}, seq_to=0))
    newest = newest_event(store)
    assert newest is not None and newest.id == "n_20"
    with store.transaction():
        store.put_node(Node(id="n_700", type="event", fields={"summary": "later"}, seq_to=1))
    newest = newest_event(store)
    assert newest is not None and newest.id == "n_700"  # a later seq wins over any index
