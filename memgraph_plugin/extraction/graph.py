"""What the offline extractor and the turn pipeline read back from a chat's graph: the newest
message event (its id for the ``follows`` link, its ``message`` index for idempotency).

Compaction keeps the newest leaves visible, so the event pool holds them.
"""

from __future__ import annotations

from typing import Any

from .offline import EVENT

__all__ = ["message_index", "newest_event"]


def message_index(node: Any) -> int | None:
    """The chat message index an event was extracted from (None: not a message event)."""
    value = node.fields.get("message") if node is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def newest_event(store: Any) -> Any | None:
    """The newest leaf event of the store (highest seq, then message index, then id), as its
    view: `Store.newest_leaf`, from the event pool's keys and the ``message`` values (no walk
    over the events of the newest seq, which after an import is every event of the chat)."""
    return store.newest_leaf(EVENT, "message")
