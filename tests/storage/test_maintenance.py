"""Background maintenance: never on a writer's thread, incremental columnar snapshots equal to a
journal replay, quiet retries of LanceDB commit conflicts, SIGKILL during maintenance, and two
writer processes keeping fragments and versions bounded."""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import attrs
import pytest

from memgraph_plugin.engine.store import Store
from memgraph_plugin.storage import LanceStorage, StateBuilder, StorageSettings
from memgraph_plugin.storage.maintenance import retry_conflicts
from tests.storage.helpers import change, edge, node

ROOT = Path(__file__).resolve().parents[2]


def _replayed(st: LanceStorage, chat: str) -> dict:
    """The chat as a replay of its whole journal (no snapshot involved)."""
    builder = StateBuilder()
    for entry in st._journal(chat, 0):
        builder.apply(entry.change())
    return builder.to_dict()


def test_writes_never_run_maintenance_on_their_own_thread(tmp_path):
    st = LanceStorage(
        StorageSettings(uri=str(tmp_path / "db"), checkpoint_every=3, optimize_every=4)
    )
    ran: list[tuple[str, str]] = []
    for name in ("snapshot_sync", "optimize_sync"):
        real = getattr(st, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            ran.append((_name, threading.current_thread().name))
            return _real(*args, **kwargs)

        setattr(st, name, spy)
    for i in range(1, 13):
        st.commit_sync("c", change(node(f"n_{i}"), node_seq=i), base_version=i - 1)
        assert not any(t == threading.current_thread().name for _, t in ran)
    assert st.maintenance.wait_idle()
    assert {n for n, _ in ran} == {"snapshot_sync", "optimize_sync"}
    assert {t for _, t in ran} == {"memgraph-storage-maintenance"}
    assert st.checkpointed_version("c") >= 9
    st.close()


def test_incremental_snapshots_load_exactly_what_a_journal_replay_gives(tmp_path):
    """Random puts, renames, removals and re-adds of nodes and edges, snapshotted as deltas
    along chains (and full ones when a chain is long): every load equals a plain replay of the
    journal, order of nodes and edges included, and so does a store built from the columns."""
    st = LanceStorage(
        StorageSettings(
            uri=str(tmp_path / "db"), checkpoint_every=2, snapshot_chain=3, keep_checkpoints=2
        )
    )
    rng = random.Random(7)
    live: set[str] = set()
    chains: list[int] = []
    edges: set[tuple[str, str, str]] = set()
    for version in range(1, 31):
        puts, gone, added, cut = [], [], [], []
        for _ in range(rng.randint(1, 4)):
            nid = f"n_{rng.randint(1, 12)}"
            if nid in live and rng.random() < 0.3:
                gone.append(nid)
            else:
                puts.append(node(nid, f"{nid} v{version}", seq=version))
        for _ in range(rng.randint(0, 3)):
            a, b = f"n_{rng.randint(1, 12)}", f"n_{rng.randint(1, 12)}"
            key = (a, "related", b)
            if key in edges and rng.random() < 0.5:
                cut.append(key)
            elif a != b:
                added.append(edge(a, b))
        gone = [g for g in gone if g not in {p["id"] for p in puts}]
        ch = attrs.evolve(
            change(*puts, edges=added, removed=cut, node_seq=12, seq=version),
            nodes_removed=tuple(gone),
        )
        st.commit_sync("c", ch, base_version=version - 1)
        live = (live | {p["id"] for p in puts}) - set(gone)
        edges = (edges | {(e["from"], e["type"], e["to"]) for e in added}) - set(cut)
        if version % 3 == 0:
            st.maintain_sync(optimize=version % 9 == 0)
            fresh = LanceStorage(st.settings)
            state = fresh.load_sync("c")
            expected = _replayed(fresh, "c")
            assert state.checkpoint_version > 0
            assert state.data == expected
            assert list(state.data["nodes"]) == list(expected["nodes"])
            assert state.data["edges"] == expected["edges"]  # same order
            built = Store.from_columns(state.nodes, state.edges, state.node_seq, state.seq_counter)
            assert built.to_dict() == Store.from_dict(expected).to_dict()
            fresh.close()
            chains.append(len(st._snaps.head(c := "c")["chain"]))
            assert len(st._snaps.head_rows(c)) <= 2
    assert max(chains) == 3 and chains[chains.index(3) + 1] == 1  # deltas, then full again
    st.close()


def test_conflicts_are_retried_quietly_with_backoff(caplog):
    caplog.set_level(logging.DEBUG, logger="memgraph_plugin.storage.maintenance")
    calls = []

    def flaky():
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise RuntimeError("lance error: Retryable commit conflict for version 12: preempted")
        return "done"

    assert retry_conflicts(flaky, "compacting table 'commits'", base_delay=0.01) == "done"
    assert len(calls) == 3
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("commit conflict" in r.getMessage() for r in caplog.records) == 2

    def always():
        raise RuntimeError("Retryable commit conflict")

    caplog.clear()
    assert retry_conflicts(always, "x", attempts=3, base_delay=0.001) is None
    assert [r.levelno for r in caplog.records if r.levelno > logging.DEBUG] == [logging.INFO]
    with pytest.raises(ValueError):  # anything else is not retried
        retry_conflicts(lambda: (_ for _ in ()).throw(ValueError("bad")), "y")


def _spawn(uri: str, chat: str, count: int, tag: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.storage.maintenance_child", uri, chat, str(count), tag],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


class _Lines(threading.Thread):
    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.lines: list[str] = []
        self.maint = threading.Event()
        self.start()

    def run(self) -> None:
        for line in self.stream:
            self.lines.append(line.strip())
            if line.startswith("maint"):
                self.maint.set()

    def acked(self) -> list[str]:
        return [ln.split()[2] for ln in self.lines if ln.startswith("ok ")]


def _check_batches(st: LanceStorage, chat: str, acked: list[str]) -> None:
    state = st.load_sync(chat)
    data = state.data
    assert data == _replayed(st, chat)  # snapshot + journal equals the journal alone
    batches: dict[str, set[str]] = {}
    for nid, n in data["nodes"].items():
        batches.setdefault(n["fields"]["batch"], set()).add(nid)
    for batch, ids in batches.items():
        assert ids == {f"{batch}_{j}" for j in range(3)}, f"partial batch {batch}"
    missing = [b for b in acked if b not in batches]
    assert not missing, f"acknowledged batches lost: {missing}"
    assert state.version == len(batches)


def test_sigkill_during_maintenance_loses_nothing_committed(tmp_path):
    """A writer whose maintenance runs constantly (snapshots every 3 commits, compaction every
    4) is killed with SIGKILL right after a maintenance step started; after every kill each
    acknowledged batch is there, whole, and the snapshot-based load equals a journal replay."""
    uri = str(tmp_path / "db")
    rng = random.Random(16)
    acked: list[str] = []
    for round_no in range(5):
        proc = _spawn(uri, "crash", 10_000, f"r{round_no}x")
        out = _Lines(proc.stdout)
        assert out.maint.wait(180), proc.stderr.read() if proc.stderr else ""
        # let a few maintenance steps start, then kill at a random instant inside one
        for _ in range(rng.randint(0, 3)):
            out.maint.clear()
            assert out.maint.wait(60)
        time.sleep(rng.uniform(0.0, 0.03))
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        out.join(10)
        acked.extend(out.acked())
        st = LanceStorage(StorageSettings(uri=uri))
        _check_batches(st, "crash", acked)
        st.close()
    assert len(acked) >= 5


def test_two_writers_keep_fragments_and_versions_bounded_and_log_no_errors(tmp_path):
    """Two writer processes on one chat, each compacting every 4 commits and snapshotting every
    3: LanceDB's commit conflicts between their compactions and deletes are retried quietly
    (no ERROR, no traceback), and every table's fragments and versions stay bounded."""
    uri = str(tmp_path / "db")
    procs = [_spawn(uri, "shared", 60, tag) for tag in ("a", "b")]
    outs = [_Lines(p.stdout) for p in procs]
    errs: list[str] = []
    err_threads = [
        threading.Thread(target=lambda p=p: errs.append(p.stderr.read()), daemon=True)
        for p in procs
    ]
    for t in err_threads:
        t.start()
    st = LanceStorage(StorageSettings(uri=uri))
    samples = []
    while any(p.poll() is None for p in procs):
        try:
            stats = st.stats_sync()
        except RuntimeError:  # a version listed, then cleaned up (1 s retention) before read
            continue
        samples.append({k: (v["fragments"], v["versions"]) for k, v in stats.items()})
        time.sleep(0.3)
    for p in procs:
        assert p.wait(600) == 0
    for t in err_threads:
        t.join(10)
    log = "\n".join(errs)
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]
    assert samples
    worst = {
        name: (max(s[name][0] for s in samples if name in s),
               max(s[name][1] for s in samples if name in s))
        for name in samples[-1]
    }
    for name, (fragments, versions) in worst.items():
        assert fragments <= 25, (name, worst)  # measured: <= 9
        assert versions <= 100, (name, worst)  # measured: <= 40
    acked = [b for o in outs for b in o.acked()]
    assert len(acked) == 120
    _check_batches(st, "shared", acked)
    st.close()
