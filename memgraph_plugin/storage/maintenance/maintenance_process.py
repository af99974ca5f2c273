"""The maintenance process: one child interpreter per host process that runs storage maintenance
passes (snapshots, compaction, version cleanup) sent to it by `maintenance.py`.

Why a process and not a thread: a pass is seconds of CPU (building a snapshot's columns in
Python, LanceDB rewriting fragments), and on a thread it holds the GIL in slices that writers to
other chats queue behind (their p99 grew several-fold while a pass ran). The child's main thread
runs at a lower scheduling priority (its LanceDB threads keep the writers': see
`maintenance_worker.NICENESS`) with LanceDB's compute pool and async runtime at one thread each
(about one core at most), and a pass compacts only the tables that need it
(`table_compaction.py`), so writers keep most of the CPU and the disk.

Protocol (JSON lines): a request `{"settings", "due", "known", "optimize"}` on the child's stdin;
the child answers `{"step": what, "pid": pid}` lines as each step starts, then one reply line
`{"done": true, "checkpoints", "failures", "compacted", "logs"}` (`maintenance_worker.py`). The
child is started on first use and again after it died; a death mid-pass is a failure of that pass
only (every step is crash-safe: see `snapshots.py`), reported through `MaintenanceDied`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

#: the package root, so the child imports this same code whatever `sys.path` the host had
_ROOT = str(Path(__file__).resolve().parents[2])
_WORKER_MODULE = "memgraph_plugin.storage.maintenance_worker"


class MaintenanceDied(RuntimeError):
    """The maintenance process ended (killed, crashed) before answering a pass."""


class MaintenanceProcess:
    """A handle on the maintenance child: sends a pass, streams its steps, returns its reply."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one pass at a time through the pipe
        self._proc: subprocess.Popen[str] | None = None
        self._owner = os.getpid()  # a forked copy of this handle starts its own child

    @property
    def pid(self) -> int | None:
        """The child's pid while it runs (None before the first pass or after it died)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _start(self) -> subprocess.Popen[str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH", "")) if p)
        env.setdefault("LANCE_CPU_THREADS", "1")  # compaction: one core, the writers keep theirs
        # LanceDB's async runtime (where its rewriting, encoding and commits run) on one worker
        # thread too: the pass keeps its priority (a lower one loses the commit race on the
        # journal, `maintenance_worker.NICENESS`) but takes at most about one core; with a
        # worker per core, B's writes during A's pass waited for the CPU (bench/scale.py
        # section 2: p99/p50 5.2x and 3.4x with one worker, 19x and 13x without, load ~10)
        env.setdefault("TOKIO_WORKER_THREADS", "1")
        proc = subprocess.Popen(
            [sys.executable, "-m", _WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=env,
            close_fds=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()  # `{"ready": pid}` once its imports are done
        if not line.startswith('{"ready"'):
            code = _reap(proc)
            raise MaintenanceDied(
                f"the maintenance process did not start (exit code {code}; its stderr is this "
                "process's)"
            )
        return proc

    def _running(self) -> subprocess.Popen[str]:
        """The child, started now if there is none (caller holds the lock). One that ended on
        its own since the last pass (killed while idle) is reported, and replaced next time."""
        if self._owner != os.getpid():
            self._proc, self._owner = None, os.getpid()
        proc = self._proc
        if proc is not None and proc.poll() is not None:
            self._proc = None
            _reap(proc)
            raise MaintenanceDied(
                f"the maintenance process (pid {proc.pid}) ended between passes (exit code "
                f"{proc.returncode}); the next pass starts a new one"
            )
        if self._proc is None:
            self._proc = self._start()
        return self._proc

    def warm_up(self) -> None:
        """Start the child ahead of its first pass and wait until it is ready (its imports
        take a second or two, more on a loaded machine)."""
        with self._lock:
            self._running()

    def run(self, request: dict[str, Any], on_step: Callable[[dict[str, Any]], None]) -> dict:
        """Send one pass and wait for its reply; `on_step` sees each step as it starts.

        Raises `MaintenanceDied` when the child ends first (it is started again next time)."""
        with self._lock:
            proc = self._running()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
                while True:
                    line = proc.stdout.readline()
                    if not line:
                        raise EOFError("no reply")
                    message = json.loads(line)
                    if "step" in message:
                        on_step(message)
                        continue
                    return message
            except (OSError, EOFError, ValueError) as exc:
                code = _reap(proc)
                self._proc = None
                raise MaintenanceDied(
                    f"the maintenance process (pid {proc.pid}) ended mid-pass "
                    f"(exit code {code}: {exc}); the next pass starts a new one"
                ) from exc

    def close(self, timeout: float = 30.0) -> None:
        """End the child: its stdin closes, it finishes the pass under way and exits; killed
        after `timeout` seconds."""
        proc = self._proc
        if proc is None or self._owner != os.getpid():
            return
        self._proc = None
        _close(proc.stdin)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        _close(proc.stdout)


def _close(stream: IO[str] | None) -> None:
    if stream is not None:
        with contextlib.suppress(OSError):
            stream.close()


def _reap(proc: subprocess.Popen[str]) -> int | None:
    """The exit code of a child that stopped answering (killed if it still runs)."""
    try:
        return proc.wait(2)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(5)
    finally:
        _close(proc.stdin)
        _close(proc.stdout)


_SHARED: MaintenanceProcess | None = None
_SHARED_LOCK = threading.Lock()


def shared_process() -> MaintenanceProcess:
    """The maintenance process of this interpreter (every storage handle sends it its passes)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = MaintenanceProcess()
        return _SHARED


def close_shared(timeout: float = 30.0) -> None:
    """End the shared maintenance process, if one was started (at interpreter exit)."""
    with _SHARED_LOCK:
        process = _SHARED
    if process is not None:
        process.close(timeout)
