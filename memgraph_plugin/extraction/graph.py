"""What the offline extractor and the turn pipeline read back from a chat's graph: the newest
message event (its id for the ``follows`` link, its ``message`` index for idempotency).

Read from the event type's candidate pool (recency order), looking only at its front: the
events of the newest seq. Compaction keeps the newest leaves visible, so the pool front holds
them; the cost does not grow with the chat.
"""

from __future__ import annotations

from typing import Any

from memgraph_plugin.engine.index.name_index import id_order

from .offline import EVENT

__all__ = ["message_index", "newest_event"]


def message_index(node: Any) -> int | None:
    """The chat message index an event was extracted from (None: not a message event)."""
    value = node.fields.get("message") if node is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def newest_event(store: Any) -> Any | None:
    """The newest leaf event of the store (highest seq, then message index, then id), as its
    view. Read from the front of the event pool only (`Store.newest_in_pool`, a window doubled
    until it passes the newest seq): the pool as a whole is never made (after an open, that
    made a record for every event of the chat)."""
    want = 8
    while True:
        views = store.newest_in_pool(EVENT, want)
        best: Any | None = None
        best_key: tuple[int, tuple[int, str]] | None = None
        top: int | None = None
        ended = False
        for view in views:
            seq = view.seq_to
            key = -seq if seq is not None else 1  # the pool's recency key (`recency_key`)
            if top is None:
                top = key
            elif key != top and best is not None:
                ended = True
                break
            if view.semantic_rollup or view.semantic_depth:
                continue
            index = message_index(view)
            order = (index if index is not None else -1, id_order(view.id))
            if best_key is None or order > best_key:
                best, best_key = view, order
        if ended or len(views) < want:
            return best
        want *= 4
