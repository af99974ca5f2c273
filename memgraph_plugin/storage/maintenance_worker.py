"""The maintenance child's main loop: `python -m
memgraph_plugin.storage.maintenance_worker`.

Reads passes (JSON lines, `maintenance_process.py`) on stdin and runs them on its own
`LanceStorage` handles, one per database: the snapshots due, then compaction and version cleanup
of the tables that need it (`table_compaction.py`).
Each step announces itself (`{"step": ..., "pid": ...}`) before it starts; the reply carries the
checkpoint version of every chat looked at, the failures (a failed step never stops the others)
and the log records of this package, which the parent logs as its own. The process lowers its
scheduling priority; it exits when its stdin closes (the parent let it go) or its parent is gone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import IO, Any

from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.maintenance.maintenance import retry_conflicts
from memgraph_plugin.storage.settings import StorageSettings

#: databases kept open at once (a host has one; a test session makes many)
_HANDLES_KEPT = 4
#: how much lower this process's main thread's scheduling priority is than the writers' (man 2
#: nice). Only that thread (a snapshot's Python work): LanceDB's runtime threads, which do the
#: rewriting and the commits, keep the writers' priority. Lowered too (nice 5 or 19 on every
#: thread, or SCHED_BATCH), a compaction of the `commits` table loses LanceDB's commit race
#: against a host that writes continuously and fails after LanceDB's 30 s retry ("Too many
#: concurrent writers"), pass after pass (measured with bench/scale.py --section 2).
NICENESS = 5


class _Collect(logging.Handler):
    """Keeps this package's log records of one pass for the reply."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


class Worker:
    """Runs passes on cached storage handles and writes its answers to `out`."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.handles: OrderedDict[str, LanceStorage] = OrderedDict()

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    def storage(self, settings: dict[str, Any]) -> LanceStorage:
        key = json.dumps(settings, sort_keys=True)
        handle = self.handles.get(key)
        if handle is None:
            handle = self.handles[key] = LanceStorage(StorageSettings(**settings))
            while len(self.handles) > _HANDLES_KEPT:
                self.handles.popitem(last=False)[1].close()
        self.handles.move_to_end(key)
        return handle

    def run_pass(self, request: dict[str, Any]) -> dict[str, Any]:
        failures: list[tuple[str, str]] = []
        checkpoints: dict[str, int] = {}
        compacted: list[str] = []
        storage = self.storage(request["settings"])
        for chat_id, version in request.get("known", {}).items():
            storage.note_checkpoint(chat_id, int(version))
        with _one_core():
            for chat_id, version in request.get("due", []):
                what = f"snapshot of chat {chat_id!r}"
                try:
                    if storage.snapshot_due(chat_id, int(version)):
                        self.send({"step": what, "pid": os.getpid()})
                        retry_conflicts(lambda c=chat_id: storage.snapshot_sync(c), what)
                    checkpoints[chat_id] = storage.checkpointed_version(chat_id)
                except Exception as exc:  # the parent reports it; the next pass tries again
                    failures.append((what, f"{type(exc).__name__}: {exc}"))
        if request.get("optimize"):
            self.send({"step": "compaction", "pid": os.getpid()})
            try:
                compacted = storage.optimize_sync(force=False)
            except Exception as exc:
                failures.append(("compaction", f"{type(exc).__name__}: {exc}"))
        return {
            "done": True,
            "checkpoints": checkpoints,
            "failures": failures,
            "compacted": compacted,
        }


def _exit_with_parent(interval: float = 0.5) -> None:
    """End this process when its parent is gone (SIGKILLed: no one closes our stdin). A pass cut
    short is safe: every step is crash-safe, and the next maintenance redoes it."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _all_cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return []


#: the cores this process may use: all of them at start
_CORES = _all_cores()


def _keep_to(cores: list[int]) -> None:
    """Move every thread of this process (LanceDB's, started at import, and those to come) to
    `cores`."""
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError, ValueError):
            os.sched_setaffinity(int(tid), cores)


@contextlib.contextmanager
def _one_core() -> Iterator[None]:
    """The snapshots of a pass on one core, the last, when the machine has more than one: the
    writers keep the others. With LanceDB's compute pool and its async runtime each on a thread
    of their own, a pass otherwise ran on two cores at once, and on a 2-core machine writers to
    other chats waited for the CPU inside their appends (bench/scale.py section 2: appends of
    10 ms of CPU took 25-45 ms; p99/p50 4.5x, 2.3-2.6x on one core). Compaction keeps every
    core: a compaction of the `commits` table must win LanceDB's commit race against hosts
    appending to it, and on one core its commit lost pass after pass ("Too many concurrent
    writers" after LanceDB's 30 s of retries)."""
    if len(_CORES) < 2:
        yield
        return
    _keep_to(_CORES[-1:])
    try:
        yield
    finally:
        _keep_to(_CORES)


def main() -> None:
    _exit_with_parent()
    # answers go to a private copy of stdout; anything else printed lands on stderr
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    with contextlib.suppress(OSError):  # writers first: maintenance only needs to keep up
        os.nice(NICENESS)
    collect = _Collect()
    package = logging.getLogger("memgraph_plugin")
    package.addHandler(collect)
    package.setLevel(logging.INFO)
    package.propagate = False
    worker = Worker(out)
    worker.send({"ready": os.getpid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        collect.records.clear()
        try:
            reply = worker.run_pass(json.loads(line))
        except Exception as exc:  # e.g. the database cannot be opened: reported, not fatal
            reply = {
                "done": True,
                "checkpoints": {},
                "failures": [("maintenance pass", f"{type(exc).__name__}: {exc}")],
            }
        reply["logs"] = collect.records
        worker.send(reply)
    for handle in worker.handles.values():
        handle.close()


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # the host went away (it exits or was killed): nothing to answer
        with contextlib.suppress(OSError):
            sys.stderr.close()
        os._exit(0)
