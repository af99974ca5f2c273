"""What a rollback restores, read for what it undoes only (`storage/journal/restored_values.py`):
for every target, each node and edge the undone commits touched as the whole state at the target
has it, every node and edge that differs between the target and the newest among them, and the
target's counters; the same with the filtered read and with the whole-columns read."""

from __future__ import annotations

from typing import Any

import pytest

from host import Host
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.storage.format.json_shapes import edge_key
from memgraph_plugin.storage.journal import restored_values as rv

CHAT = "rv"


def _batches() -> list[list[dict[str, Any]]]:
    """Turns that create, edit, delete (archive), link and unlink; after the snapshot, turns
    that change what it holds."""
    out: list[list[dict[str, Any]]] = []
    for t in range(1, 9):
        ops: list[dict[str, Any]] = [
            {"op": "create", "type": "event", "ref": "e", "title": f"turn {t}",
             "fields": {"summary": f"Ilya meets Juno at the gate, turn {t}."}},
            {"op": "upsert", "type": "character_sheet", "ref": "c", "title": "Ilya Renn",
             "fields": {"aliases": ["Ilya"], "status": f"tired after turn {t}"}},
            {"op": "link", "source": "c", "target": "e", "relation": "involved_in"},
        ]  # fmt: skip
        if t >= 5:  # nodes and edges the snapshot (at turn 4) holds, changed after it
            ops.append(
                {"op": "edit", "node_id": f"n_{t - 4}", "set_fields": {"summary": f"seen {t}"}}
            )
            ops.append(
                {"op": "link_delete", "source_node_id": "n_2", "target_node_id": f"n_{t - 3}",
                 "relation": "involved_in"}
            )  # fmt: skip
        if t % 3 == 0:
            ops.append({"op": "delete", "node_id": f"n_{t}"})
        if t % 4 == 0:
            ops.append(
                {"op": "link_delete", "source_node_id": "n_2", "target_node_id": "n_1",
                 "relation": "involved_in"}
            )  # fmt: skip
        out.append(ops)
    return out


def _edges(data: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {edge_key(e): e for e in data["edges"]}


async def _written(tmp_path: Any) -> tuple[Host, Any]:
    host = Host(
        data_dir=tmp_path / "d", settings={"embedding_profile": "hashing"}, entry_points=False
    )
    await host.start()
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context(CHAT))
    storage = memory_graph_for(host).persistence.storage
    for seq, ops in enumerate(_batches(), start=1):
        await session.apply_extraction_batch(ops=ops, max_seq=seq)
        if seq == 4:
            assert storage.snapshot_sync(CHAT)  # a snapshot between the targets
        if seq == 6:
            await api.rollback(CHAT, seq=5)  # a rollback commit among the undone ones
            session = await api.open_session(host.get_context(CHAT))
    return host, storage


@pytest.mark.parametrize("picked_read", [rv.PICKED_READ, 0])
async def test_each_target_restores_what_the_whole_state_has(tmp_path, monkeypatch, picked_read):
    monkeypatch.setattr(rv, "PICKED_READ", picked_read)
    host, storage = await _written(tmp_path)
    latest = storage.latest_version_sync(CHAT)
    newest = storage.load_sync(CHAT).data
    for target in range(latest):
        values = rv.restored_values(storage, CHAT, target, latest)
        assert values is not None
        whole = storage.state_at_sync(CHAT, version=target).data
        for nid, node in values.nodes.items():
            assert node == whole["nodes"].get(nid), (target, nid)
        edges = _edges(whole)
        for key, edge in values.edges.items():
            assert edge == edges.get(key), (target, key)
        # every difference between the target and the newest state is among them
        changed = {
            nid
            for nid in {*whole["nodes"], *newest["nodes"]}
            if whole["nodes"].get(nid) != newest["nodes"].get(nid)
        }
        assert changed <= values.nodes.keys(), target
        now = _edges(newest)
        assert {k for k in {*edges, *now} if edges.get(k) != now.get(k)} <= values.edges.keys()
        assert (values.node_seq, values.seq_counter) == (whole["nodeSeq"], whole["seqCounter"])
    await host.stop()


async def test_an_import_among_the_undone_commits_answers_none(tmp_path):
    host, storage = await _written(tmp_path)
    before = storage.latest_version_sync(CHAT)
    data = storage.load_sync(CHAT).data
    await memory_graph_for(host).import_graph(CHAT, data)
    latest = storage.latest_version_sync(CHAT)
    assert rv.restored_values(storage, CHAT, before - 1, latest) is None
    assert rv.restored_values(storage, CHAT, before, latest) is None
    await host.stop()


async def test_more_changes_than_the_limit_answer_none(tmp_path, monkeypatch):
    host, storage = await _written(tmp_path)
    latest = storage.latest_version_sync(CHAT)
    assert rv.restored_values(storage, CHAT, 0, latest) is not None
    monkeypatch.setattr(rv, "MAX_RESTORED", storage.history_sync(CHAT)[-1].applied)
    assert rv.restored_values(storage, CHAT, 0, latest) is None
    assert rv.restored_values(storage, CHAT, latest - 1, latest) is not None  # the last turn
    await host.stop()
