"""Where a session finds the retrieval status (``Session.get_retrieval_status``) without importing
the recall package: ``memgraph_plugin.recall.status`` registers its function here when imported
(the plugin module imports it), so the dependency points one way (recall -> this leaf)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import MemoryGraphError

#: ``(chat_id, *, data_dir, settings, window) -> RetrievalStatus``
StatusProvider = Callable[..., Any]

_provider: list[StatusProvider] = []


def provide_retrieval_status(provider: StatusProvider) -> None:
    """Install the function that computes a chat's retrieval status (the last one wins)."""
    _provider[:] = [provider]


def retrieval_status_for(chat_id: str, *, data_dir: Any, settings: Any, window: int) -> Any:
    """The chat's `RetrievalStatus` from the installed provider."""
    if not _provider:
        raise MemoryGraphError(
            "OP_FAILED",
            "retrieval status: the recall package is not loaded (memgraph_plugin.recall)",
        )
    return _provider[0](chat_id, data_dir=data_dir, settings=settings, window=window)
