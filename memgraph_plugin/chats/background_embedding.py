"""Embedding in the background: nodes without a stored vector of the current profile (a chat
stored under another profile, or whose snapshot lost its vectors) are embedded off the turn
path. A search meanwhile answers from the vectors the index has, and `memgraph-host status`
says how many nodes are left (`pending_work.py`).

Bounded chunks of `CHUNK` nodes, each embedded on a worker thread, then put into the index under
the chat's commit lock (a write's own vectors are never overwritten by an older text's). A
profile's Python holds the interpreter while it embeds, slowing a turn that runs meanwhile; so a
chunk starts in a pause of the chat's turns (`QUIET` seconds since a turn last opened, searched
or committed it: `LoadedChat.used_at`), or, while turns keep coming, `BUSY_PACE` seconds after
the last one, and after a chunk the task rests as long as the chunk took. The bookkeeping per
chunk is the chunk's own (the count left is noted about once a second). The task ends when
nothing is left, or when the chat is no longer the loaded one (unloaded, reloaded).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

from memgraph_plugin.chats.loaded_chat import UNSNAPSHOTTED, LoadedChat
from memgraph_plugin.chats.pending_work import write_pending

log = logging.getLogger(__name__)

#: More nodes than this without a vector: embedded in the background, not by the search.
BACKGROUND_NODES = 2048
#: nodes embedded at once: a few milliseconds of a profile's work (hashing: ~5 ms)
CHUNK = 128
#: seconds without a turn on the chat after which a chunk starts
QUIET = 0.1
#: seconds between two chunks while the chat's turns leave no pause
BUSY_PACE = 0.25
#: seconds between two looks for a pause
RECHECK = 0.05
#: seconds between two notes of the count left (`pending_work.py`)
NOTE_EVERY = 1.0


def start(chats: Any, chat: LoadedChat) -> None:
    """Embed `chat.unembedded` in the background (no-op while a task already does)."""
    task = chat.embedding
    if task is not None and not task.done():
        return
    _note(chats, chat)
    chat.embedding = asyncio.get_running_loop().create_task(
        _run(chats, chat), name=f"embedding {chat.chat_id!r}"
    )


async def wait(chat: LoadedChat | None) -> None:
    """Until the chat's background embedding (if any) ended."""
    task = None if chat is None else chat.embedding
    if task is not None:
        await asyncio.gather(task, return_exceptions=True)


async def _run(chats: Any, chat: LoadedChat) -> None:
    embedder = chats.embedder
    done = 0
    noted = time.monotonic()
    try:
        last = time.monotonic()
        while chat.unembedded and chats.cached(chat.chat_id) is chat and chat.index is not None:
            await _pause_in_turns(chat, last)
            if not chat.unembedded or chats.cached(chat.chat_id) is not chat:
                break
            ids = chat.unembedded[:CHUNK]
            nodes = [n for n in map(chat.store.node, ids) if n is not None]
            started = time.perf_counter()
            block = await asyncio.to_thread(embedder, nodes) if nodes else None
            spent = time.perf_counter() - started
            async with chat.lock:
                _taken(chat, ids)
                fresh = [n for n in nodes if chat.store.node(n.id) is n]  # not rewritten since
                if block is not None and fresh and chat.index is not None:
                    if len(fresh) != len(nodes):
                        block = await asyncio.to_thread(embedder, fresh)
                    embedder.apply(chat.index, fresh, block)
                    chat.dirty.update(dict.fromkeys((n.id for n in fresh), UNSNAPSHOTTED))
            done += len(ids)
            if time.monotonic() - noted >= NOTE_EVERY:
                _note(chats, chat)
                noted = time.monotonic()
            await asyncio.sleep(spent)
            last = time.monotonic()
        log.info("chat %s: %d nodes embedded in the background", chat.chat_id, done)
    except Exception:
        log.exception("chat %s: background embedding failed; searches embed the rest", chat.chat_id)
    finally:
        if not chat.unembedded or chats.cached(chat.chat_id) is not chat:
            _note(chats, chat, left=0)
        else:
            _note(chats, chat)


async def _pause_in_turns(chat: LoadedChat, last: float) -> None:
    """Until the chat's turns pause (`QUIET`), or `BUSY_PACE` seconds after `last` (the end
    of the previous chunk's rest) while they do not."""
    while True:
        now = time.monotonic()
        wait = min(QUIET - (now - chat.used_at), BUSY_PACE - (now - last))
        if wait <= 0:
            return
        await asyncio.sleep(min(wait, RECHECK))


def _taken(chat: LoadedChat, ids: list[str]) -> None:
    """Drop `ids` from the chat's unembedded ids: the front of the list, unless a search
    changed the list meanwhile."""
    front = chat.unembedded
    if front[: len(ids)] == ids:
        del front[: len(ids)]
    else:
        taken = set(ids)
        chat.unembedded = [i for i in front if i not in taken]


def _note(chats: Any, chat: LoadedChat, *, left: int | None = None) -> None:
    folder: Path | None = getattr(chats, "pending_dir", None)
    if folder is None:
        return
    count = len(chat.unembedded) if left is None else left
    try:
        write_pending(folder, chat.chat_id, {"embedding_nodes": count})
    except OSError as exc:
        log.debug("chat %s: pending work not recorded: %s", chat.chat_id, exc)
