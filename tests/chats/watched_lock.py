"""An asyncio lock that tells a test when a task has to wait for it: the loaded-chats tests put
it in a chat's place (`LoadedChat.lock`) to start a race exactly when a second task queues on the
lock a first one holds, instead of sleeping and hoping the second task got that far."""

from __future__ import annotations

import asyncio
from typing import Literal


class WatchedLock(asyncio.Lock):
    """`asyncio.Lock`; `contended` is set when an `acquire` finds it held (the caller then waits:
    nothing runs between the check and its queueing)."""

    def __init__(self) -> None:
        super().__init__()
        self.contended = asyncio.Event()

    async def acquire(self) -> Literal[True]:
        if self.locked():
            self.contended.set()
        return await super().acquire()


async def runs_until_blocked(task: asyncio.Future, lock: WatchedLock) -> None:
    """Let `task` run as far as it can: until it waits for `lock`, or ends (a task stuck
    anywhere else fails the test after a minute rather than hang it)."""
    blocked = asyncio.ensure_future(lock.contended.wait())
    try:
        done, _ = await asyncio.wait(
            {task, blocked}, timeout=60, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        blocked.cancel()
    assert done, "the task neither waited for the lock nor ended"
