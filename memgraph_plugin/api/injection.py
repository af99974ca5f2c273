"""Per-chat injection state: an `InjectionHub` holds one chat's `InjectionState` and its listeners.

Listeners run synchronously, in subscription order, with the same frozen snapshot; a listener that
raises is logged and skipped. A hub may also forward every update to one callback (the
`MemoryGraph` service uses it to fire the ``memgraph_injection_changed`` hook).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ..engine.model.views import EMPTY_INJECTION_STATE, InjectionState
from ..errors import bad_args, check_id_set

__all__ = ["PUBLISHED_AS", "InjectionHub", "Listener", "hub_for"]

log = logging.getLogger(__name__)

Listener = Callable[[InjectionState], Any]


class InjectionHub:
    """One chat's injection state and the callbacks watching it."""

    def __init__(
        self,
        chat_id: str | None = None,
        *,
        forward: Callable[[str | None, InjectionState], Any] | None = None,
    ) -> None:
        self.chat_id = chat_id
        self._state: InjectionState = EMPTY_INJECTION_STATE
        self._listeners: list[tuple[int, Listener]] = []
        self._next_token = 0
        self._lock = threading.Lock()
        self._forward = forward

    @property
    def state(self) -> InjectionState:
        """The current frozen snapshot."""
        return self._state

    def get(self) -> InjectionState:
        return self._state

    def subscribe(self, callback: Listener) -> Callable[[], None]:
        """Call `callback(state)` after every update; returns an idempotent unsubscribe."""
        if not callable(callback):
            raise bad_args("callback", f"expected a callable, got {type(callback).__name__}")
        with self._lock:
            token = self._next_token
            self._next_token += 1
            self._listeners.append((token, callback))

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = [(t, cb) for t, cb in self._listeners if t != token]

        return unsubscribe

    def unsubscribe_where(self, predicate: Callable[[Listener], bool]) -> int:
        """Drop every listener ``predicate`` accepts (hot reload: a replaced plugin's code)."""
        with self._lock:
            kept = [(t, cb) for t, cb in self._listeners if not predicate(cb)]
            dropped = len(self._listeners) - len(kept)
            self._listeners = kept
        return dropped

    @property
    def listener_count(self) -> int:
        return len(self._listeners)

    def update(self, state: InjectionState) -> InjectionState:
        """Replace the state, then notify listeners (in order) and the forward callback."""
        if not isinstance(state, InjectionState):
            raise bad_args("state", f"expected an InjectionState, got {type(state).__name__}")
        self._state = state
        with self._lock:
            listeners = list(self._listeners)
        for _token, callback in listeners:
            try:
                callback(state)
            except Exception:
                log.warning(
                    "injection listener %r failed (chat %r); skipped",
                    callback,
                    self.chat_id,
                    exc_info=True,
                )
        if self._forward is not None:
            try:
                self._forward(self.chat_id, state)
            except Exception:
                log.warning("injection forward failed (chat %r)", self.chat_id, exc_info=True)
        return state

    def set(
        self,
        *,
        always_inject_ids: Iterable[str] | None = None,
        recall_selected_ids: Iterable[str] | None = None,
        visible_ids: Iterable[str] | None = None,
    ) -> InjectionState:
        """Update some of the three id sets (`None` keeps the current one) and notify."""
        current = self._state
        always = check_id_set("always_inject_ids", always_inject_ids)
        selected = check_id_set("recall_selected_ids", recall_selected_ids)
        visible = check_id_set("visible_ids", visible_ids)
        return self.update(
            InjectionState(
                always_inject_ids=current.always_inject_ids if always is None else always,
                recall_selected_ids=current.recall_selected_ids if selected is None else selected,
                visible_ids=current.visible_ids if visible is None else visible,
            )
        )


#: The name the memory graph is published under in a host's registry (`service.SERVICE_NAME`).
PUBLISHED_AS = "memory-graph"


def hub_for(ctx: Any) -> InjectionHub:
    """The hub of `ctx`'s chat: the one the memory graph published on ``ctx.host`` keeps (found
    by its registry name, the way any plugin reaches it: the legacy functions are handed only a
    context); a fresh private hub without a context, a chat or a published memory graph."""
    chat_id = getattr(ctx, "chat_id", None)
    if chat_id is None and isinstance(ctx, dict):
        chat_id = ctx.get("chat_id", ctx.get("chatId"))
    if ctx is None or chat_id is None:
        return InjectionHub()
    registry = getattr(getattr(ctx, "host", None), "registry", None)
    published = registry.get(PUBLISHED_AS) if registry is not None else None
    hub = getattr(published, "hub", None)
    return hub(str(chat_id)) if callable(hub) else InjectionHub(str(chat_id))
