"""A block of a chat's pending messages extracted as one journal append, and again on the graph
as stored when that append met another writer's commit.

A proxied turn's messages (or up to `BLOCK` of a front end's backlog) are extracted inside the
memory graph's deferred block (`MemoryGraph.deferred_commits`): each message keeps its own
commit and version, and all are persisted in one append when the block ends. When that append
finds the chat moved on (`ConflictError`: another process or host committed it first; nothing
of the block was stored and the cached graph was dropped), the whole block is extracted again
on the newest graph, a few times, instead of the turn being lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any

from memgraph_plugin.storage.errors import ConflictError

log = logging.getLogger("memgraph_plugin.proxy.ledger.chat_memory")

#: tries of one block whose append meets another writer's commit
CONFLICT_TRIES = 4


async def extract_block(
    pipeline: Any,
    chat_id: str,
    block: Sequence[Any],
    *,
    one_session_from: int,
    check: Callable[[], None],
) -> tuple[int, Exception | None]:
    """Extract `block` (messages in order) as one append; `check` runs before each message
    (the lease's fencing). Returns how many are stored and the error of the message that
    failed (None when none did): the messages before it are stored. A block of more than
    `one_session_from` messages writes through one session (an ingest's speed)."""
    service = getattr(pipeline, "service", None)
    for attempt in range(1, CONFLICT_TRIES + 1):
        done, failure = 0, None
        deferred = service is not None and len(block) > 1
        try:
            async with service.deferred_commits(chat_id) if deferred else nullcontext():
                try:
                    one = len(block) > one_session_from
                    session = await pipeline.open_session(chat_id) if one else None
                    for message in block:
                        check()
                        await pipeline.extract(chat_id, message, session=session)
                        done += 1
                        await asyncio.sleep(0)  # other chats' requests between two messages
                except Exception as exc:  # the block ends: what came before it is stored
                    failure = exc
        except ConflictError as exc:
            if attempt == CONFLICT_TRIES or not deferred:
                raise
            log.info("proxy: chat %s: %s; extracting its %d message(s) again", chat_id, exc,
                     len(block))  # fmt: skip
            continue
        return done, failure
    raise AssertionError("unreachable")
