"""`NextVersionProbe`: "is there a table version after v?" from one file lookup, and the
journal's freshness check that uses it still sees another handle's commit."""

from __future__ import annotations

import lancedb
import pyarrow as pa

from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.storage.journal.table_head import NextVersionProbe
from memgraph_plugin.storage.persistence import ChangeRecord


def test_probe_answers_from_the_manifest_files(tmp_path):
    db = lancedb.connect(tmp_path / "db")
    table = db.create_table("t", pa.table({"x": [1]}))
    probe = NextVersionProbe(table)
    v = table.version
    assert probe.newer_than(v) is False
    other = lancedb.connect(tmp_path / "db").open_table("t")  # another handle commits
    other.add(pa.table({"x": [2]}))
    assert probe.newer_than(v) is True
    assert probe.newer_than(v + 1) is False
    assert probe.newer_than(v + 50) is None  # a version it never had: ask LanceDB


def test_probe_walks_to_the_newest_version(tmp_path):
    db = lancedb.connect(tmp_path / "db")
    table = db.create_table("t", pa.table({"x": [1]}))
    probe = NextVersionProbe(table)
    v = table.version
    assert probe.newest_from(v) == v
    other = lancedb.connect(tmp_path / "db").open_table("t")  # another handle commits 3 times
    for x in range(3):
        other.add(pa.table({"x": [x]}))
    assert probe.newest_from(v) == v + 3 == other.version
    assert probe.newest_from(v, limit=2) is None  # more came after it: ask LanceDB
    assert probe.newest_from(v + 50) is None  # a version it never had


def test_probe_does_not_guess_for_object_stores():
    class Remote:
        _dataset_path = "s3://bucket/db/t.lance"

    assert NextVersionProbe(Remote()).newer_than(3) is None


def _change(seq: int) -> ChangeRecord:
    node = {"id": f"n{seq}", "type": "event", "title": "t", "fields": {}}
    return ChangeRecord(nodes=(node,), seq_counter=seq, applied=1, kind="write")


def test_freshness_check_sees_another_handles_commit_and_skips_own(tmp_path):
    uri = str(tmp_path / "db")
    mine, theirs = LanceStorage(StorageSettings(uri=uri)), LanceStorage(StorageSettings(uri=uri))
    mine.commit_sync("a", _change(1), base_version=0)
    mine.commit_sync("b", _change(1), base_version=0)  # own append to another chat
    assert not mine.has_changed_sync("a", 1)
    assert mine.journal._probe.newer_than(mine.journal._head) is False  # answered by a lookup
    theirs.commit_sync("a", _change(2), base_version=1)
    assert mine.has_changed_sync("a", 1)
    assert not mine.has_changed_sync("a", 2)
    theirs.commit_sync("b", _change(2), base_version=1)  # another chat: "a" did not change
    assert not mine.has_changed_sync("a", 2)


def test_the_journals_current_version_follows_every_handles_commits(tmp_path):
    """A load notes the commits table version it read at (`Journal.current_version`, by a file
    lookup when nothing came after the newest version known): always LanceDB's answer."""
    uri = str(tmp_path / "db")
    mine, other = LanceStorage(StorageSettings(uri=uri)), LanceStorage(StorageSettings(uri=uri))
    journal = mine.journal
    assert journal.current_version() == journal.table.version
    for seq in range(1, 4):
        mine.commit_sync("a", _change(seq), base_version=seq - 1)
        assert journal.current_version() == journal.table.version
    other.commit_sync("b", _change(1), base_version=0)  # another handle: a newer manifest
    assert journal.current_version() == journal.table.version
    mine.load_sync("a")
    assert journal.current_version() == journal.table.version
