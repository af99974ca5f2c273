"""Background maintenance of one `LanceStorage`: snapshots, compaction, cleanup, history pruning.

A commit only notes what it did (`note_commit`, a few dict operations); a daemon thread per
storage handle schedules a pass when enough commits piled up (`storage_optimize_every`, a chat
`storage_checkpoint_every` commits past its snapshot) and at least every
`storage_maintenance_seconds`, and hands it to the maintenance process
(`maintenance_process.py`): the thread only waits on a pipe, so no caller's write waits for a
pass or for the GIL it would hold. A pass that fails (or whose process is killed) is reported
(`last_error`, a warning) and retried by the next pass, after a back-off. LanceDB's retryable
commit conflicts (another process compacting or deleting at the same moment) are retried with
backoff and logged at debug level; a pass that still fails is left to the next one.
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

import attrs

from memgraph_plugin.storage.maintenance.maintenance_process import (
    MaintenanceDied,
    close_shared,
    shared_process,
)

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
                log.info(
                    "%s: still conflicting after %d attempts; next pass retries", what, attempts
                )
                return None
            delay = min(2.0, base_delay * 2**attempt) * (0.5 + random.random())
            log.debug("%s: commit conflict (%s); retry in %.2f s", what, exc, delay)
            time.sleep(delay)
    return None


#: back-off after a failed pass: the first retry waits this long, doubling up to the interval
_RETRY_DELAY = 0.5


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
        self._failures = 0  # passes failed in a row (back-off)
        self._retry_at = 0.0
        self.passes = 0  # completed passes (tests and the bench wait on it)
        self.last_error: str | None = None
        #: the tables the last pass compacted (a background pass compacts only those that need
        #: it: `table_compaction.py`)
        self.last_compacted: tuple[str, ...] = ()
        #: called on the maintenance thread as each step starts in the maintenance process,
        #: with what it is and that process's pid (tests, the bench)
        self.on_step: Callable[[str, int], None] | None = None

    # ---------------------------------------------------------------- caller side

    def start(self, *, wait: bool = False) -> None:
        """Start the thread and the maintenance process now rather than at the first commit
        (`wait`: until the process is ready; its start takes seconds on a loaded machine, and
        fragments pile up meanwhile)."""
        with self._cond:
            self._start_thread()
        if wait:
            shared_process().warm_up()

    def _start_thread(self) -> None:
        if self._thread is None and not self._stopping:
            self._thread = threading.Thread(
                target=self._loop, name="memgraph-storage-maintenance", daemon=True
            )
            _ALIVE.add(self)
            self._thread.start()

    def note_commit(self, chat_id: str, version: int) -> None:
        """Called after each commit (cheap): wakes the thread when work is due."""
        storage = self._storage()
        if storage is None:
            return
        with self._cond:
            self._due[chat_id] = version
            if self._stopping:
                return
            self._start_thread()
            if self._work_ready(storage):
                self._cond.notify_all()

    def _work_ready(self, storage: Any) -> bool:
        every = storage.settings.checkpoint_every
        if storage._commits_since_optimize >= storage.settings.optimize_every:
            return True
        return any(
            version - storage.checkpointed_version(chat) >= every
            if storage.checkpoint_known(chat)
            else True
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
        """One pass on the caller's thread and in this process (an explicit request, e.g. the
        CLI): every due snapshot, then compaction (`optimize`: even when fewer commits than
        `storage_optimize_every` piled up)."""
        storage = self._storage()
        if storage is not None:
            self._pass(storage, force_optimize=optimize, remote=False)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the thread; a pass under way finishes first."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def process_pid(self) -> int | None:
        """The pid of the maintenance process while it runs (None before the first pass)."""
        return shared_process().pid

    # ---------------------------------------------------------------- the thread

    def _loop(self) -> None:
        last = time.monotonic()
        try:
            shared_process().warm_up()  # the first pass need not wait for its start
        except (OSError, MaintenanceDied) as exc:
            self._failed("starting the maintenance process", exc)
        while True:
            with self._cond:
                storage = self._storage()
                if storage is None or self._stopping:
                    return
                now = time.monotonic()
                ready = self._work_ready(storage) and now >= self._retry_at
                del storage  # never held while sleeping: a dropped storage ends the thread
                if not ready:
                    wake = max(0.05, self.interval - (now - last))
                    if self._retry_at > now:
                        wake = min(wake, max(0.05, self._retry_at - now))
                    self._cond.wait(wake)
                storage = self._storage()
                if storage is None or self._stopping:
                    return
                periodic = time.monotonic() - last >= self.interval
                if time.monotonic() < self._retry_at or not (periodic or self._work_ready(storage)):
                    continue
                self._busy = True
            try:
                self._pass(
                    storage,
                    force_optimize=periodic and storage._commits_since_optimize > 0,
                    remote=True,
                )
            finally:
                del storage
                last = time.monotonic()
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _pass(self, storage: Any, *, force_optimize: bool, remote: bool) -> None:
        with self._run_lock:
            with self._cond:
                due = dict(self._due)
            optimize = (
                force_optimize or storage._commits_since_optimize >= storage.settings.optimize_every
            )
            failed = (
                self._remote(storage, due, optimize)
                if remote
                else self._local(storage, due, optimize)
            )
            try:  # the pass's own journal versions, known before a commit meets them
                storage.journal.classify_foreign()
            except Exception as exc:  # only an optimisation: commits read back instead
                log.debug("classifying the journal's new versions failed: %s", exc)
            with self._cond:
                for chat_id, version in due.items():
                    if chat_id not in failed and self._due.get(chat_id) == version:
                        del self._due[chat_id]
                if failed:
                    self._failures += 1
                    delay = min(
                        max(self.interval, _RETRY_DELAY), _RETRY_DELAY * 2 ** (self._failures - 1)
                    )
                    self._retry_at = time.monotonic() + delay
                else:
                    self._failures, self._retry_at = 0, 0.0
            self.passes += 1

    def _local(self, storage: Any, due: dict[str, int], optimize: bool) -> set[str]:
        """The pass on this thread; returns the chats whose snapshot failed."""
        failed: set[str] = set()
        for chat_id, version in due.items():
            try:
                if storage.snapshot_due(chat_id, version):
                    retry_conflicts(
                        lambda c=chat_id: storage.snapshot_sync(c), f"snapshot of {chat_id!r}"
                    )
            except Exception as exc:  # the next pass tries again; never fails a writer
                failed.add(chat_id)
                self._failed(f"snapshot of chat {chat_id!r}", exc)
        if optimize:
            try:
                self.last_compacted = tuple(storage.optimize_sync())
            except Exception as exc:
                failed.add("")
                self._failed("compaction", exc)
        return failed

    def _remote(self, storage: Any, due: dict[str, int], optimize: bool) -> set[str]:
        """The pass in the maintenance process; returns the chats whose snapshot failed ("" for
        the whole pass: compaction, or the process died)."""
        request = {
            "settings": attrs.asdict(storage.settings),
            "due": sorted(due.items()),
            "known": {
                c: storage.checkpointed_version(c) for c in due if storage.checkpoint_known(c)
            },
            "optimize": optimize,
        }
        if optimize:
            storage._commits_since_optimize = 0
        try:
            reply = shared_process().run(request, self._step)
        except Exception as exc:  # died, or could not start: reported, retried, writes go on
            if optimize:  # compaction is owed still
                storage._commits_since_optimize = max(
                    storage._commits_since_optimize, storage.settings.optimize_every
                )
            self._failed("maintenance pass", exc)
            return {"", *due}
        if optimize:
            self.last_compacted = tuple(reply.get("compacted", ()))
        for name, level, message in reply.get("logs", ()):
            logging.getLogger(name).log(level, "%s (maintenance process)", message)
        for chat_id, version in reply.get("checkpoints", {}).items():
            storage.note_checkpoint(chat_id, int(version))
        failed: set[str] = set()
        for what, error in reply.get("failures", ()):
            self._failed(what, RuntimeError(error))
            failed.add(next((c for c in due if what == f"snapshot of chat {c!r}"), ""))
        return failed

    def _step(self, message: dict[str, Any]) -> None:
        callback = self.on_step
        if callback is not None:
            callback(str(message["step"]), int(message["pid"]))

    def _failed(self, what: str, exc: Exception) -> None:
        self.last_error = f"{what}: {exc}"
        log.warning(
            "storage maintenance: %s failed (%s); the next pass retries",
            what,
            exc,
            exc_info=log.isEnabledFor(logging.DEBUG),
        )


@atexit.register
def _stop_all() -> None:
    """Let passes under way finish before the interpreter tears LanceDB down, then end the
    maintenance process."""
    for maintenance in list(_ALIVE):
        maintenance.stop(timeout=30.0)
    close_shared(timeout=30.0)
