"""What the prompt already carries: when a front end or the proxy keeps only the newest turns of
a chat (a context window), the events made from those turns are in the prompt word for word, so
recall leaves them out and spends its block on what the window dropped."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["PromptWindow", "in_window"]


def in_window(node: Any, kept_from: int | None) -> bool:
    """Whether `node` is an event of a message the prompt carries (chat index `kept_from` or
    later). Rollups summarise, characters and places gather: those are never in the window."""
    if kept_from is None or node.semantic_rollup:
        return False
    message = node.fields.get("message")
    return isinstance(message, int) and not isinstance(message, bool) and message >= kept_from


@attrs.frozen
class PromptWindow:
    """A recall inside a context window: the block's character budget and the chat index of
    the oldest message the prompt keeps; what the trimming dropped rides along for the trace
    (not part of equality: a regenerate with the same window reuses the recall)."""

    budget_chars: int
    kept_from: int
    dropped_messages: int = attrs.field(default=0, eq=False)
    tokens_saved: int = attrs.field(default=0, eq=False)
