"""Real processes: SIGKILL at random instants, and concurrent writers on one database."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.storage.targets import Target

# writer processes, SIGKILLed or run side by side
pytestmark = [pytest.mark.process, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PER_BATCH = 5


def _spawn(
    target: Target, chat: str, count: int, tag: str, *, session: bool = False, data_dir=None
):
    """A writer child on `target` (the database and its storage options travel in the
    environment); a session child is a Host whose data dir is beside a local database."""
    module = "tests.storage.session_child" if session else "tests.storage.writer_child"
    where = target.uri
    if session:
        where = str(data_dir or Path(target.uri).parent)
    return subprocess.Popen(
        [sys.executable, "-m", module, where, chat, str(count), str(PER_BATCH), tag],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **target.child_env()},
    )


def _session_target(target: Target, tmp_path: Path) -> Target:
    """Session tests keep a local database at the host's default `<data_dir>/lancedb`."""
    return target if target.remote else Target(str(tmp_path / "host" / "lancedb"))


class _Reader(threading.Thread):
    """Collects a child's stdout lines as they arrive."""

    def __init__(self, proc: subprocess.Popen) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.first_ack = threading.Event()
        self.start()

    def run(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())
            if line.startswith("ready"):
                self.ready.set()
            elif line.startswith("ok "):
                self.first_ack.set()

    def acked(self) -> list[str]:
        return [ln.split()[2] for ln in self.lines if ln.startswith("ok ")]


def _stderr(proc: subprocess.Popen) -> str:
    return proc.stderr.read() if proc.stderr else ""


