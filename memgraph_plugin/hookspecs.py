"""The memory graph's hook specs, added to a host through ``host_addhooks(pm)``.

``memgraph_injection_changed`` and ``memgraph_commit`` are notifications: the service calls them
through ``host.notify`` / ``host.anotify``, so every implementation runs, an implementation
that raises is logged with its plugin's name, and the write or update that fired it is never undone.

The specs are typed with the hook contract (``hook_contract.py``, beside this module); pluggy
ignores annotations when it calls a hook, so they document, and let a static tool check, what
each hook passes and answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # annotations only (pluggy never evaluates them): adding the specs stays cheap
    from host.chats.context import ChatContext, Message

    from .hook_contract import (
        CommitInfo,
        ExtractedOps,
        InjectionState,
        NodeBriefView,
        RouteAnswer,
        RouteRequest,
    )

try:
    from host.markers import hookspec
except ImportError:  # pragma: no cover - the same marker, by project name
    hookspec = pluggy.HookspecMarker("memgraph_host")


@hookspec
def memgraph_injection_changed(chat_id: str, state: InjectionState) -> None:
    """A chat's injection state was updated (no debounce: several times a turn is normal).

    `state` is the frozen `InjectionState` (`always_inject_ids`, `recall_selected_ids`,
    `visible_ids`; `memgraph_plugin.hook_contract`).
    """


@hookspec
def memgraph_commit(chat_id: str, commit: CommitInfo) -> Awaitable[Any] | None:
    """A write to a chat's memory graph changed it and was committed (persisted when storage is on).

    `commit` is a `CommitInfo` (`version`, `applied`, `chat_id`, ...;
    `memgraph_plugin.hook_contract`). An implementation may return an awaitable;
    ``host.anotify`` awaits it.
    """


@hookspec
def memgraph_embedding_profiles() -> Any:
    """Embedding profiles this plugin offers: a profile, a list of them, or a name -> profile map.

    A profile has `name`, `dim` and `embed(texts)` (see `memgraph_plugin.embedding.profile`); the
    host setting ``embedding_profile`` picks one by name.
    """


# -- turn pipeline hooks (memgraph_plugin/turn, memgraph_plugin/recall; see docs/recall.md) ----


@hookspec
def memgraph_extract(
    chat_id: str, message: Message, context: ChatContext
) -> ExtractedOps | Awaitable[ExtractedOps] | None:
    """Turn a new assistant message into write ops (real use: an LLM; the demo: recorded ops).

    Collected from every plugin, in call order, and applied as ONE batch with the message's seq.
    Return a list of batch-op dicts, ``None`` for nothing, or an awaitable of either. `message` is
    a `host.Message`, `context` the chat's `ChatContext`.
    """


@hookspec(firstresult=True)
def memgraph_route(request: RouteRequest) -> RouteAnswer | Awaitable[RouteAnswer] | None:
    """Pick what to inject for the next turn: a `RouteResult` (or a list of node ids, or
    ``{"selected": ids, "drill": ids}``), or ``None`` to leave it to the next router and finally
    the built-in one.

    `request` is a `RouteRequest` (query, candidate pool, always-inject ids, session, settings;
    both in `memgraph_plugin.hook_contract`). May return an awaitable.
    """


@hookspec(firstresult=True)
def memgraph_summarise(
    type: str, briefs: Sequence[NodeBriefView]
) -> str | Awaitable[str | None] | None:
    """The summary text of one compaction group of `type` (`briefs`: the children's
    `NodeBriefView`s, oldest first); ``None`` defers to the next summariser. May be async.
    """
