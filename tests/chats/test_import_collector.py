"""An import holds the cyclic collector off for its check and its storage's work as one pause
(`ChatHistory.import_graph`), and the store made for the import is emptied before it
ends: no collection walks the store's 100k anchored node copies (a pause ended after the check
had them walked: 60-140 ms)."""

from __future__ import annotations

import copy
import gc
import weakref
from typing import Any

import pytest

from host import Host
from memgraph_plugin import MemoryGraphError
from memgraph_plugin.engine.load import store_import
from memgraph_plugin.engine.load.import_pass import checked_normal_store


def _store(n: int) -> dict[str, Any]:
    """A plain store whose every node has a ``seqTo`` below its ``seqCounter``: anchored to a
    chat without messages, each node is copied (its seqTo moved back)."""
    nodes = {
        f"n_{i}": {
            "id": f"n_{i}",
            "type": "event",
            "level": "semantic",
            "title": f"event {i}",
            "fields": {"summary": f"the harbor storm, part {i}"},
            "parentId": "",
            "childrenIds": [],
            "seqTo": i,
            "semanticDepth": 0,
            "semanticRollup": False,
            "archived": False,
        }
        for i in range(1, n + 1)
    }
    edges = [{"from": f"n_{i}", "to": f"n_{i + 1}", "type": "related"} for i in range(1, n)]
    return {"nodes": nodes, "edges": edges, "nodeSeq": n, "seqCounter": n + 5}


async def test_one_pause_spans_the_check_and_the_storage_and_ends_after_the_store_is_freed(
    tmp_path, monkeypatch
) -> None:
    host = Host(data_dir=tmp_path / "d", settings={}, entry_points=False)
    await host.start()
    api = host.registry.get("memory-graph")
    made: list[weakref.ref[Any]] = []
    anchored = store_import.anchored_store

    def watched(*args: Any, **kwargs: Any) -> Any:
        store = anchored(*args, **kwargs)
        made.append(weakref.ref(store))
        return store

    monkeypatch.setattr(store_import, "anchored_store", watched)
    seen: list[bool] = []  # per collection during the import: the store still holds the graph
    # (its nodes and edges, or the columns the check pulled out of them)

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and made:
            store = made[-1]()
            columns = store is not None and (store.node_columns, store.edge_columns) != (None, None)
            seen.append(store is not None and (bool(store) or columns))

    gc.callbacks.append(watch)
    try:
        commit = await api.import_graph("c", _store(2000))
    finally:
        gc.callbacks.remove(watch)
    assert commit.kind == "import" and len(commit.node_ids) == 2000
    assert gc.isenabled() and made
    # the store was made and handed to storage with the collector off, and emptied before the
    # pause ended (its objects join the old generation unwalked then: `gc_paused`); no
    # collection during the import found the graph held
    assert not any(seen), seen

    # a caller's checked store (the CLI's `NormalStore`) is anchored into a store of ours:
    # emptying that one leaves the caller's as it was
    checked = checked_normal_store(_store(50))
    assert checked is not None
    before = copy.deepcopy(dict(checked))
    await api.import_graph("d", checked)
    assert dict(checked) == before

    with pytest.raises(MemoryGraphError) as info:  # a failed check ends the pause too
        await api.import_graph("c", {"nodes": {"n_1": {"id": "n_2", "type": "event"}}})
    assert info.value.code == "BAD_ARGS" and gc.isenabled()
    await host.stop()
