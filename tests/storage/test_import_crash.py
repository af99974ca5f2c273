"""A real import process SIGKILLed at random instants (issue 31): the chat is always either as it
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
from tests.storage.import_child import big_store

pytestmark = [pytest.mark.process, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
NODES = 6000  # about a second of import: kills land in its snapshot rows, journal row or head


def _spawn(uri: str, chat: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.storage.import_child", uri, chat, str(NODES)],
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
