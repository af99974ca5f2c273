"""What the prompt already carries: the messages a request sends (the proxy forwards them; a
front end or the proxy's context budget may keep only the newest turns of a chat). The events
made from those messages are in the prompt word for word, and so is a rollup made only of them,
so recall leaves them out and spends its block on what the prompt does not hold."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["CarriedNodes", "PromptWindow", "in_window"]

#: Rollup levels walked down to find what a rollup is made of (rollups nest a few deep).
MAX_ROLLUP_DEPTH = 8


def _message_of(node: Any) -> int | None:
    message = node.fields.get("message")
    return message if isinstance(message, int) and not isinstance(message, bool) else None


def in_window(
    node: Any, kept_from: int | None, node_of: Callable[[str], Any] | None = None
) -> bool:
    """Whether `node` is an event of a message the prompt carries (chat index `kept_from` or
    later), or, given `node_of` (id -> node) to read its children, a rollup every leaf of which
    is. Characters and places gather: those are never in the window."""
    if kept_from is None:
        return False
    if not node.semantic_rollup:
        message = _message_of(node)
        return message is not None and message >= kept_from
    if node_of is None:
        return False
    return _rollup_carried(node, kept_from, node_of, MAX_ROLLUP_DEPTH)


def _rollup_carried(
    node: Any,
    kept_from: int,
    node_of: Callable[[str], Any],
    depth: int,
    memo: dict[str, bool] | None = None,
) -> bool:
    """Whether every leaf under the rollup `node` is an event of a carried message (`memo`:
    rollup id -> the answer, kept across calls of one recall)."""
    if memo is not None and node.id in memo:
        return memo[node.id]
    children = [c for c in map(node_of, node.children_ids) if c is not None]
    carried = bool(children) and depth > 0
    for child in children if carried else ():
        if child.semantic_rollup or child.children_ids:
            carried = _rollup_carried(child, kept_from, node_of, depth - 1, memo)
        else:
            message = _message_of(child)
            carried = message is not None and message >= kept_from
        if not carried:
            break
    if memo is not None:
        memo[node.id] = carried
    return carried


class CarriedNodes:
    """`in_window` for the many nodes of one recall: what a rollup is made of is read once."""

    def __init__(self, kept_from: int | None, node_of: Callable[[str], Any]) -> None:
        self.kept_from = kept_from
        self._node_of = node_of
        self._memo: dict[str, bool] = {}

    def __call__(self, node: Any) -> bool:
        if self.kept_from is None:
            return False
        if not node.semantic_rollup:
            return in_window(node, self.kept_from)
        return _rollup_carried(node, self.kept_from, self._node_of, MAX_ROLLUP_DEPTH, self._memo)


@attrs.frozen
class PromptWindow:
    """A recall inside a context window: the block's character budget and the chat index of
    the oldest message the prompt keeps; what the trimming dropped rides along for the trace
    (not part of equality: a regenerate with the same window reuses the recall)."""

    budget_chars: int
    kept_from: int
    dropped_messages: int = attrs.field(default=0, eq=False)
    tokens_saved: int = attrs.field(default=0, eq=False)
