"""``X-Memgraph-Fork-From: SRC`` on a chat's first proxied request: the chat starts with chat
SRC's memory (`MemoryGraph.fork`) before its messages are reconciled. A chat that already has
messages or a graph ignores the header (a front end may send it on every request). SRC is a chat
of the request key's namespace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from host.chats.namespaces import ChatScope

from .chat_identity import _utf8

HEADER = "x-memgraph-fork-from"

__all__ = ["HEADER", "ForkRefused", "fork_on_first_request"]


class ForkRefused(ValueError):
    """The header names a chat that cannot be forked (the message says why)."""


async def fork_on_first_request(
    host: Any, service: Any, headers: Mapping[str, str], chat_id: str, scope: ChatScope
) -> bool:
    """Fork the header's chat (of `scope`) into `chat_id` when this is its first request; True
    when it did. Raises `ForkRefused` (the proxy answers 400) for an unusable or unforkable
    source, naming it as the header does."""
    from memgraph_plugin.errors import MemoryGraphError

    raw = headers.get(HEADER)
    if raw is None or service is None:
        return False
    if host.chat(chat_id).messages or await service.has_graph(chat_id):
        return False
    given = _utf8(raw.strip())
    src = given
    try:
        src = scope.internal(given)
        await service.fork(src, chat_id)
    except (ValueError, MemoryGraphError) as exc:
        said = str(exc).replace(repr(src), repr(given))
        raise ForkRefused(f"X-Memgraph-Fork-From: {said}") from None
    return True
