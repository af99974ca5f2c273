"""An import is stored the way a long-lived chat is, and once: a full snapshot at its
version (node and edge columns, keyword rows, vectors), then one small `import` row in the
journal pointing at it (the commit point), then the snapshot's head row. The next open reads
columns, adopts the keyword postings and takes the vectors as stored. A failure before the
journal row stores nothing; one after it (the head row) loses nothing: the journal row names
the snapshot. History, rollback and export across an import keep working after its snapshot's
head was pruned (real LanceDB on disk)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from memgraph_plugin.embedding.embedder import NodeEmbedder
from memgraph_plugin.embedding.hashing import HashingProfile
from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA
from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.storage.format.graph_columns import DeltaBuilder, merge
from memgraph_plugin.storage.format.graph_columns import empty_edges as no_edges
from memgraph_plugin.storage.format.graph_columns import empty_nodes as no_nodes
from memgraph_plugin.storage.journal.change_codec import diff_states, empty_state

from ..helpers import change, edge, node

CHAT = "imp"


def _storage(tmp_path, **settings) -> LanceStorage:
    storage = LanceStorage(
        StorageSettings(
            uri=str(tmp_path / "db"),
            checkpoint_every=settings.pop("checkpoint_every", 10_000),
            keyword_schema=json.dumps(DEFAULT_SCHEMA.to_list()),
            **settings,
        )
    )
    storage.embedder = NodeEmbedder(HashingProfile(), DEFAULT_SCHEMA)
    return storage


def _graph(n: int, *, word: str = "harbor") -> dict:
    nodes = {f"n_{i}": node(f"n_{i}", f"{word} event {i}", seq=i) for i in range(1, n + 1)}
    edges = [edge(f"n_{i}", f"n_{i + 1}") for i in range(1, n)]
    return {"nodes": nodes, "edges": edges, "nodeSeq": n, "seqCounter": n}


def _expected(data: dict) -> tuple[list, list]:
    """The node and edge rows of a store dict, as a replay of it from an empty chat makes them."""
    delta = DeltaBuilder()
    delta.apply(diff_states(empty_state(), data, kind="import"))
    nodes, edges = delta.tables()
    return _rows(merge(no_nodes(), nodes)), _rows(merge(no_edges(), edges))


def _journal_rows(storage: LanceStorage) -> list[dict]:
    return storage._commits.search().where(f"chat_id = '{CHAT}'").limit(None).to_arrow().to_pylist()


def _drop_heads(storage: LanceStorage) -> None:
    """What a crash right after the journal row leaves: the snapshot's rows, no head row."""
    storage._snaps.heads.delete(f"chat_id = '{CHAT}'")


def _rows(table) -> list:
    keep = [c for c in table.column_names if c not in ("pos", "moved", "removed")]
    return sorted(json.dumps(r, sort_keys=True) for r in table.select(keep).to_pylist())


def test_an_import_is_one_snapshot_its_journal_row_points_at(tmp_path) -> None:
    storage = _storage(tmp_path)
    record = storage.import_sync(CHAT, _graph(40))
    head = storage._snaps.head(CHAT)
    assert head is not None and int(head["version"]) == record.version
    assert int(head["node_count"]) == 40 and int(head["edge_count"]) == 39
    assert head["vec_profile"] == "hashing"
    # one `import` commit in the history, as before, with the change's sizes
    assert [(r.kind, r.nodes_changed, r.edges_added) for r in storage.history_sync(CHAT)] == [
        ("import", 40, 39)
    ]
    assert record.nodes_changed == 40 and len(record.node_ids) == 40  # what the commit fires
    # and history read back names them too (the explorer's per-node history matches on them)
    (back,) = _storage(tmp_path).history_sync(CHAT)
    assert sorted(back.node_ids) == sorted(_graph(40)["nodes"])
    # the journal holds one small row naming the snapshot's row sets: no nodes, no vectors
    (row,) = _journal_rows(storage)
    payload = json.loads(row["payload"])
    assert "nodes" not in payload and payload["snapshot"]["chain"] == head["chain"]
    assert row["vectors"] is None and len(row["payload"]) < 1000

    state, vectors = storage.load_with_vectors_sync(CHAT, profile="hashing")
    assert state.checkpoint_version == record.version  # read from the snapshot's columns
    assert not state.changed_since_checkpoint  # no journal row replayed after it
    assert state.keywords is not None  # the keyword postings came with it
    assert vectors is not None and sorted(vectors.ids) == sorted(_graph(40)["nodes"])
    assert (_rows(state.nodes), _rows(state.edges)) == _expected(_graph(40))


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


