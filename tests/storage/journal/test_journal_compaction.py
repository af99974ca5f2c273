"""The journal's compaction (`journal_compaction.py`): only its new small fragments are rewritten,
its commits hold the gate every append holds shared (other processes included), and it wins
against a writer process appending all the while, losing nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.storage.journal import journal_compaction as jc
from memgraph_plugin.storage.maintenance.maintenance import retry_conflicts
from tests.storage.helpers import change, node

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def storage(tmp_path):
    return LanceStorage(StorageSettings(uri=str(tmp_path / "db"), checkpoint_every=10**6))


def _fragments(st: LanceStorage) -> dict[int, int]:
    """The journal's fragments: id -> rows."""
    return {f.fragment_id: f.metadata.physical_rows for f in st._commits.to_lance().get_fragments()}


def _commit(st: LanceStorage, chat: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        st.commit_sync(chat, change(node(f"{chat}{i}"), node_seq=i + 1), base_version=i)


def test_full_fragments_are_never_rewritten_and_small_ones_wait_to_pile_up(storage, monkeypatch):
    monkeypatch.setattr(jc, "FRAGMENT_ROWS", 8)
    gate = jc.JournalGate(storage.settings.uri)

    def compact() -> bool:
        return jc.compact_journal(storage._commits, gate, timedelta(0), small_fragments=6)

    _commit(storage, "c", 20)
    assert compact() is True
    first = _fragments(storage)
    full = {fid for fid, rows in first.items() if rows >= 8}
    assert full and sum(first.values()) == 20 and len(first) <= 3

    _commit(storage, "c", 4, start=20)  # fewer small fragments than the threshold: left alone
    assert compact() is False
    assert len(_fragments(storage)) == len(first) + 4

    _commit(storage, "c", 6, start=24)
    assert compact() is True
    after = _fragments(storage)
    assert full <= set(after) and all(after[fid] == first[fid] for fid in full)
    assert sum(after.values()) == 30 and len(after) < len(first) + 10
    fresh = LanceStorage(storage.settings)
    assert sorted(fresh.load_sync("c").data["nodes"]) == sorted(f"c{i}" for i in range(30))
    assert [r.version for r in fresh.history_sync("c")] == list(range(1, 31))


_HOLD_SHARED = """
import sys
from pathlib import Path
from memgraph_plugin.storage.journal.journal_compaction import JournalGate
gate = JournalGate(sys.argv[1])
marker = Path(sys.argv[2])
print("asking", flush=True)
with gate.shared():
    print("got it", marker.read_text() if marker.exists() else "while held", flush=True)
"""


def _waits_for_a_lock(pid: int, path: Path) -> bool:
    """Whether process `pid` waits for a lock on the file `path`: a blocked entry of /proc/locks
    (``N: -> FLOCK  ADVISORY  READ <pid> <major>:<minor>:<inode> 0 EOF``)."""
    inode = f":{path.stat().st_ino}"
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        blocked = len(fields) > 6 and fields[1] == "->"
        if blocked and fields[5] == str(pid) and fields[6].endswith(inode):
            return True
    return False


@pytest.mark.slow
@pytest.mark.process
def test_an_append_in_another_process_waits_for_a_compaction_commit(storage, tmp_path):
    gate = jc.JournalGate(storage.settings.uri)
    marker = tmp_path / "released"
    with gate.exclusive():
        child = subprocess.Popen(
            [sys.executable, "-c", _HOLD_SHARED, storage.settings.uri, str(marker)],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "asking"
        deadline = time.monotonic() + 120
        while not _waits_for_a_lock(child.pid, gate.path / jc.GATE_NAME):  # polled: no event
            assert child.poll() is None, "the append did not wait for the compaction's commit"
            assert time.monotonic() < deadline, "the append never asked for the gate"
            time.sleep(0.01)
        marker.write_text("after the commit")  # the commit is done: the gate is let go next
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0
    # it got the gate only once the commit let it go
    assert out.splitlines()[-1] == "got it after the commit"


@pytest.mark.slow
@pytest.mark.process
def test_compaction_wins_against_a_writer_appending_all_the_while(storage):
    """A writer process commits 120 batches back to back (its own maintenance process compacting
    too); the journal is compacted over and over meanwhile: compactions commit, and every batch
    is there."""
    uri = storage.settings.uri
    _commit(storage, "seed", 1)
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.writer_child", uri, "w", "120", "1", "w"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    gate = jc.JournalGate(uri)
    merged = 0
    while writer.poll() is None:
        merged += bool(retry_conflicts(  # the writer's own maintenance compacts too
            lambda: jc.compact_journal(
                storage._commits, gate, timedelta(seconds=600), small_fragments=4
            ),
            "compacting the journal",
        ))
    out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    assert out.count("ok ") == 120
    assert merged >= 2
    fresh = LanceStorage(storage.settings)
    assert len(fresh.load_sync("w").data["nodes"]) == 120
    assert [r.version for r in fresh.history_sync("w")] == list(range(1, 121))
