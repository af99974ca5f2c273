"""Extraction: turning a new message into write ops.

``memgraph_extract`` is a collecting hook: every plugin may contribute ops. The built-in offline
extractor (`memgraph_plugin.extraction`) answers when no other extractor is installed; an LLM
plugin can take over. ``ReplayExtractor`` ships for the demo and the tests: it replays ops
recorded per seq for assistant messages.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from host import hookimpl
from host.plugins.notify import HookFailure, failure
from memgraph_plugin.extraction.graph import message_index, newest_event

from ..recall.hookcalls import collect, report_failures
from .story import Story


class ReplayExtractor:
    """A plugin that answers ``memgraph_extract`` with recorded ops for the message's seq.

    ``chat_id`` limits it to one chat (``None``: every chat).
    """

    def __init__(
        self, ops_by_seq: Mapping[int, Sequence[Mapping[str, Any]]], *, chat_id: str | None = None
    ) -> None:
        self._ops = {int(seq): [dict(op) for op in ops] for seq, ops in ops_by_seq.items()}
        self.chat_id = chat_id

    @classmethod
    def from_story(cls, story: Story, *, chat_id: str | None = None) -> ReplayExtractor:
        return cls(story.ops_by_seq(), chat_id=chat_id)

    @hookimpl
    def memgraph_extract(self, chat_id: str, message: Any, context: Any) -> list | None:
        if message.role != "assistant" or (self.chat_id is not None and chat_id != self.chat_id):
            return None
        ops = self._ops.get(message.seq)
        return copy.deepcopy(ops) if ops is not None else None


def already_extracted(store: Any, message: Any) -> bool:
    """Whether the graph already holds the extraction of `message` (or of a later message): an
    answer whose seq the store has reached, or a message index the newest message event has."""
    if message.role == "assistant" and message.seq <= getattr(store, "seq_counter", 0):
        return True
    newest = message_index(newest_event(store)) if hasattr(store, "newest_leaf") else None
    return newest is not None and message.index <= newest


async def extract_ops(
    host: Any, chat_id: str, message: Any, context: Any
) -> tuple[list[dict[str, Any]], list[HookFailure]]:
    """All plugins' ops for one message (in hook call order) and the plugins that failed.

    A plugin that raises or answers something other than a list of dicts is reported and skipped.
    """
    results, failures = await collect(
        host, "memgraph_extract", chat_id=chat_id, message=message, context=context
    )
    ops: list[dict[str, Any]] = []
    junk: list[HookFailure] = []
    for answer in results:
        value = answer.value
        if not isinstance(value, (list, tuple)) or not all(isinstance(o, Mapping) for o in value):
            bad = TypeError(
                f"memgraph_extract returned {_shown(value)}, not a list of ops (op objects)"
            )
            junk.append(failure(answer.plugin, "memgraph_extract", bad))
            continue
        ops.extend(dict(op) for op in value)
    report_failures(host, junk)  # on the plugin's record (`plugins`), not only in the outcome
    return ops, failures + junk


def _shown(value: Any) -> str:
    """A junk answer, short: its type and the start of its repr."""
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"
