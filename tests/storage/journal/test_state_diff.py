"""The change between two states found column by column (`storage/journal/state_diff.py`) is
`diff_states`'s of their dicts: for every pair of versions of a history (snapshot, edits,
archives, unlinks, a rollback), from an empty chat, and where the stored texts differ but the
values do not."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from memgraph_plugin.storage.format.graph_columns import nodes_table, state_tables
from memgraph_plugin.storage.journal.change_codec import diff_states
from memgraph_plugin.storage.journal.state_diff import state_diff
from memgraph_plugin.storage.persistence import ChatState

from ..test_restored_values import CHAT, _written


def _record(change: Any) -> tuple[Any, ...]:
    return (
        change.nodes,
        change.nodes_removed,
        sorted(map(repr, change.edges_added)),
        sorted(change.edges_removed),
        change.node_seq,
        change.seq_counter,
        change.applied,
        change.kind,
    )


async def test_every_pair_of_versions_gives_diff_states_change(tmp_path):
    host, storage = await _written(tmp_path)
    latest = storage.latest_version_sync(CHAT)
    states = [storage.state_at_sync(CHAT, version=v) for v in range(latest + 1)]
    for current in (states[-1], states[latest // 2]):
        for target in states:
            ours = state_diff(current, target, kind="rollback")
            theirs = diff_states(current.data, target.data, kind="rollback")
            assert _record(ours) == _record(theirs), (current.version, target.version)
    assert state_diff(states[-1], states[-1], kind="rollback").applied == 0
    await host.stop()


def _state(nodes: pa.Table, edges: pa.Table, version: int = 1) -> ChatState:
    return ChatState(chat_id=CHAT, version=version, nodes=nodes, edges=edges)


def test_texts_that_differ_with_equal_values_are_no_change():
    """A field's text written by two serializers (orjson for an import's rows, `json` for a
    journal delta's) may differ where the value does not: no change then."""
    node = {
        "id": "n_1", "type": "event", "level": "semantic", "title": "t",
        "fields": {"summary": "s", "weight": 1e16, "z": 1, "a": 2},
        "parentId": "", "childrenIds": [], "seqTo": None, "semanticDepth": 0,
        "semanticRollup": False, "archived": False,
    }  # fmt: skip
    data = {"nodes": {"n_1": node}, "edges": [], "nodeSeq": 1, "seqCounter": 0}
    by_import, edges = state_tables(data)
    reordered = {**node, "fields": {"a": 2, "z": 1, "summary": "s", "weight": 1e16}}
    by_delta = nodes_table([(reordered, "n_1", False)]).cast(by_import.schema)
    assert by_import["fields"].to_pylist() != by_delta["fields"].to_pylist()
    change = state_diff(_state(by_import, edges), _state(by_delta, edges), kind="rollback")
    assert change.applied == 0 and change.nodes == ()
    changed = {**node, "fields": {**node["fields"], "summary": "other"}}
    other = nodes_table([(changed, "n_1", False)]).cast(by_import.schema)
    change = state_diff(_state(by_import, edges), _state(other, edges), kind="rollback")
    assert change.nodes == (changed,) and change.applied == 1
