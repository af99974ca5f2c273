"""The offline extractor as a plugin: answers ``memgraph_extract`` for every message (user and
assistant) with `offline.extract_message_ops`, resolving names through the chat's graph, and
``memgraph_summarise`` with `summary.informative_summary` (a summariser plugin registered later,
e.g. the LLM one, answers first).

Registered by the host as a built-in plugin named ``memgraph-extract-offline``, like any other
extractor. It is the default: when another plugin implements ``memgraph_extract`` (an LLM
extractor, the demo's recorded-ops replay) it steps aside and answers nothing; such a plugin may
call `offline_extract` itself as its fallback, handing it the service it was given.

The host registers this module apart from the memory-graph plugin, so its hook implementation
is handed no service: it reaches the memory graph the way any plugin does, by the name the graph
is published under in the host's registry (`published_graph`).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from host import hookimpl
from host.plugins.hook_guard import inline

from .graph import newest_event
from .naming.resolve import NameResolver
from .offline import extract_message_ops
from .summary import informative_summary
from .vocabulary import words_for

__all__ = [
    "PLUGIN_NAME",
    "memgraph_extract",
    "memgraph_summarise",
    "offline_extract",
    "others_extract",
]

PLUGIN_NAME = "memgraph-extract-offline"
#: Messages from this many characters on are extracted on a worker thread (`offline_extract`).
OFF_LOOP_CHARS = 100_000


def others_extract(host: Any) -> bool:
    """Whether a plugin other than this one implements ``memgraph_extract`` on `host`."""
    caller = getattr(getattr(host, "pm", None), "hook", None)
    caller = getattr(caller, "memgraph_extract", None)
    if caller is None:
        return False
    return any(impl.plugin_name != PLUGIN_NAME for impl in caller.get_hookimpls())


def published_graph(host: Any) -> Any | None:
    """The memory graph published on `host` (its registry name), or None."""
    from memgraph_plugin.api.injection import PUBLISHED_AS

    registry = getattr(host, "registry", None)
    return registry.get(PUBLISHED_AS) if registry is not None else None


async def offline_extract(
    chat_id: str, message: Any, context: Any, *, service: Any = None
) -> list[dict[str, Any]]:
    """The offline ops for one message of `chat_id` (the chat's graph, read through `service`,
    resolves names and gives the previous event); ``[]`` when the memory graph is unavailable
    or the text is empty. Without `service`: the one published on the context's host."""
    host = getattr(context, "host", None)
    if service is None:
        service = published_graph(host)
    if service is None or not (getattr(message, "text", "") or "").strip():
        return []
    store = service.loaded_store(chat_id)  # the one the pipeline's session writes to
    if store is None:
        store = await service.store_for(chat_id)
    previous = newest_event(store)
    index = getattr(message, "index", None)
    chat_words = words_for(host, chat_id)
    if isinstance(index, int):  # the chat read in place when the host has it: no copy of it
        chat = getattr(host, "chat", None)
        messages = chat(chat_id).view() if chat is not None else None
        chat_words.feed_until(messages or getattr(context, "messages", None) or (), index)
    extract = functools.partial(
        extract_message_ops,
        message.text,
        speaker=getattr(message, "name", "") or "",
        role=getattr(message, "role", "") or "",
        index=index,
        time=getattr(message, "time", "") or "",
        previous_event_id=previous.id if previous is not None else None,
        names=NameResolver.for_store(store),
        types=store.schema.ids,
        ordinary=chat_words.ordinary,
        max_field_bytes=_max_field_bytes(context),
    )
    if len(message.text) < OFF_LOOP_CHARS:
        return extract()
    # a long message (a pasted file: seconds per MB) is read on a worker thread, so the event
    # loop goes on serving other chats meanwhile; the chat's own turn waits for it
    return await asyncio.to_thread(extract)


def _max_field_bytes(context: Any) -> int | None:
    """The chat's ``max_field_bytes`` (a long message is kept whole in parts that fit it)."""
    from memgraph_plugin.engine.model.values import Limits

    try:
        return Limits.from_settings(getattr(context, "settings", None)).max_field_bytes
    except ValueError:  # a bad setting: the write's own check reports it
        return None


@hookimpl(optionalhook=True)
@inline
async def memgraph_extract(chat_id: str, message: Any, context: Any) -> list | None:
    """Offline ops for `message`, or None when another extractor is installed."""
    host = getattr(context, "host", None)
    if host is None or others_extract(host):
        return None
    return await offline_extract(chat_id, message, context) or None


@hookimpl(optionalhook=True)
@inline
async def memgraph_summarise(type: str, briefs: Any) -> str | None:
    """The offline rollup summary: the children's most informative sentences (None: empty).
    `inline`: pure computation, called on the loop without a task or a timer per rollup."""
    return informative_summary(list(briefs or ())) or None
