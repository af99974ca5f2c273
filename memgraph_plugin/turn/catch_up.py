"""Catch-up compaction off the turn path: the backlog of an imported (or long uncompacted) graph.

A turn compacts what its own message made due (a group or two) inline, as before. When more
than `TURN_GROUPS` groups are due at once (after an import of a large graph: thousands), the
turn answers from the graph as it is and this background task works the backlog off, a chunk of
`CHUNK_GROUPS` groups at a time between turns (never while one of the chat's turns runs), each
chunk its own commit through a fresh session (so a turn's
write lands between two chunks, and a chunk whose groups a turn changed is refused by the write
API and tried again on the next chunk's candidates). What is left is written for
``memgraph-host status`` (`chats/pending_work.py`) and removed once nothing is.

Where several processes serve one data dir, a chunk holds the chat's lock (`use_lock`: the
proxy's per-chat lock, across processes), so it never commits beside another process's turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..chats.pending_work import write_pending
from .auto_compaction import compact_leftovers, compaction_enabled, due_groups

log = logging.getLogger(__name__)

#: Groups a turn compacts inline; a larger backlog goes to the background.
TURN_GROUPS = 16
#: Groups per background chunk: the longest a turn starting mid-chunk waits for the chat.
CHUNK_GROUPS = 8
#: Seconds after a turn's step ends before a chunk starts: a turn's next step (the recall after
#: its message, the answer's extraction after the recall) comes within it and finds the chat
#: free, where a chunk that started in the gap made it wait (a 100k import's first turn).
QUIET_S = 0.25

SessionOpener = Callable[[str], Awaitable[Any]]
ChatLocker = Callable[[str], AbstractAsyncContextManager[Any]]


class CatchUp:
    """The background compaction tasks of one host's pipeline, one per chat at most."""

    def __init__(self, host: Any, open_session: SessionOpener) -> None:
        self.host = host
        self._open = open_session
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._left: dict[str, int] = {}
        self._turns: dict[str, int] = {}  # turns under way per chat
        self._quiet: dict[str, asyncio.Event] = {}  # set while no turn of the chat runs
        self._ended: dict[str, float] = {}  # when the chat's last turn step ended (loop time)
        self._lock: ChatLocker | None = None

    def use_lock(self, lock: ChatLocker) -> None:
        """Hold ``lock(chat_id)`` around each chunk (the chat's lock across processes)."""
        self._lock = lock

    def _held(self, chat_id: str) -> AbstractAsyncContextManager[Any]:
        return self._lock(chat_id) if self._lock is not None else contextlib.nullcontext()

    @contextlib.contextmanager
    def turn(self, chat_id: str) -> Iterator[None]:
        """Around a turn's extraction or recall: no chunk of the chat's backlog starts meanwhile."""
        self._turns[chat_id] = self._turns.get(chat_id, 0) + 1
        self._event(chat_id).clear()
        try:
            yield
        finally:
            left = self._turns[chat_id] = self._turns[chat_id] - 1
            if left <= 0:
                self._turns.pop(chat_id, None)
                self._ended[chat_id] = asyncio.get_running_loop().time()
                self._event(chat_id).set()

    def _event(self, chat_id: str) -> asyncio.Event:
        event = self._quiet.get(chat_id)
        if event is None:
            event = self._quiet[chat_id] = asyncio.Event()
            event.set()
        return event

    def running(self, chat_id: str) -> bool:
        """Whether the chat's backlog is being worked off."""
        task = self._tasks.get(chat_id)
        return task is not None and not task.done()

    def pending(self, chat_id: str) -> int:
        """Groups due at the last count (0: none, or no backlog known)."""
        return self._left.get(chat_id, 0) if self.running(chat_id) else 0

    def backlog(self, session: Any) -> int:
        """The groups due now when that is more than a turn compacts inline, else 0."""
        if not compaction_enabled(self.host):
            return 0
        due = due_groups(session)
        return due if due > TURN_GROUPS else 0

    def start(self, chat_id: str, due: int) -> None:
        """Work the chat's backlog off in the background (no-op while it already is)."""
        if self.running(chat_id):
            return
        self._left[chat_id] = due
        self._note(chat_id, due)
        self._tasks[chat_id] = asyncio.get_running_loop().create_task(
            self._run(chat_id), name=f"catch-up compaction {chat_id!r}"
        )

    async def wait(self, chat_id: str | None = None) -> None:
        """Until the backlog of `chat_id` (or of every chat) is worked off."""
        tasks = [t for c, t in self._tasks.items() if chat_id is None or c == chat_id]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def stop(self) -> None:
        """Cancel every task (host shutdown): each chunk is its own commit, so the graph is
        left at a chunk's end or start; the next host picks the rest up at its first turn."""
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()

    async def _run(self, chat_id: str) -> None:
        made_total = 0
        finished = False
        try:
            while True:
                await self._quiet_spell(chat_id)
                async with self._held(chat_id):
                    session = await self._open(chat_id)
                    if session is None:
                        break
                    made = await compact_leftovers(self.host, session, limit=CHUNK_GROUPS)
                    left = due_groups(session)
                made_total += len(made)
                self._left[chat_id] = left
                self._note(chat_id, left)
                if not made or not left:
                    break
            finished = True
            log.info("chat %s: catch-up compaction made %d rollups", chat_id, made_total)
        except Exception:
            finished = True
            log.exception("chat %s: catch-up compaction failed; the next turn retries", chat_id)
        finally:  # cancelled (shutdown): the file stays, naming a process that is gone
            self._left.pop(chat_id, None)
            if finished:
                self._note(chat_id, 0)

    async def _quiet_spell(self, chat_id: str) -> None:
        """Until no turn of the chat runs and none ended in the last `QUIET_S` seconds (a turn
        queued meanwhile goes first, and so does its next step)."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0)
            await self._event(chat_id).wait()
            since = loop.time() - self._ended.get(chat_id, float("-inf"))
            if since >= QUIET_S:
                return
            await asyncio.sleep(QUIET_S - since)

    def _note(self, chat_id: str, groups: int) -> None:
        try:
            write_pending(self.host.data_dir, chat_id, {"compaction_groups": groups})
        except OSError as exc:  # a status file is no reason to stop the work
            log.debug("chat %s: pending work not recorded: %s", chat_id, exc)
