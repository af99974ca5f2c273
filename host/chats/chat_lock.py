"""One writer per chat at a time, across the processes of one host.

A chat's messages live in one file that every process on the data dir reads once and caches
(`host.chats.chat_files.Chat`). Two processes appending to it in turn would each write from their
own stale copy; so a process takes the chat's lock around every change of a chat, and re-reads the
chat when the file moved on while it did not hold the lock (`Chat.refresh`).

- `ChatLock` is the interface: ``await acquire()`` (waits up to a timeout, then raises
  `ChatBusy`), ``release()``, ``locked()``, and ``async with``. A lease on a shared store (a
  conditional write to DynamoDB or S3, for hosts on several machines) implements the same.
- `FileChatLock` is the local one: an exclusive ``flock`` on one lock file per chat under
  ``<data_dir>/chats/locks/``. The holder writes its pid into the file, so a refused process can
  say who holds it. A waiter first takes the chat's turnstile file, then the lock, then lets the
  turnstile go: a process that releases the lock and asks again queues behind the waiter instead
  of taking the lock back at once (two processes serving one chat take turns). Every try is a
  non-blocking ``flock``; between tries the waiter sleeps on the event loop, which never blocks.
- `CombinedChatLock` is what a process uses: an `asyncio.Lock` for the requests of this process
  (they queue without limit, as before), then the cross-process lock; on getting it, a callback
  brings the process's cached state of the chat up to date.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Protocol, runtime_checkable

from host.chats.chat_files import chat_file_name
from host.settings.settings_schema import setting, settings_room

__all__ = [
    "CHAT_LOCK_TIMEOUT",
    "ChatBusy",
    "ChatLock",
    "CombinedChatLock",
    "FileChatLock",
    "lock_folder",
]

CHAT_LOCK_TIMEOUT = "chat_lock_timeout_s"
DEFAULT_TIMEOUT_S = 30.0
#: the longest pause between two tries of a waiting process (the first ones are shorter)
MAX_PAUSE_S = 0.05


@settings_room
class ChatLockKeys:
    chat_lock_timeout_s: float = setting(
        DEFAULT_TIMEOUT_S,
        "Seconds a process waits for a chat another process on the same data dir is writing (the "
        "proxy holds a chat from its request until the answer is stored); then the request is "
        "refused with 503 CHAT_BUSY naming the chat and the holder's pid.",
        minimum=0,
    )


class ChatBusy(Exception):
    """Another process held the chat past the timeout; the message names the chat and, when the
    lock file says it, the holder's pid."""

    code = "CHAT_BUSY"

    def __init__(self, chat_id: str, timeout_s: float, holder: int | None) -> None:
        who = f"process {holder}" if holder is not None else "another process"
        super().__init__(
            f"chat {chat_id!r} is being written by {who} on this data dir; waited "
            f"{timeout_s:g} s (chat_lock_timeout_s), retry later"
        )
        self.chat_id = chat_id
        self.timeout_s = timeout_s
        self.holder = holder


@runtime_checkable
class ChatLock(Protocol):
    """One chat's write lock. ``acquire`` raises `ChatBusy` when it cannot get it in time."""

    async def acquire(self) -> None: ...

    def release(self) -> None: ...

    def locked(self) -> bool: ...

    async def __aenter__(self) -> None: ...

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None: ...


def lock_folder(data_dir: Path) -> Path:
    """Where the chats' lock files are (next to the chat files)."""
    return Path(data_dir) / "chats" / "locks"


class _LockContext:
    """``async with lock:`` for any lock with ``acquire`` and ``release``."""

    async def acquire(self) -> None:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()


class FileChatLock(_LockContext):
    """The chat's lock file under `folder`, held with ``flock`` (see the module). One object per
    chat and process; the process's own requests must already be serialised (`CombinedChatLock`),
    since a second open file of one process would wait on the first."""

    def __init__(self, folder: Path, chat_id: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        stem = chat_file_name(chat_id).removesuffix(".jsonl")
        self.chat_id = chat_id
        self.path = Path(folder) / f"{stem}.lock"
        self.turnstile = Path(folder) / f"{stem}.wait"
        self.timeout_s = timeout_s
        self._fd: int | None = None
        self._held = False

    def locked(self) -> bool:
        """Whether this process holds the lock."""
        return self._held

    async def acquire(self) -> None:
        """Take the lock, waiting up to ``timeout_s`` for another process; `ChatBusy` then."""
        if self._held:
            raise RuntimeError(f"chat {self.chat_id!r}: the lock file is already held")
        deadline = time.monotonic() + self.timeout_s
        fd = _open(self.path)
        if fd is None:  # a folder that cannot be written: no process can change the chat here
            self._held = True
            return
        gate = _open(self.turnstile)
        try:
            if gate is not None:
                await _wait(gate, deadline)
            await _wait(fd, deadline)
        except TimeoutError:
            holder = _holder(self.path)
            os.close(fd)
            raise ChatBusy(self.chat_id, self.timeout_s, holder) from None
        except BaseException:
            os.close(fd)
            raise
        finally:
            if gate is not None:
                os.close(gate)  # closing the file lets its flock go
        self._take(fd)

    def _take(self, fd: int) -> None:
        self._fd, self._held = fd, True
        with contextlib.suppress(OSError):  # the pid is a courtesy (a full disk may refuse it)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        """Let the lock go (closing the file releases the ``flock``)."""
        if not self._held:
            raise RuntimeError(f"chat {self.chat_id!r}: release of a lock not held")
        fd, self._fd, self._held = self._fd, None, False
        if fd is not None:
            os.close(fd)


class CombinedChatLock(_LockContext):
    """The lock a process takes around a change of one chat: its own requests first (an
    `asyncio.Lock`, no timeout), then `shared` (the cross-process `ChatLock`); `on_acquire` runs
    once both are held (the process refreshes what it cached of the chat). It may be released
    by another task than the one that took it (the proxy releases after storing the answer)."""

    def __init__(
        self, shared: ChatLock, on_acquire: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.local = asyncio.Lock()
        self.shared = shared
        self.on_acquire = on_acquire

    def locked(self) -> bool:
        return self.local.locked()

    async def acquire(self) -> None:
        await self.local.acquire()
        try:
            await self.shared.acquire()
        except BaseException:
            self.local.release()
            raise
        try:
            if self.on_acquire is not None:
                await self.on_acquire()
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        try:
            if self.shared.locked():
                self.shared.release()
        finally:
            self.local.release()


def _open(path: Path) -> int | None:
    """The lock file opened for ``flock``, made when missing; None when the folder cannot be
    written and the file does not exist (a read-only data dir)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC):
            raise
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


async def _wait(fd: int, deadline: float) -> None:
    """Take ``flock`` on `fd`, trying again with short growing pauses; TimeoutError past
    `deadline`."""
    pause = 0.002
    while not _try(fd):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        await asyncio.sleep(min(pause, left))
        pause = min(pause * 2, MAX_PAUSE_S)


def _holder(path: Path) -> int | None:
    """The pid the lock file names (None when it names none)."""
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
