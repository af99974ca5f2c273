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
    """The newest leaf event of the store (highest seq, then message index, then id)."""
    pool = store.type_pool(EVENT)
    best: Any | None = None
    best_key: tuple[int, tuple[int, str]] | None = None
    top: int | None = None
    for key, node in zip(pool.keys, pool.nodes, strict=False):
        if top is None:
            top = key[0]
        elif key[0] != top and best is not None:
            break
        if node.semantic_rollup or node.semantic_depth:
            continue
        index = message_index(node)
        order = (index if index is not None else -1, id_order(node.id))
        if best_key is None or order > best_key:
            best, best_key = node, order
    return best
