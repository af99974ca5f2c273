"""A real import process SIGKILLed at random instants: the chat is always either as it
was before or the whole imported graph (never part of it), history shows at most one `import`
more, and the chat keeps working (a commit after it, an import again)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgraph_plugin.engine.load.store_import import normalised_store
from memgraph_plugin.storage import ChangeRecord, LanceStorage
from tests.storage.maintenance.import_child import big_store

pytestmark = [pytest.mark.process, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
#: about a second of import (its snapshot rows, then its journal row, then its head row), so that
#: kills in the sleep below land inside it as well as after it
NODES = 20_000


def _spawn(uri: str, chat: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.storage.maintenance.import_child",
            uri, chat, str(NODES), *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_sigkill_during_an_import_leaves_the_chat_before_or_after_it(tmp_path):
    uri = str(tmp_path / "db")
    chat = "c"
    old = normalised_store(big_store(50, "old"))
    new = normalised_store(big_store(NODES, "new"))
    storage = LanceStorage(uri)
    storage.import_sync(chat, old)
    storage.close()
    rng = random.Random(31)
    outcomes = set()
    for _ in range(4):
        proc = _spawn(uri, chat)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(rng.uniform(0.0, 1.5))  # somewhere in the import (or after it)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        storage = LanceStorage(uri)
        state = storage.load_sync(chat)
        kinds = [r.kind for r in storage.history_sync(chat)]
        if state.data == new:
            outcomes.add("after")
            assert kinds.count("import") >= 2
        else:
            assert state.data == old, "a part of the import is visible"
            outcomes.add("before")
        storage.close()
        # back to the old graph for the next round (an import itself)
        storage = LanceStorage(uri)
        storage.import_sync(chat, old)
        storage.close()
    storage = LanceStorage(uri)
    before = storage.load_sync(chat)
    record = storage.commit_sync(
        chat,
        ChangeRecord(
            nodes=({"id": "n_x", "type": "event", "title": "later", "fields": {}},),
            node_seq=before.data["nodeSeq"] + 1,
            seq_counter=before.data["seqCounter"] + 1,
        ),
        base_version=before.version,
    )
    assert "n_x" in storage.load_sync(chat).data["nodes"] and record.version > before.version
    storage.close()
    assert outcomes  # every round ended in one of the two states


def test_sigkill_between_the_journal_row_and_the_head_row_leaves_the_import(tmp_path):
    """The import's journal row is its commit point: killed right after it, before its
    snapshot's head row, the chat is the whole imported graph (read through the row pointing
    at the snapshot), and a later maintenance snapshot writes the missing head."""
    uri = str(tmp_path / "db")
    chat = "c"
    storage = LanceStorage(uri)
    storage.import_sync(chat, normalised_store(big_store(50, "old")))
    storage.close()
    proc = _spawn(uri, chat, "--hold-head")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    assert proc.stdout.readline().strip() == "committed", proc.stderr.read()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    storage = LanceStorage(uri)
    assert int(storage._snaps.head(chat)["version"]) == 1  # the old import's; none for v2
    state = storage.load_sync(chat)
    assert state.version == 2 and state.checkpoint_version == 2
    assert state.data == normalised_store(big_store(NODES, "new"))
    assert [r.kind for r in storage.history_sync(chat)] == ["import", "import"]
    storage.commit_sync(
        chat,
        ChangeRecord(
            nodes=({"id": "n_x", "type": "event", "title": "later", "fields": {}},),
            node_seq=NODES + 1,
            seq_counter=NODES + 1,
        ),
        base_version=2,
    )
    assert storage.snapshot_sync(chat) == 3
    assert sorted(int(h["version"]) for h in storage._snaps.head_rows(chat)) == [1, 2, 3]
    assert "n_x" in storage.load_sync(chat).data["nodes"]
    storage.close()
