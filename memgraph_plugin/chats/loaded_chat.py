"""A loaded chat: its store, the journal version it reflects, its vector index and the
bookkeeping that keeps them in step (what `PersistedChats` holds per chat)."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from memgraph_plugin.chats.recent_commits import RecentCommits
from memgraph_plugin.embedding.index import VectorIndex

__all__ = ["UNSNAPSHOTTED", "LoadedChat"]


@attrs.define(eq=False)
class LoadedChat:
    """One chat held in memory."""

    chat_id: str
    store: Any
    version: int
    checkpoint_version: int
    seq: int = 0
    index: VectorIndex | None = None
    #: node id -> the version that changed it, for nodes whose vector may not be among the
    #: snapshot's vector rows (the ANN path searches them exactly); `UNSNAPSHOTTED`: never there
    dirty: dict[str, float] = attrs.field(factory=dict)
    unembedded: list[str] = attrs.field(factory=list)  # in the index without a stored vector
    lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    recent: RecentCommits = attrs.field(factory=RecentCommits)  # for rollbacks in memory
    #: the task embedding `unembedded` in the background (`background_embedding.py`)
    embedding: asyncio.Task[None] | None = None
    #: `time.monotonic()` when a turn last opened, searched or committed the chat
    used_at: float = 0.0

    def snapshot_seen(self, version: int) -> None:
        """A snapshot at `version` exists: nodes changed up to it are among its vector rows."""
        if version > self.checkpoint_version:
            self.checkpoint_version = version
            self.dirty = {k: v for k, v in self.dirty.items() if v > version}


UNSNAPSHOTTED = float("inf")
