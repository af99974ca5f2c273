"""An import is stored the way a long-lived chat is (issue 31): one `import` commit in the
journal, then a full snapshot at its version (node and edge columns, keyword rows, vectors), so
the next open reads columns, adopts the keyword postings and takes the vectors as stored. A
failed snapshot loses nothing: the chat loads from its journal (real LanceDB on disk)."""

from __future__ import annotations

import json
import logging

import numpy as np

from memgraph_plugin.embedding.embedder import NodeEmbedder
from memgraph_plugin.embedding.hashing import HashingProfile
from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA
from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.storage.format.graph_columns import DeltaBuilder, merge
from memgraph_plugin.storage.format.graph_columns import empty_edges as no_edges
from memgraph_plugin.storage.format.graph_columns import empty_nodes as no_nodes

from .helpers import edge, node

CHAT = "imp"


def _storage(tmp_path) -> LanceStorage:
    storage = LanceStorage(
        StorageSettings(
            uri=str(tmp_path / "db"),
            checkpoint_every=10_000,
            keyword_schema=json.dumps(DEFAULT_SCHEMA.to_list()),
        )
    )
    storage.embedder = NodeEmbedder(HashingProfile(), DEFAULT_SCHEMA)
    return storage


def _graph(n: int, *, word: str = "harbor") -> dict:
    nodes = {f"n_{i}": node(f"n_{i}", f"{word} event {i}", seq=i) for i in range(1, n + 1)}
    edges = [edge(f"n_{i}", f"n_{i + 1}") for i in range(1, n)]
    return {"nodes": nodes, "edges": edges, "nodeSeq": n, "seqCounter": n}


def _replayed(storage: LanceStorage) -> tuple[list, list]:
    """The chat's node and edge rows from its journal alone (no snapshot read)."""
    delta = DeltaBuilder()
    for entry in storage._journal(CHAT, 0):
        delta.apply(entry.change())
    nodes, edges = delta.tables()
    return _rows(merge(no_nodes(), nodes)), _rows(merge(no_edges(), edges))


def _rows(table) -> list:
    keep = [c for c in table.column_names if c not in ("pos", "moved", "removed")]
    return sorted(json.dumps(r, sort_keys=True) for r in table.select(keep).to_pylist())


def test_an_import_writes_a_snapshot_the_open_reads(tmp_path) -> None:
    storage = _storage(tmp_path)
    record = storage.import_sync(CHAT, _graph(40))
    head = storage._snaps.head(CHAT)
    assert head is not None and int(head["version"]) == record.version
    assert int(head["node_count"]) == 40 and int(head["edge_count"]) == 39
    assert head["vec_profile"] == "hashing"
    # one `import` commit in the history, as before
    assert [(r.kind, r.nodes_changed) for r in storage.history_sync(CHAT)] == [("import", 40)]

    state, vectors = storage.load_with_vectors_sync(CHAT, profile="hashing")
    assert state.checkpoint_version == record.version  # read from the snapshot's columns
    assert not state.changed_since_checkpoint  # no journal row replayed after it
    assert state.keywords is not None  # the keyword postings came with it
    assert vectors is not None and sorted(vectors.ids) == sorted(_graph(40)["nodes"])
    # the snapshot holds what the journal says
    loaded = (_rows(state.nodes), _rows(state.edges))
    assert loaded == _replayed(storage)


def test_a_reimport_keeps_the_stored_vectors_of_unchanged_nodes(tmp_path) -> None:
    storage = _storage(tmp_path)
    storage.import_sync(CHAT, _graph(30))
    _, before = storage.load_with_vectors_sync(CHAT, profile="hashing")
    assert before is not None
    again = _graph(30)
    again["nodes"]["n_5"] = node("n_5", "a lantern over the bridge", seq=5)
    again["nodes"]["n_31"] = node("n_31", "a new node", seq=31)
    record = storage.import_sync(CHAT, again)
    assert record.nodes_changed == 2  # the change holds only what differs
    state, after = storage.load_with_vectors_sync(CHAT, profile="hashing")
    assert state.checkpoint_version == record.version
    assert after is not None and sorted(after.ids) == sorted(again["nodes"])
    rows_before = {nid: i for i, nid in enumerate(before.ids)}
    rows_after = {nid: i for i, nid in enumerate(after.ids)}
    same = before.matrix[rows_before["n_7"]]
    assert np.array_equal(after.matrix[rows_after["n_7"]], same)
    assert not np.array_equal(after.matrix[rows_after["n_5"]], before.matrix[rows_before["n_5"]])


def test_a_failed_snapshot_leaves_the_import_committed_and_loadable(tmp_path, caplog) -> None:
    """The journal row is the commit point: a snapshot that cannot be written (here: its head
    refused) is logged, and the chat loads the imported graph from its journal."""
    storage = _storage(tmp_path)

    def refuse(*args, **kwargs):
        raise OSError("disk said no")

    storage.checkpoints.snaps.write = refuse
    with caplog.at_level(logging.WARNING):
        record = storage.import_sync(CHAT, _graph(12))
    assert "was not written" in caplog.text
    assert storage._snaps.head(CHAT) is None
    state = storage.load_sync(CHAT)
    assert state.version == record.version and state.nodes.num_rows == 12
    assert (_rows(state.nodes), _rows(state.edges)) == _replayed(storage)


def test_a_large_change_is_stored_in_rows_of_bounded_size(tmp_path, monkeypatch) -> None:
    """An import of 40 nodes and 39 edges with parts of 16 items: five rows of one version, one
    `import` in the history, and a load from the journal alone equal to the imported graph."""
    from memgraph_plugin.storage.journal import journal_parts

    monkeypatch.setattr(journal_parts, "PART_ITEMS", 16)
    storage = _storage(tmp_path)
    record = storage.import_sync(CHAT, _graph(40))
    rows = storage._commits.search().where(f"chat_id = '{CHAT}'").limit(None).to_arrow()
    assert rows.num_rows == 5 and set(rows["version"].to_pylist()) == {record.version}
    assert all(len(json.loads(p)["nodes"]) <= 16 for p in rows["payload"].to_pylist())
    (entry,) = storage.history_sync(CHAT)
    assert (entry.kind, entry.nodes_changed, entry.edges_added) == ("import", 40, 39)
    (version,) = storage._journal(CHAT, 0)
    assert version.vectors is not None
    assert sorted(version.vectors.ids) == sorted(_graph(40)["nodes"])
    state = storage.load_sync(CHAT)
    assert (_rows(state.nodes), _rows(state.edges)) == _replayed(storage)
    assert state.nodes.num_rows == 40 and state.edges.num_rows == 39
    # a later write is one row of the next version, read after the parts
    storage.import_sync(CHAT, _graph(41))
    assert storage.load_sync(CHAT).nodes.num_rows == 41
    assert [r.kind for r in storage.history_sync(CHAT)] == ["import", "import"]