def _kill_rounds(
    target: Target, rounds: int, seed: int, whole, *, session: bool = False, data_dir=None
) -> list[str]:
    """Start a writer, SIGKILL it at a random instant once it is writing, reopen, check.

    After every kill the chat must hold only whole batches (`whole(data)` returns them) and every
    batch acknowledged so far. Returns the acknowledged batches.
    """
    rng = random.Random(seed)
    acked: list[str] = []
    for round_no in range(rounds):
        proc = _spawn(
            target, "crash", 10_000, f"r{round_no}x", session=session, data_dir=data_dir
        )
        reader = _Reader(proc)
        # generous timeouts: under load a child may take long to start; never a time assertion
        assert reader.first_ack.wait(180), _stderr(proc)
        time.sleep(rng.uniform(0.0, 0.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        reader.join(10)
        acked.extend(reader.acked())
        storage = target.storage()
        state = storage.load_sync("crash")
        batches = whole(state.data)
        missing = [b for b in acked if b not in batches]
        assert not missing, f"acknowledged batches lost after kill {round_no + 1}: {missing}"
        assert state.version == len(batches)
        if session:  # every node's vector survived too (journal rows, checkpoint node rows)
            block = storage.load_vectors_sync("crash", state, profile="hashing")
            assert block is not None and set(block.ids) == set(state.data["nodes"])
    return acked


def _run_to_end(procs: list[subprocess.Popen]) -> list[_Reader]:
    """Wait for every writer to finish cleanly; their readers hold the output."""
    readers = [_Reader(p) for p in procs]
    for p in procs:
        assert p.wait(600) == 0, _stderr(p)
    for r in readers:
        r.join(10)
    return readers


def _versions(readers: list[_Reader]) -> list[int]:
    return sorted(int(ln.split()[1]) for r in readers for ln in r.lines if ln.startswith("ok "))


def _batches(data: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for nid, node in data["nodes"].items():
        out.setdefault(node["fields"]["batch"], set()).add(nid)
    return out


def _session_batches(data: dict) -> dict[str, dict[int, str]]:
    """batch -> {j: node id}, from summaries `"<batch> <j>"` written by session_child."""
    out: dict[str, dict[int, str]] = {}
    for nid, node in data["nodes"].items():
        batch, j = node["fields"]["summary"].split()
        assert int(j) not in out.get(batch, {}), f"duplicate node in batch {batch}"
        out.setdefault(batch, {})[int(j)] = nid
    return out


def _assert_whole_session_batches(data: dict) -> dict[str, dict[int, str]]:
    batches = _session_batches(data)
    edges = {(e["from"], e["to"]) for e in data["edges"] if e["type"] == "related"}
    for batch, nodes in batches.items():
        assert set(nodes) == set(range(PER_BATCH)), f"partial batch {batch}"
        want = {(nodes[0], nodes[j]) for j in range(1, PER_BATCH)}
        assert want <= edges, f"batch {batch} lost edges"
    return batches


def _assert_whole_batches(data: dict) -> dict[str, set[str]]:
    batches = _batches(data)
    for batch, ids in batches.items():
        assert ids == {f"{batch}_{j}" for j in range(PER_BATCH)}, f"partial batch {batch}"
    edge_batches = {e["from"].rsplit("_", 1)[0] for e in data["edges"]}
    assert edge_batches <= set(batches)
    for batch in batches:
        assert sum(1 for e in data["edges"] if e["from"] == f"{batch}_0") == PER_BATCH - 1
    return batches


def test_sigkill_at_random_points_keeps_whole_acknowledged_batches(target):
    rounds = 3 if target.remote else 12
    acked = _kill_rounds(target, rounds, 1234, _assert_whole_batches)
    assert len({b[: b.index("x")] for b in acked}) == rounds  # every round really wrote


def test_two_processes_on_different_chats_lose_nothing(target):
    per_chat = 6 if target.remote else 25
    target.storage()  # create the tables once
    readers = _run_to_end([_spawn(target, f"chat-{k}", per_chat, f"p{k}x") for k in range(2)])
    st = target.storage()
    for k, reader in enumerate(readers):
        assert len(reader.acked()) == per_chat
        state = st.load_sync(f"chat-{k}")
        assert state.version == per_chat
        assert set(_assert_whole_batches(state.data)) == set(reader.acked())


def test_writers_on_one_chat_never_silently_lose_a_write(target):
    """Three writers, compaction every 5 commits: scan order stops being commit order, which once
    made two writers both believe they won the same version (a lost write). On S3 this is
    LanceDB's commit protocol on object storage (conditional PUT of the next manifest)."""
    target.storage()
    writers, per_writer = 3, (6 if target.remote else 25)
    readers = _run_to_end(
        [_spawn(target, "shared", per_writer, f"s{k}x") for k in range(writers)]
    )
    acked = [b for r in readers for b in r.acked()]
    total = writers * per_writer
    print("conflicts seen:", sum(ln == "conflict" for r in readers for ln in r.lines))
    assert len(acked) == total
    st = target.storage()
    state = st.load_sync("shared")
    assert set(_assert_whole_batches(state.data)) == set(acked)
    # every acknowledged commit has its own version: history is linear, no duplicate survived
    assert _versions(readers) == list(range(1, total + 1))
    assert [h.version for h in st.history_sync("shared")] == list(range(1, total + 1))


def test_sigkill_during_session_writes(target, tmp_path):
    """The same through a real Host session: each `await apply_extraction_batch` is durable."""
    target = _session_target(target, tmp_path)
    rounds = 2 if target.remote else 4
    acked = _kill_rounds(
        target, rounds, 99, _assert_whole_session_batches, session=True, data_dir=tmp_path / "host"
    )
    assert len({b[: b.index("x")] for b in acked}) == rounds


def test_two_session_processes_on_one_chat(target, tmp_path):
    """Two hosts (processes) sharing one database: on S3, one bucket."""
    target = _session_target(target, tmp_path)
    per_host = 4 if target.remote else 12
    target.storage()
    readers = _run_to_end(
        [
            _spawn(target, "shared", per_host, f"t{k}x", session=True, data_dir=tmp_path / "host")
            for k in range(2)
        ]
    )
    acked = [b for r in readers for b in r.acked()]
    assert len(acked) == 2 * per_host
    state = target.storage().load_sync("shared")
    assert set(_assert_whole_session_batches(state.data)) == set(acked)
    assert _versions(readers) == list(range(1, 2 * per_host + 1))
