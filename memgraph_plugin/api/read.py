"""The read API (layers A-D of the docs): data access, topology, recall primitives, injection.

Every method validates its arguments (``BAD_ARGS`` naming the argument) and returns frozen views
built from the store's records; nothing returned shares mutable state with the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.graph.store import Store
from ..engine.model.views import InjectionState
from ..errors import bad_args
from .read_layers.read_data import DataAccess
from .read_layers.read_recall import RecallPrimitives
from .read_layers.read_topology import Topology
from .read_layers.read_vectors import VectorSearch

__all__ = ["ReadApi", "get_read_api"]


class ReadApi(DataAccess, Topology, RecallPrimitives, VectorSearch):
    """Read access to one store. Cheap to build; valid for the lifetime of the store."""

    # layers A-C live in read_data, read_topology, read_recall and read_vectors; the shared
    # plumbing in read_base.

    # -- layer D: injection observation -------------------------------------------------------

    def get_injection_state(self) -> InjectionState:
        """The chat's current frozen injection state."""
        return self._injection()

    def on_injection_changed(self, callback: Callable[[InjectionState], Any]) -> Callable[[], None]:
        """Call `callback(state)` after every injection update; returns an idempotent
        unsubscribe. A failing callback is logged and skipped."""
        if not callable(callback):
            raise bad_args("callback", f"expected a callable, got {type(callback).__name__}")
        return self._hub.subscribe(callback)


def get_read_api(store: Store | None, ctx: Any = None, *, schema: Any = None) -> ReadApi:
    """The read API over `store` (None: an empty store) for the chat of `ctx` (may be None)."""
    return ReadApi(store, ctx, schema=schema)