def test_a_reimport_that_changes_nothing_keeps_every_stored_vector(tmp_path) -> None:
    """The same graph again: the change has no node (so no fresh vector), and the new snapshot
    still holds every node's stored vector (none left for the open to embed)."""
    storage = _storage(tmp_path)
    storage.import_sync(CHAT, _graph(20))
    _, before = storage.load_with_vectors_sync(CHAT, profile="hashing")
    record = storage.import_sync(CHAT, _graph(20))
    assert record.nodes_changed == 0
    state, after = storage.load_with_vectors_sync(CHAT, profile="hashing")
    assert state.checkpoint_version == record.version
    assert before is not None and after is not None
    assert sorted(after.ids) == sorted(before.ids) == sorted(_graph(20)["nodes"])
    rows_before = {nid: i for i, nid in enumerate(before.ids)}
    for i, nid in enumerate(after.ids):
        assert np.array_equal(after.matrix[i], before.matrix[rows_before[nid]])


def test_a_failed_snapshot_write_stores_nothing(tmp_path) -> None:
    """The snapshot's rows come before the journal row: rows that cannot be written fail the
    import, and the chat stays as it was (no commit, the old graph loads)."""
    storage = _storage(tmp_path)
    storage.import_sync(CHAT, _graph(5, word="old"))
    before = storage.load_sync(CHAT)

    def refuse(*args, **kwargs):
        raise OSError("disk said no")

    storage.checkpoints.snaps.write_rows = refuse
    with pytest.raises(OSError):
        storage.import_sync(CHAT, _graph(12))
    assert [r.kind for r in storage.history_sync(CHAT)] == ["import"]
    after = storage.load_sync(CHAT)
    assert after.version == before.version and after.data == before.data


@pytest.mark.parametrize("refused", ["nodes", "vectors", "keywords"])
def test_a_failed_write_of_any_part_of_the_rows_stores_nothing(tmp_path, refused) -> None:
    """A snapshot's node and edge rows, vector rows and keyword rows are written side by side
    (the first two on threads of their own): a failure of any fails the import, nothing
    stored."""
    storage = _storage(tmp_path)
    storage.import_sync(CHAT, _graph(5, word="old"))
    before = storage.load_sync(CHAT)
    snaps = storage.checkpoints.snaps
    write = snaps.write_rows
    tried = []

    def partly(chat_id, rowset, **parts):
        part = (
            "nodes"
            if parts["nodes"].num_rows
            else "vectors"
            if parts["vectors"] is not None
            else "keywords"
        )
        tried.append(part)
        if part == refused:
            raise OSError(f"disk said no to the {part}")
        return write(chat_id, rowset, **parts)

    snaps.write_rows = partly
    with pytest.raises(OSError, match=refused):
        storage.import_sync(CHAT, _graph(12))
    assert refused in tried
    assert [r.kind for r in storage.history_sync(CHAT)] == ["import"]
    after = storage.load_sync(CHAT)
    assert after.version == before.version and after.data == before.data


