"""Carry a chat's memory into a new one: `MemoryGraph.fork(src, new, upto=None)` (a mixin).

The new chat starts with the source chat's graph as of a message seq (nodes, edges, rollups) as
ONE commit of kind ``fork`` whose note says where it came from ("forked from SRC at seq N",
shown by ``history``), and with no messages. The graph is anchored as an import is
(`store_file.anchor_store`: at seq 0 with no messages), and ``fork`` is one of the replacing
kinds (`rollback_target.REPLACING_KINDS`), so chatting in the new chat (live, proxy or ingest)
never reads the forked graph as its own messages' doing and never rolls it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.graph.store import Store
from ..errors import MemoryGraphError
from .chat_versions import checked_chat_id
from .rollback_target import checked_target

if TYPE_CHECKING:
    from ..engine.model.results import CommitInfo

__all__ = ["ChatFork", "fork_note"]


def fork_note(src: str, seq: int) -> str:
    """The provenance note of a fork commit."""
    return f"forked from {src} at seq {seq}"


class ChatFork:
    """`fork` for `MemoryGraph` (a mixin: the state and helpers are the service's and
    `ChatHistory`'s)."""

    # provided by `MemoryGraph` / `ChatHistory` (declared for type checkers only, so these
    # never shadow the real methods whatever the order of the bases)
    host: Any
    schema: Any

    if TYPE_CHECKING:

        def _storage(self) -> Any: ...
        async def _commit_marks(self, chat_id: str, missing: str) -> Any: ...
        async def _replace(self, chat_id: str, kind: str, run: Any) -> Any: ...
        def message_count(self, chat_id: str) -> int | None: ...

    async def has_graph(self, chat_id: str) -> bool:
        """Whether the chat has any commit (a graph of its own, forked or imported)."""
        checked_chat_id(chat_id)
        return bool(await self._storage().marks(chat_id))

    async def fork(self, src: str, new: str, upto: Any = None) -> CommitInfo:
        """Start chat `new` with chat `src`'s graph as of message seq `upto` (None: its newest
        state); one ``fork`` commit, fired as ``memgraph_commit``, returns its `CommitInfo`.

        ``BAD_ARGS`` (nothing written) for a bad chat id, `src` == `new`, a `src` without
        commits, a `new` that already has a graph or messages, or an `upto` that is not a whole
        number >= 0 or is past `src`'s newest commit."""
        from memgraph_plugin.engine.load.store_file import anchor_store

        checked_chat_id(src)
        checked_chat_id(new)
        if src == new:
            raise MemoryGraphError("BAD_ARGS", f"cannot fork chat {src!r} into itself")
        if upto is not None:
            _, upto = checked_target(None, upto)
        marks = await self._commit_marks(src, "no graph to fork")
        storage = self._storage()
        if await storage.marks(new):
            raise MemoryGraphError(
                "BAD_ARGS", f"chat {new!r} already has a graph: fork into a new chat"
            )
        if self.message_count(new):
            raise MemoryGraphError(
                "BAD_ARGS", f"chat {new!r} already has messages: fork into a new chat"
            )
        newest_seq = max(m[1] for m in marks)
        if upto is not None and upto > newest_seq:
            raise MemoryGraphError(
                "BAD_ARGS",
                f"seq {upto} is past chat {src!r} (its newest commit is at seq {newest_seq})",
            )
        if upto is None:
            state = await storage.load(src)
            seq = int(state.counters[1])
        else:
            state = await storage.state_at(src, seq=upto)
            seq = upto
        data = anchor_store(Store.from_dict(state.data, schema=self.schema).to_dict(), 0, 0)
        note = fork_note(src, seq)
        return await self._replace(
            new, "fork", lambda: storage.import_dict(new, data, kind="fork", note=note)
        )
