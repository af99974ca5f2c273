"""Embedding in the background: nodes without a stored vector of the current profile (a chat
stored under another profile, or whose snapshot lost its vectors) are embedded off the turn
path (issue 31). A search meanwhile answers from the vectors the index has, and
`memgraph-host status` says how many nodes are left (`pending_work.py`).

Chunks of `CHUNK` nodes: each embedded on a worker thread, then put into the index under the
chat's commit lock (a write's own vectors are never overwritten by an older text's), the
loop yielding between chunks. The task ends when nothing is left, or when the chat is no
longer the loaded one (unloaded, reloaded).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from memgraph_plugin.chats.loaded_chat import UNSNAPSHOTTED, LoadedChat
from memgraph_plugin.chats.pending_work import write_pending

log = logging.getLogger(__name__)

#: More nodes than this without a vector: embedded in the background, not by the search.
BACKGROUND_NODES = 2048
CHUNK = 256


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
    try:
        while chat.unembedded and chats.cached(chat.chat_id) is chat and chat.index is not None:
            ids = list(chat.unembedded[:CHUNK])
            nodes = [n for n in map(chat.store.node, ids) if n is not None]
            block = await asyncio.to_thread(embedder, nodes) if nodes else None
            async with chat.lock:
                taken = set(ids)
                chat.unembedded = [i for i in chat.unembedded if i not in taken]
                fresh = [n for n in nodes if chat.store.node(n.id) is n]  # not rewritten since
                if block is not None and fresh and chat.index is not None:
                    if len(fresh) != len(nodes):
                        block = await asyncio.to_thread(embedder, fresh)
                    embedder.apply(chat.index, fresh, block)
                    chat.dirty.update(dict.fromkeys((n.id for n in fresh), UNSNAPSHOTTED))
            done += len(ids)
            _note(chats, chat)
            await asyncio.sleep(0)
        log.info("chat %s: %d nodes embedded in the background", chat.chat_id, done)
    except Exception:
        log.exception("chat %s: background embedding failed; searches embed the rest", chat.chat_id)
    finally:
        if not chat.unembedded or chats.cached(chat.chat_id) is not chat:
            _note(chats, chat, left=0)


def _note(chats: Any, chat: LoadedChat, *, left: int | None = None) -> None:
    folder: Path | None = getattr(chats, "pending_dir", None)
    if folder is None:
        return
    count = len(chat.unembedded) if left is None else left
    try:
        write_pending(folder, chat.chat_id, {"embedding_nodes": count})
    except OSError as exc:
        log.debug("chat %s: pending work not recorded: %s", chat.chat_id, exc)
