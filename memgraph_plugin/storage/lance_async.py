"""The async twins of `LanceStorage`'s sync methods: each runs its ``*_sync`` method on a worker
thread, so a chat's reads and commits never block the event loop. A mixin of `LanceStorage`
(`lance.py`), which defines the sync methods these call.
"""

from __future__ import annotations

import asyncio
from typing import Any

from memgraph_plugin.storage.journal.restored_values import RestoredValues, restored_values
from memgraph_plugin.storage.persistence import ChangeRecord, ChatState, CommitRecord, VectorBlock

__all__ = ["AsyncTwins"]


class AsyncTwins:
    """``await storage.load(chat)`` for ``storage.load_sync(chat)``, and so on."""

    async def load(self: Any, chat_id: str) -> ChatState:
        return await asyncio.to_thread(self.load_sync, chat_id)

    async def load_vectors(
        self: Any, chat_id: str, state: ChatState, *, profile: str | None = None
    ) -> VectorBlock | None:
        return await asyncio.to_thread(self.load_vectors_sync, chat_id, state, profile=profile)

    async def latest_version(self: Any, chat_id: str) -> int:
        return await asyncio.to_thread(self.latest_version_sync, chat_id)

    async def has_changed(self: Any, chat_id: str, since_version: int) -> bool:
        return self.has_changed_sync(chat_id, since_version)

    async def commit(
        self: Any,
        chat_id: str,
        change: ChangeRecord,
        *,
        base_version: int,
    ) -> CommitRecord:
        return await asyncio.to_thread(self.commit_sync, chat_id, change, base_version=base_version)

    async def commit_many(
        self: Any, chat_id: str, changes: list[ChangeRecord], *, base_version: int
    ) -> list[CommitRecord]:
        return await asyncio.to_thread(
            self.commit_many_sync, chat_id, changes, base_version=base_version
        )

    async def history(
        self: Any, chat_id: str, *, limit: int | None = None
    ) -> tuple[CommitRecord, ...]:
        return await asyncio.to_thread(self.history_sync, chat_id, limit=limit)

    async def state_at(
        self: Any, chat_id: str, *, version: int | None = None, seq: int | None = None
    ) -> ChatState:
        return await asyncio.to_thread(self.state_at_sync, chat_id, version=version, seq=seq)

    async def rollback(
        self: Any,
        chat_id: str,
        *,
        version: int | None = None,
        seq: int | None = None,
        base_version: int | None = None,
    ) -> CommitRecord:
        return await asyncio.to_thread(
            self.rollback_sync, chat_id, version=version, seq=seq, base_version=base_version
        )

    async def restored_values(
        self: Any, chat_id: str, target: int, latest: int
    ) -> RestoredValues | None:
        """What rolling the chat back from `latest` to `target` restores (`restored_values`)."""
        return await asyncio.to_thread(restored_values, self, chat_id, target, latest)

    async def import_dict(
        self: Any, chat_id: str, data: dict[str, Any], *, kind: str = "import", note: str = ""
    ) -> CommitRecord:
        return await asyncio.to_thread(self.import_sync, chat_id, data, kind=kind, note=note)

    async def checkpoint(
        self: Any, chat_id: str, state: ChatState, vectors: VectorBlock | None = None
    ) -> None:
        await asyncio.to_thread(self.checkpoint_sync, chat_id, state, vectors)

    async def optimize(self: Any) -> None:
        await asyncio.to_thread(self.optimize_sync)

    async def chats(self: Any) -> tuple[str, ...]:
        return await asyncio.to_thread(self.chats_sync)

    async def stats(self: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.stats_sync)
