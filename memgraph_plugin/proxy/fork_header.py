"""``X-Memgraph-Fork-From: SRC`` on a chat's first proxied request: the chat starts with chat
SRC's memory (`MemoryGraph.fork`) before its messages are reconciled. A chat that already has
messages or a graph ignores the header (a front end may send it on every request)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from host.chats.chat_ids import check_chat_id

from .chat_identity import _utf8

HEADER = "x-memgraph-fork-from"

__all__ = ["HEADER", "ForkRefused", "fork_on_first_request"]


class ForkRefused(ValueError):
    """The header names a chat that cannot be forked (the message says why)."""


async def fork_on_first_request(
    host: Any, service: Any, headers: Mapping[str, str], chat_id: str
) -> bool:
    """Fork the header's chat into `chat_id` when this is its first request; True when it did.
    Raises `ForkRefused` (the proxy answers 400) for an unusable or unforkable source."""
    from memgraph_plugin.errors import MemoryGraphError

    raw = headers.get(HEADER)
    if raw is None or service is None:
        return False
    if host.chat(chat_id).messages or await service.has_graph(chat_id):
        return False
    try:
        src = check_chat_id(_utf8(raw.strip()))
        await service.fork(src, chat_id)
    except (ValueError, MemoryGraphError) as exc:
        raise ForkRefused(f"X-Memgraph-Fork-From: {exc}") from None
    return True