def test_a_missing_head_row_is_read_through_the_journal_row(tmp_path, caplog) -> None:
    """A head row that could not be written (or a crash before it): the import is committed
    and loads, with its keyword rows and vectors, from the snapshot its journal row names; the
    next maintenance pass writes the head row."""
    storage = _storage(tmp_path)
    graph = _graph(12)

    def refuse(*args, **kwargs):
        raise OSError("disk said no")

    write_head = storage.checkpoints.snaps.write_head
    storage.checkpoints.snaps.write_head = refuse
    with caplog.at_level(logging.WARNING):
        record = storage.import_sync(CHAT, graph)
    assert "was not written" in caplog.text
    storage.checkpoints.snaps.write_head = write_head
    assert storage._snaps.head(CHAT) is None
    state, vectors = storage.load_with_vectors_sync(CHAT, profile="hashing")
    assert state.version == record.version and state.checkpoint_version == record.version
    assert (_rows(state.nodes), _rows(state.edges)) == _expected(graph)
    assert state.keywords is not None
    assert vectors is not None and sorted(vectors.ids) == sorted(graph["nodes"])
    # a write after it replays onto that snapshot; maintenance then writes the head row
    storage.commit_sync(CHAT, change(node("n_99", "later"), node_seq=99, seq=99), base_version=1)
    assert storage.snapshot_sync(CHAT) == 2
    heads = storage._snaps.head_rows(CHAT)
    assert sorted(int(h["version"]) for h in heads) == [1, 2]
    assert storage.load_sync(CHAT).nodes.num_rows == 13


def test_history_rollback_and_export_across_an_import_after_its_head_was_pruned(
    tmp_path,
) -> None:
    """Snapshots after the import prune its head row; the row sets its journal row points at
    stay, so the state at the import's version (a rollback to it, an export of it) is still
    read from them, and the rows of pruned snapshots nothing points at are deleted."""
    storage = _storage(tmp_path, keep_checkpoints=1)
    old = _graph(6, word="old")
    storage.import_sync(CHAT, old)  # v1
    graph = _graph(20)
    record = storage.import_sync(CHAT, graph)  # v2
    imported_chain = [int(v) for v in storage._snaps.head(CHAT)["chain"]]
    for i in range(3):  # v3..v5, each snapshotted: the import's head is pruned
        version = record.version + i
        storage.commit_sync(
            CHAT,
            change(node(f"n_{100 + i}", f"later {i}"), node_seq=100 + i, seq=100 + i),
            base_version=version,
        )
        storage.snapshot_sync(CHAT)
    heads = storage._snaps.head_rows(CHAT)
    assert [int(h["version"]) for h in heads] == [5]
    kept = set(storage._snaps.nodes.to_arrow()["snap"].to_pylist())
    assert set(imported_chain) <= kept  # the journal row still points at them
    at_import = storage.state_at_sync(CHAT, version=record.version)
    assert (_rows(at_import.nodes), _rows(at_import.edges)) == _expected(graph)
    assert storage.state_at_sync(CHAT, version=1).data["nodes"].keys() == old["nodes"].keys()
    back = storage.rollback_sync(CHAT, version=record.version)
    assert back.kind == "rollback"
    assert (_rows(storage.load_sync(CHAT).nodes), _rows(storage.load_sync(CHAT).edges)) == (
        _expected(graph)
    )
    # the first import's rows: its journal row points at them too, so they stay
    assert storage.state_at_sync(CHAT, version=1).nodes.num_rows == 6


def test_a_large_change_is_stored_in_rows_of_bounded_size(tmp_path, monkeypatch) -> None:
    """A rollback far back (here: to before an import of 40 nodes and 39 edges) with parts of
    16 items: five rows of one version, one `rollback` in the history, and a load equal to the
    empty graph."""
    from memgraph_plugin.storage.journal import journal_parts

    monkeypatch.setattr(journal_parts, "PART_ITEMS", 16)
    storage = _storage(tmp_path)
    storage.commit_sync(CHAT, change(node("n_0", "first"), node_seq=0, seq=0), base_version=0)
    imported = storage.import_sync(CHAT, _graph(40))
    assert len(_journal_rows(storage)) == 2  # the import: one row, whatever its size
    record = storage.rollback_sync(CHAT, version=1)
    rows = [r for r in _journal_rows(storage) if r["version"] == record.version]
    assert len(rows) == 5
    assert all(len(json.loads(r["payload"])["nodesRemoved"]) <= 16 for r in rows)
    history = storage.history_sync(CHAT)
    assert [r.kind for r in history] == ["write", "import", "rollback"]
    assert (history[-1].nodes_changed, history[-1].edges_removed) == (41, 39)  # n_0 put back
    state = storage.load_sync(CHAT)
    assert state.version == imported.version + 1 and list(state.data["nodes"]) == ["n_0"]
    assert state.edges.num_rows == 0
