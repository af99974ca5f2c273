"""A node state table with a few rows stored as raw JSON (a pinned node, a floor range) opens on
the columnar path: those rows decoded one by one and patched into the columns
(`raw_rows.patch_raw_rows`), every other node made on its first read; a table of mostly raw
rows opens the same way. Either way the store equals one loaded from the dict."""

from __future__ import annotations

from typing import Any

from memgraph_plugin import Store
from memgraph_plugin.engine.load.lazy_nodes import LazyNodes
from memgraph_plugin.engine.read.pinned import pinned_ids
from memgraph_plugin.storage.format.graph_columns import state_tables
from tests.story_graph import story_data

from .test_bulk_load import assert_same_indices, written_one_by_one


def _with_raw(data: dict[str, Any], changes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    for nid, extra in changes.items():
        data["nodes"][nid] = {**data["nodes"][nid], **extra}
    return data


def _load(data: dict[str, Any]) -> tuple[Store, Store]:
    reference = Store.from_dict(data)
    nodes, edges = state_tables(reference.to_dict())
    assert nodes["raw"].null_count < nodes.num_rows  # some rows are raw JSON
    loaded = Store.from_columns(nodes, edges, reference.node_seq, reference.seq_counter)
    return loaded, reference


def test_a_pinned_node_keeps_the_chat_on_the_columnar_path() -> None:
    data = _with_raw(story_data(), {"n_2": {"pinned": True}, "n_9": {"floorRange": [3, 5]}})
    loaded, reference = _load(data)
    node_map = loaded.internals()[0]
    assert isinstance(node_map, LazyNodes) and not node_map.complete
    assert dict.__len__(node_map) == 2  # the raw rows' records only
    assert pinned_ids(loaded) == pinned_ids(reference) == ("n_2",)
    bram = loaded.node("n_2")
    assert bram is not None and bram.pinned and bram == reference.node("n_2")
    assert loaded.node("n_9") == reference.node("n_9")
    assert loaded.name_index().known_as("character_sheet", "bramwell") == {"n_2"}
    assert loaded.to_dict() == reference.to_dict()
    assert_same_indices(_load(data)[0], written_one_by_one(data))


def test_a_table_of_mostly_raw_rows_opens_on_the_columnar_path_too() -> None:
    data = story_data()
    data = _with_raw(data, {nid: {"pinned": True} for nid in list(data["nodes"])[:8]})
    loaded, reference = _load(data)
    assert isinstance(loaded.internals()[0], LazyNodes)
    assert loaded.to_dict() == reference.to_dict()
    assert pinned_ids(loaded) == pinned_ids(reference)


def test_an_id_stored_twice_keeps_its_last_row_at_its_first_place() -> None:
    """What a dict filled row by row holds: the last row's values, in the first row's place."""
    import pyarrow as pa

    data = story_data()
    reference = Store.from_dict(data)
    nodes, edges = state_tables(reference.to_dict())
    first = nodes.slice(0, 1)
    renamed = first.set_column(
        first.column_names.index("title"), "title", pa.array(["Renamed"], first["title"].type)
    )
    twice = pa.concat_tables([nodes, renamed])
    loaded = Store.from_columns(twice, edges, reference.node_seq, reference.seq_counter)
    nid = first["id"][0].as_py()
    assert loaded.node(nid).title == "Renamed"
    assert list(loaded.to_dict()["nodes"]) == list(reference.to_dict()["nodes"])
    expected = reference.to_dict()
    expected["nodes"][nid]["title"] = "Renamed"
    assert loaded.to_dict() == expected
