"""`SessionWiring`: what a `Session` needs from the service, handed over once when it opens.

The chat's injection hub, its write lock, the two steps of a commit (persist, then announce as
``memgraph_commit``), the version a write result reports, vector search and the retrieval status.
A session holds these and never reaches back into the service: a write takes the lock it was
given, commits through the function it was given and announces through the other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from ..engine.model.results import CommitInfo
from ..errors import MemoryGraphError
from .injection import InjectionHub

__all__ = ["Commit", "Announce", "RetrievalStatusOf", "SessionWiring", "no_status"]

#: ``(store, write result, kind) -> CommitInfo | None``: make what a write changed durable.
Commit = Callable[[Any, Any, str], Awaitable[CommitInfo | None]]
#: ``(commit) -> None``: fire ``memgraph_commit`` for it (outside the write lock).
Announce = Callable[[CommitInfo], Awaitable[None]]
#: ``(window) -> RetrievalStatus``: the chat's hybrid-retrieval status.
RetrievalStatusOf = Callable[[int], Any]
#: ``(session, *, query, types, k) -> ranked views``: storage's vector index of the chat.
StorageVectorSearch = Callable[..., Awaitable[tuple[Any, ...]]]


def no_status(window: int) -> Any:
    """The status function of a service that was given none (e.g. built bare in a test)."""
    raise MemoryGraphError(
        "OP_FAILED",
        "retrieval status: this memory graph was given no status function "
        "(the plugin hands it memgraph_plugin.recall.status)",
    )


@attrs.frozen
class SessionWiring:
    """Everything a session of one chat uses from the service, bound to that chat."""

    hub: InjectionHub
    lock: asyncio.Lock
    commit: Commit
    announce: Announce
    version: Callable[[], int]
    vector_search: StorageVectorSearch
    status: RetrievalStatusOf = no_status
