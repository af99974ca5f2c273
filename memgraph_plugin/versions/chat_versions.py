"""A chat's history through the service: its commits, rollbacks (to a version, to after a
message, undoing a replaced message) and imports, each one commit storage makes and the service
announces as ``memgraph_commit``. A mixin of `MemoryGraph` (`service.py`), which holds the state
these methods use (persistence, locks, cached stores, deferred blocks).

Chat ids are checked here once, at the service's edge (`checked_chat_id`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from host.chats.chat_ids import chat_id_problem

from ..engine.graph.store import Store
from ..engine.model.results import CommitInfo
from ..errors import MemoryGraphError
from .rollback_target import checked_target, replacement_version, target_version

if TYPE_CHECKING:
    from ..storage.persistence import CommitRecord, Persistence

__all__ = ["ChatHistory", "checked_chat_id"]


def checked_chat_id(chat_id: Any) -> str:
    """`chat_id` when usable, else ``BAD_ARGS`` with the one chat id rule's message: how the
    memory graph's entry points (`MemoryGraph.open_session`, `history`, `rollback`,
    `import_graph`, the plugin's commands) apply `host.chats.chat_ids`; below them nothing
    checks again."""
    problem = chat_id_problem(chat_id)
    if problem is not None:
        raise MemoryGraphError("BAD_ARGS", problem)
    return chat_id


class ChatHistory:
    """History, rollback and import for `MemoryGraph` (a mixin: the state is the service's)."""

    # provided by `MemoryGraph`
    host: Any
    persistence: Any
    settings: Any
    schema: Any
    _deferred: dict[str, Any]
    _stores: dict[str, Store]

    def lock(self, chat_id: str) -> Any: ...
    async def _flush_deferred(self, chat_id: str) -> None: ...
    async def fire_commit(self, chat_id: str, commit: CommitInfo) -> None: ...

    def _storage(self) -> Persistence:
        storage = getattr(self.persistence, "storage", None)
        if storage is None:
            raise MemoryGraphError("STORAGE_ERROR", "no storage: this graph keeps no history")
        return storage

    async def _commit_marks(self, chat_id: str, missing: str) -> Any:
        """The chat's stored commit marks ``(version, seq)``, a block's writes so far persisted
        first; ``BAD_ARGS`` "chat ... has `missing`" when it has no commits."""
        storage = self._storage()
        if chat_id in self._deferred:
            await self._flush_deferred(chat_id)
        marks = await storage.marks(chat_id)
        if not marks:
            raise MemoryGraphError("BAD_ARGS", f"chat {chat_id!r} has {missing}")
        return marks

    async def history(self, chat_id: str, *, limit: int | None = None) -> tuple[CommitRecord, ...]:
        """The chat's commits, oldest first (`CommitRecord`: version, seq, kind, applied, ...)."""
        checked_chat_id(chat_id)
        return await self._storage().history(chat_id, limit=limit)

    async def rollback(
        self, chat_id: str, *, version: Any = None, seq: Any = None
    ) -> CommitInfo | None:
        """Give the chat its state after commit `version` (or after the messages of seq `seq`)
        as a new commit; fires ``memgraph_commit`` and returns its `CommitInfo`, or None when
        the chat is in that state already (no commit). ``BAD_ARGS`` (`rollback_target`) for a
        target that is not a whole number >= 0, or past the chat, or a chat with no commits."""
        checked_chat_id(chat_id)
        version, seq = checked_target(version, seq)
        marks = await self._commit_marks(chat_id, "no commits to roll back")
        target = target_version(
            chat_id, marks, version=version, seq=seq, newest_seq=self.message_seq(chat_id)
        )
        return await self.rollback_to(chat_id, target, latest=marks[-1][0])

    async def rollback_to(self, chat_id: str, target: int, *, latest: int) -> CommitInfo | None:
        """Roll the chat back to version `target` (checked; `latest`: its newest as read): in
        memory when the newest commits reach back to it, else through storage. None, and no
        commit, when `target` is `latest`."""
        if target == latest:
            return None
        storage = self._storage()
        if self.persistence is not None and chat_id not in self._deferred:
            async with self.lock(chat_id):  # the newest commits: undone in memory, no reload
                record = await self.persistence.rollback_recent(chat_id, version=target)
            if record is not None:
                return await self._announce(chat_id, "rollback", record)
        return await self._replace(
            chat_id, "rollback", lambda: storage.rollback(chat_id, version=target)
        )

    async def undo_message(self, chat_id: str, seq: int) -> CommitInfo | None:
        """Back to before a replaced message of seq `seq` (an edit, a swipe): never before an
        import (`rollback_target.replacement_version`). None: nothing to undo."""
        checked_chat_id(chat_id)
        storage = self._storage()
        if chat_id in self._deferred:
            await self._flush_deferred(chat_id)
        marks = await storage.marks(chat_id)
        if not marks:
            return None
        target = replacement_version(marks, int(seq))
        return await self.rollback_to(chat_id, target, latest=marks[-1][0])

    async def import_graph(self, chat_id: str, data: Any) -> Any:
        """Replace the chat's graph by `data` (a store in the contract's JSON shape, checked
        whole first: ``BAD_ARGS`` naming the field, nothing changed) in its normal form
        (`store_import.normalised_store`: what `Store.from_dict(...).to_dict()` gives, without
        the records; checked and made in one pass: `import_pass.py`) as one commit anchored to
        the chat's newest message seq and message count (as `store_file.anchor_store` does:
        chatting on never reads it as deleted or already extracted messages, so never rolls it
        back);
        fires ``memgraph_commit``, returns its `CommitInfo`. A `store_import.NormalStore`
        (`normalised_store`'s, unanchored) is taken as checked and in the normal form."""
        from memgraph_plugin.engine.load import gc_paused
        from memgraph_plugin.engine.load.import_pass import checked_normal_store
        from memgraph_plugin.engine.load.store_file import store_problems
        from memgraph_plugin.engine.load.store_import import (
            NormalStore,
            anchored_store,
            normalised_store,
        )
        from memgraph_plugin.engine.model.values import Limits

        checked_chat_id(chat_id)
        storage = self._storage()
        limits = Limits.from_settings(self.settings)
        seq, count = self.message_seq(chat_id), self.message_count(chat_id)

        def ready() -> dict[str, Any]:
            if type(data) is NormalStore:  # checked and normalised by the caller: anchored only
                return anchored_store(data, seq, count)
            # one pass per node and edge, no records (import_pass.py)
            store = checked_normal_store(data, limits)
            if store is None:
                problems = store_problems(data, limits)
                if problems:
                    raise MemoryGraphError("BAD_ARGS", "; ".join(problems))
                store = normalised_store(data)
            return anchored_store(store, seq, count)

        # One collector pause for the check and the storage's import (which pauses it too),
        # ended once the store made for the import is emptied (it is ours: storage has taken
        # what it needs, though the executor's work item may hold the dict a moment longer),
        # so the collection that ends the pause walks only what outlives the import. Ended
        # after the check instead, it walked the 100k nodes' anchored copies (60-140 ms).
        made: list[Any] = []  # (a `store_import.PlainStore`)
        with gc_paused():
            try:
                # off the event loop: a 100k-node store takes a second or two to check
                made.append(await asyncio.to_thread(ready))
                return await self._replace(
                    chat_id, "import", lambda: storage.import_dict(chat_id, made[0])
                )
            finally:
                for store in made:
                    if store is not data:  # its nodes, edges and columns freed before the end
                        store.clear()
                        store.node_columns = store.edge_columns = None
                made.clear()

    def message_count(self, chat_id: str) -> int | None:
        """How many messages the chat holds on the host (None without a host)."""
        chat = getattr(self.host, "chat", None)
        return None if chat is None else len(chat(chat_id).messages)

    def message_seq(self, chat_id: str) -> int:
        """The seq of the chat's newest message on the host (0 without messages or a host)."""
        chat = getattr(self.host, "chat", None)
        if chat is None:
            return 0
        messages = chat(chat_id).messages
        return int(messages[-1].seq) if messages else 0

    async def _replace(self, chat_id: str, kind: str, run: Callable[[], Any]) -> Any:
        """Run a storage-made commit under the chat's write lock; cached stores are dropped."""
        async with self.lock(chat_id):
            try:
                record = await run()
            finally:  # sessions opened from now on load the new state
                self.persistence.forget(chat_id)
                self._stores.pop(chat_id, None)
        return await self._announce(chat_id, kind, record)

    async def _announce(self, chat_id: str, kind: str, record: CommitRecord) -> CommitInfo:
        """The `CommitInfo` of a commit storage made, fired as ``memgraph_commit``."""
        commit = CommitInfo(
            version=record.version,
            applied=record.applied,
            chat_id=chat_id,
            kind=kind,
            seq=record.seq,
            node_ids=record.node_ids,
            edges_added=record.edges_added,
            edges_removed=record.edges_removed,
            persisted=True,
        )
        await self.fire_commit(chat_id, commit)
        return commit
