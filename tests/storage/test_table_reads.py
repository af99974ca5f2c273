"""Reads and appends through pylance (`storage/database/table_reads.py`): a handle sees every commit
LanceDB's table makes and the other way round, a pinned handle stays at the version it checked
out, and a process that opens a stored chat and commits to it never imports LanceDB."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from memgraph_plugin.storage import LanceStorage
from memgraph_plugin.storage.database.table_reads import Database, TableHandle, table_uri
from memgraph_plugin.storage.database.tables import COMMITS
from tests.storage.helpers import change, node
from tests.storage.targets import Target

ROOT = Path(__file__).resolve().parents[2]


def _stored_chat(target: Target) -> LanceStorage:
    storage = target.storage(checkpoint_every=1000)
    version = 0
    for i in range(3):
        nid = f"n_{i + 1}"
        version = storage.commit_sync(
            "c", change(node(nid), node_seq=i + 1, seq=i + 1), base_version=version
        ).version
    storage.snapshot_sync("c")
    storage.commit_sync("c", change(node("n_4"), node_seq=4, seq=4), base_version=version)
    return storage


def test_the_tables_of_a_stored_chat_are_read_through_pylance(target: Target) -> None:
    storage = _stored_chat(target)
    fresh = LanceStorage(target.settings())
    assert isinstance(fresh.journal.table, TableHandle)
    assert isinstance(fresh._snaps.nodes, TableHandle)
    state = fresh.load_sync("c")
    assert state.version == 4 and set(state.data["nodes"]) == {"n_1", "n_2", "n_3", "n_4"}
    # a commit by the other handle (appended through pylance too) is seen by the next read
    storage.commit_sync("c", change(node("n_5"), node_seq=5, seq=5), base_version=4)
    assert fresh.latest_version_sync("c") == 5
    assert "n_5" in fresh.load_sync("c").data["nodes"]


def test_a_handle_and_lancedbs_table_see_each_others_commits(target: Target) -> None:
    _stored_chat(target)
    db = Database(target.settings())
    handle = db.open_table(COMMITS)
    assert isinstance(handle, TableHandle)
    lance_table = handle.lancedb_table()  # LanceDB's own table of the same dataset
    before = handle.version
    assert lance_table.version == before
    rows = handle.search().where("chat_id = 'c'").limit(None).to_arrow()
    copy = rows.slice(0, 1).set_column(
        rows.schema.get_field_index("chat_id"), "chat_id", pa.array(["d"], pa.string())
    )
    assert handle.add(copy.select(handle.schema.names)).version == before + 1  # pylance
    assert lance_table.count_rows("chat_id = 'd'") == 1  # LanceDB sees it
    lance_table.delete("chat_id = 'd'")  # LanceDB's delete: the handle's next read sees it
    assert handle.search().where("chat_id = 'd'").limit(None).to_arrow().num_rows == 0
    assert handle.version == lance_table.version == before + 2
    got = handle.search().where("chat_id = 'c'").select(["version"]).with_row_id(True)
    table = got.limit(None).to_arrow()
    assert "_rowid" in table.column_names and sorted(table["version"].to_pylist()) == [1, 2, 3, 4]


def test_a_pinned_handle_counts_the_rows_of_the_version_it_checked_out(target: Target) -> None:
    storage = _stored_chat(target)
    pinned = Database(target.settings(), consistent=False).open_table(COMMITS)
    now = storage.journal.table.version
    pinned.checkout(now)
    assert pinned.count_rows() == 4
    storage.commit_sync("c", change(node("n_5"), node_seq=5, seq=5), base_version=4)
    assert pinned.count_rows() == 4  # still at the version it was moved to
    pinned.checkout(now + 1)
    assert pinned.count_rows() == 5


def test_a_missing_table_of_a_local_database_is_made_by_pylance_as_lancedb_makes_it(
    tmp_path: Path,
) -> None:
    import lance
    import lancedb

    db = Database(Target(str(tmp_path / "db")).settings())
    assert not Path(table_uri(db.settings.uri, "fresh")).exists()
    with pytest.raises((ValueError, FileNotFoundError, RuntimeError)):
        db.open_table("fresh")  # LanceDB's error for a missing table (open_or_create makes it)
    storage = LanceStorage(db.settings)  # makes every table
    assert isinstance(storage.journal.table, TableHandle)  # made and read through pylance
    made = lance.dataset(table_uri(db.settings.uri, COMMITS))
    assert made.has_stable_row_ids  # LanceDB's `new_table_enable_stable_row_ids`
    manifests = list(Path(table_uri(db.settings.uri, COMMITS), "_versions").glob("*.manifest"))
    assert [m.name for m in manifests] == ["18446744073709551614.manifest"]  # v2 paths
    assert storage.load_sync("c").version == 0
    storage.commit_sync("c", change(node("n_1"), node_seq=1, seq=1), base_version=0)
    table = lancedb.connect(db.settings.uri).open_table(COMMITS)  # LanceDB reads what it made
    assert table.count_rows() == 1 and table.schema.equals(made.schema)


def test_a_handle_deletes_through_pylance_and_lancedb_sees_it(target: Target) -> None:
    _stored_chat(target)
    handle = LanceStorage(target.settings()).journal.table  # a stored table: read by pylance
    assert isinstance(handle, TableHandle) and handle._table is None
    before = handle.count_rows()
    handle.delete("version = 4")
    assert handle._table is None  # LanceDB's table was not needed
    assert handle.count_rows() == before - 1
    assert LanceStorage(target.settings()).journal.table.lancedb_table().count_rows() == before - 1


_CHILD = textwrap.dedent(
    """
    import json, sys
    from memgraph_plugin.storage import LanceStorage
    from tests.storage.helpers import change, node
    storage = LanceStorage(sys.argv[1])
    state = storage.load_sync("c")
    record = storage.commit_sync(
        "c", change(node("n_9"), node_seq=9, seq=9), base_version=state.version
    )
    again = LanceStorage(sys.argv[1]).load_sync("c")
    print(json.dumps({"version": record.version, "nodes": sorted(again.data["nodes"]),
                      "lancedb": "lancedb" in sys.modules}))
    """
)

_NEW_HOST_CHILD = textwrap.dedent(
    """
    import json, sys
    from memgraph_plugin.storage import LanceStorage
    from tests.storage.helpers import change, node
    storage = LanceStorage(sys.argv[1])  # a new database: every table made here
    version = storage.commit_sync("c", change(node("n_1"), node_seq=1, seq=1), base_version=0)
    storage.snapshot_sync("c")
    data = {"nodes": {"n_1": node("n_1", "harbor"), "n_2": node("n_2", "storm")},
            "edges": [], "nodeSeq": 2, "seqCounter": 2}
    storage.import_sync("d", data)  # its snapshot, then older snapshots pruned (deletes)
    storage.import_sync("d", data)
    print(json.dumps({"c": sorted(storage.load_sync("c").data["nodes"]),
                      "d": sorted(storage.load_sync("d").data["nodes"]),
                      "lancedb": "lancedb" in sys.modules}))
    """
)


@pytest.mark.process
def test_opening_and_committing_to_a_stored_chat_imports_no_lancedb(tmp_path: Path) -> None:
    target = Target(str(tmp_path / "db"))
    _stored_chat(target)
    assert _child(_CHILD, target.uri) == {
        "version": 5,
        "nodes": ["n_1", "n_2", "n_3", "n_4", "n_9"],
        "lancedb": False,
    }


@pytest.mark.process
def test_a_new_host_writes_snapshots_and_imports_without_lancedb(tmp_path: Path) -> None:
    """A new database in a local folder: its tables made, a commit, a snapshot and two imports
    (the second prunes the first's snapshot rows) all go through pylance."""
    out = _child(_NEW_HOST_CHILD, str(tmp_path / "db"))
    assert out == {"c": ["n_1"], "d": ["n_1", "n_2"], "lancedb": False}


def _child(script: str, uri: str) -> Any:
    """What `script`, run by a fresh interpreter on the database `uri`, printed last (JSON)."""
    proc = subprocess.run(
        [sys.executable, "-c", script, uri], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_storages_made_at_once_on_a_new_folder_share_one_set_of_tables(tmp_path: Path) -> None:
    """Eight storages opened at the same moment on a new folder (a host and its maintenance
    worker starting together): each table is made once, whichever maker wins, and every
    storage commits to it."""
    import threading

    settings = Target(str(tmp_path / "db")).settings()
    start = threading.Barrier(8)
    made: list[LanceStorage] = []
    failed: list[BaseException] = []

    def open_one() -> None:
        start.wait(60)
        try:
            made.append(LanceStorage(settings))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failed and len(made) == 8
    version = 0
    for i, storage in enumerate(made):
        version = storage.commit_sync(
            "c", change(node(f"n_{i}"), node_seq=i + 1, seq=i + 1), base_version=version
        ).version
    assert version == 8
    assert sorted(made[0].load_sync("c").data["nodes"]) == sorted(f"n_{i}" for i in range(8))


def test_threads_scan_a_shared_storage_while_others_commit(target: Target) -> None:
    """Storage work runs on worker threads (`asyncio.to_thread`), so one storage's table handles
    are scanned by some threads while others append to and delete from them: every read and
    every commit succeeds (a pylance dataset moved to a newer version while another thread set
    up a scan on it failed with "Already borrowed"), and each reader sees whole commits."""
    import threading

    storage = _stored_chat(target)
    writers, readers, commits = 2, 4, 12
    start = threading.Barrier(writers + readers)
    done = threading.Event()
    failed: list[str] = []
    seen: list[int] = []

    def write(w: int) -> None:
        start.wait(60)
        chat, version = f"w{w}", 0
        try:
            for i in range(commits):
                nid = f"n_{i + 1}"
                version = storage.commit_sync(
                    chat, change(node(nid), node_seq=i + 1, seq=i + 1), base_version=version
                ).version
                if i % 4 == 3:
                    storage.snapshot_sync(chat)  # snapshot rows appended, older ones deleted
        except Exception as exc:  # noqa: BLE001 - reported below
            failed.append(f"writer {w}: {exc!r}")

    def read() -> None:
        start.wait(60)
        try:
            while not done.is_set():
                for w in range(writers):
                    state = storage.load_sync(f"w{w}")
                    assert len(state.data["nodes"]) == state.version  # one node per commit
                    seen.append(state.version)
                assert storage.load_sync("c").version == 4
        except Exception as exc:  # noqa: BLE001 - reported below
            failed.append(f"reader: {exc!r}")

    pool = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    scanners = [threading.Thread(target=read) for _ in range(readers)]
    for t in pool + scanners:
        t.start()
    for t in pool:
        t.join(300)
    done.set()
    for t in scanners:
        t.join(300)
    assert failed == []
    assert seen  # the readers ran alongside the commits
    for w in range(writers):
        assert storage.load_sync(f"w{w}").version == commits
