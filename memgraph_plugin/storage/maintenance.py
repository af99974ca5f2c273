"""Background maintenance of one `LanceStorage`: snapshots, compaction, cleanup, history pruning.

A commit only notes what it did (`note_commit`, a few dict operations); a daemon thread per
storage handle does the work when enough commits piled up (`storage_optimize_every`, a chat
`storage_checkpoint_every` commits past its snapshot) and at least every
`storage_maintenance_seconds`, so no caller's write waits for it. LanceDB's retryable commit
conflicts (another process compacting or deleting at the same moment) are retried with backoff
and logged at debug level; a pass that still fails is left to the next one.
"""

from __future__ import annotations

import atexit
import logging
import random
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

_ALIVE: weakref.WeakSet[Maintenance] = weakref.WeakSet()


def is_conflict(exc: BaseException) -> bool:
    """Whether LanceDB refused a commit because another one got in first (retrying helps)."""
    text = str(exc).lower()
    return "conflict" in text or "preempted" in text


def retry_conflicts(
    fn: Callable[[], T], what: str, *, attempts: int = 6, base_delay: float = 0.05
) -> T | None:
    """`fn()`, retried with jittered exponential backoff while LanceDB reports a commit
    conflict; None when every attempt conflicted (the next maintenance pass tries again).
    Any other error propagates."""
    for attempt in range(attempts):
        try:
            return fn()
        except Exception as exc:
            if not is_conflict(exc):
                raise
            if attempt == attempts - 1:
                log.info("%s: still conflicting after %d attempts; next pass retries", what,
                         attempts)
                return None
            delay = min(2.0, base_delay * 2**attempt) * (0.5 + random.random())
            log.debug("%s: commit conflict (%s); retry in %.2f s", what, exc, delay)
            time.sleep(delay)
    return None


class Maintenance:
    """The maintenance schedule and thread of one storage handle."""

    def __init__(self, storage: Any) -> None:
        self._storage = weakref.ref(storage)
        self.interval = float(storage.settings.maintenance_seconds)
        self._cond = threading.Condition()
        self._run_lock = threading.Lock()  # one pass at a time (thread or `run_now`)
        self._due: dict[str, int] = {}  # chat -> newest version this handle committed
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._busy = False
        self.passes = 0  # completed passes (tests and the bench wait on it)
        self.last_error: str | None = None

    # ---------------------------------------------------------------- caller side

    def note_commit(self, chat_id: str, version: int) -> None:
        """Called after each commit (cheap): wakes the thread when work is due."""
        storage = self._storage()
        if storage is None:
            return
        with self._cond:
            self._due[chat_id] = version
            if self._stopping:
                return
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="memgraph-storage-maintenance", daemon=True
                )
                _ALIVE.add(self)
                self._thread.start()
            if self._work_ready(storage):
                self._cond.notify_all()

    def _work_ready(self, storage: Any) -> bool:
        every = storage.settings.checkpoint_every
        if storage._commits_since_optimize >= storage.settings.optimize_every:
            return True
        known = storage._last_checkpoint
        return any(
            chat not in known or version - known[chat] >= every
            for chat, version in self._due.items()
        )

    def pending(self) -> bool:
        """Whether work is due or a pass runs."""
        storage = self._storage()
        with self._cond:
            return self._busy or (storage is not None and self._work_ready(storage))

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Wait until no pass runs and none is due (tests, the bench); False on timeout."""
        end = time.monotonic() + timeout
        while self.pending():
            if time.monotonic() > end:
                return False
            with self._cond:
                self._cond.wait(0.02)
        return True

    def run_now(self, *, optimize: bool = True) -> None:
        """One pass on the caller's thread: every due snapshot, then compaction (`optimize`:
        even when fewer commits than `storage_optimize_every` piled up)."""
        storage = self._storage()
        if storage is not None:
            self._pass(storage, force_optimize=optimize)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the thread; a pass under way finishes first."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # ---------------------------------------------------------------- the thread

    def _loop(self) -> None:
        last = time.monotonic()
        while True:
            with self._cond:
                storage = self._storage()
                if storage is None or self._stopping:
                    return
                ready = self._work_ready(storage)
                del storage  # never held while sleeping: a dropped storage ends the thread
                if not ready:
                    self._cond.wait(max(0.05, self.interval - (time.monotonic() - last)))
                storage = self._storage()
                if storage is None or self._stopping:
                    return
                periodic = time.monotonic() - last >= self.interval
                if not (periodic or self._work_ready(storage)):
                    continue
                self._busy = True
            try:
                self._pass(storage, force_optimize=periodic and storage._commits_since_optimize > 0)
            finally:
                del storage
                last = time.monotonic()
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _pass(self, storage: Any, *, force_optimize: bool) -> None:
        with self._run_lock:
            with self._cond:
                due = dict(self._due)
            for chat_id, version in due.items():
                try:
                    if storage.snapshot_due(chat_id, version):
                        retry_conflicts(
                            lambda c=chat_id: storage.snapshot_sync(c), f"snapshot of {chat_id!r}"
                        )
                    with self._cond:
                        if self._due.get(chat_id) == version:
                            del self._due[chat_id]
                except Exception as exc:  # the next pass tries again; never fails a writer
                    self._failed(f"snapshot of chat {chat_id!r}", exc)
            if force_optimize or storage._commits_since_optimize >= storage.settings.optimize_every:
                try:
                    storage.optimize_sync()
                except Exception as exc:
                    self._failed("compaction", exc)
            self.passes += 1

    def _failed(self, what: str, exc: Exception) -> None:
        self.last_error = f"{what}: {exc}"
        log.warning("storage maintenance: %s failed (%s); the next pass retries", what, exc,
                    exc_info=log.isEnabledFor(logging.DEBUG))


@atexit.register
def _stop_all() -> None:
    """Let passes under way finish before the interpreter tears LanceDB down."""
    for maintenance in list(_ALIVE):
        maintenance.stop(timeout=30.0)

