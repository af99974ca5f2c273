"""The memory budget of loaded chats: least-recently-used order and an estimate of each chat's
resident size, so `PersistedChats` can evict the coldest chats when the host holds too much.

The estimate is a per-chat, a per-node and a per-edge constant (calibrated by `bench/memory.py`,
which measures a loaded chat's real allocations after a recall turn: store, indices, views,
summaries, keyword index; and a host serving many chats, whose heap showed a fixed ~0.35 MB per
loaded chat the per-node figure missed) plus the exact bytes of the chat's vector matrix.
Computing it costs O(1), so it is refreshed on every open and commit.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

#: bytes a loaded node / edge holds once every index a turn builds is built (bench/memory.py)
NODE_BYTES = 2_200
EDGE_BYTES = 330
#: bytes a loaded chat holds whatever its size: its session state, caches and index shells
#: (bench/memory.py: a host's heap exceeded the per-node estimate by 0.33-0.40 MB per loaded chat)
CHAT_BYTES = 384 << 10
MB = 1 << 20


def chat_bytes(store: Any, index: Any = None) -> int:
    """Estimated resident bytes of a loaded chat: its store and indices, and its vectors."""
    nodes = len(store)
    edges = int(getattr(store, "edge_count", 0))
    vectors = int(getattr(index, "nbytes", 0)) if index is not None else 0
    return CHAT_BYTES + nodes * NODE_BYTES + edges * EDGE_BYTES + vectors


class MemoryBudget:
    """Loaded chats in least-recently-used order with their estimated sizes.

    `limit` is in bytes (None: no limit). `victims()` names the chats to evict, coldest first,
    until the rest fit; the most recently used chat is never one of them (a chat larger than the
    whole budget stays loaded while it is the one in use).
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._sizes: OrderedDict[str, int] = OrderedDict()
        self.total = 0
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._sizes)

    def __contains__(self, chat_id: object) -> bool:
        return chat_id in self._sizes

    def use(self, chat_id: str, nbytes: int | None = None) -> None:
        """`chat_id` was just used (moved to the most recent end); `nbytes`: its new size."""
        sizes = self._sizes
        old = sizes.get(chat_id)
        if old is None:
            sizes[chat_id] = old = 0
        else:
            sizes.move_to_end(chat_id)
        if nbytes is not None:
            sizes[chat_id] = nbytes
            self.total += nbytes - old

    def drop(self, chat_id: str) -> None:
        nbytes = self._sizes.pop(chat_id, None)
        if nbytes is not None:
            self.total -= nbytes

    def size_of(self, chat_id: str) -> int:
        return self._sizes.get(chat_id, 0)

    def order(self) -> list[str]:
        """Chat ids, least recently used first."""
        return list(self._sizes)

    def victims(self, busy: Callable[[str], bool] | None = None) -> list[str]:
        """Chats to evict (coldest first, skipping those `busy` says are) until the rest fit.
        Within the budget this costs O(1); over it, a walk from the cold end."""
        if self.limit is None or self.total <= self.limit:
            return []
        out: list[str] = []
        total = self.total
        last = next(reversed(self._sizes))  # the most recent: never a victim
        for chat_id, nbytes in self._sizes.items():
            if total <= self.limit or chat_id == last:
                break
            if busy is not None and busy(chat_id):
                continue
            out.append(chat_id)
            total -= nbytes
        return out
