"""What every layer of the read API stands on: the store, the schema, the injection state, the
visible set and argument checks."""

from __future__ import annotations

from collections.abc import Container, Iterable
from typing import Any

from ...engine.graph.store import Store
from ...engine.model.frozen import FrozenDict
from ...engine.model.models import Node
from ...engine.model.schema import Schema, resolve_schema
from ...engine.model.views import InjectionState
from ...engine.read.projection import Lifter, PoolLifter
from ...errors import bad_args, check_choice, check_id_container, check_id_set, check_str_list

__all__ = ["ReadBase"]


DIRECTIONS = ("in", "out", "both")
Range = tuple[int | None, int | None]


def lower_set(values: Iterable[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(v.lower() for v in values)


def in_range(seq: int | None, rng: Range) -> bool:
    start, end = rng
    if start is None and end is None:
        return True
    if seq is None:
        return False
    return (start is None or seq >= start) and (end is None or seq <= end)


def text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, frozenset, set)):
        return ", ".join(t for t in (text_of(v) for v in value) if t)
    if isinstance(value, FrozenDict):
        return ", ".join(f"{k}: {text_of(v)}" for k, v in value.items())
    return str(value)


class ReadBase:
    """The plumbing the read API's layers share (no read method of its own)."""

    def __init__(
        self,
        store: Store | None,
        ctx: Any = None,
        *,
        schema: Schema | list[Any] | str | None = None,
        injection_hub: Any = None,
    ) -> None:
        if store is None:
            store = Store(schema=schema)
        if not isinstance(store, Store):
            raise bad_args("store", f"expected a Store, got {type(store).__name__}")
        self._store = store
        self._ctx = ctx
        self._schema_arg = None if schema is None else resolve_schema(schema)
        if injection_hub is None:
            from ..injection import hub_for

            injection_hub = hub_for(ctx)
        self._hub = injection_hub
        self._lift_cache: tuple[int, Any, Lifter] | None = None
        self._brief_cache: dict[str, tuple[Node, Schema, Any]] = {}

    # -- plumbing ------------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        return self._store

    @property
    def schema(self) -> Schema:
        return self._schema_arg if self._schema_arg is not None else self._store.schema

    def _injection(self) -> InjectionState:
        return self._hub.state

    def _visible(self, visible_node_ids: Any, argument: str = "visible_node_ids") -> Container[str]:
        """An explicit set, else the injection state's visible ids, else the candidate pool."""
        explicit = check_id_container(argument, visible_node_ids)
        if explicit is not None:
            return explicit
        state_ids = self._injection().visible_ids
        if state_ids:
            return state_ids
        return self._store.pool_rank()

    def _lifter(self, visible: Container[str]) -> Lifter:
        """A `Lifter` for `visible`, reused across calls while the store and the (immutable)
        visible set stay the same: the default sets (the injection state's frozenset, the
        store's cached pool) and caller frozensets qualify; mutable sets get a fresh one."""
        version = self._store.version
        cache = self._lift_cache
        if cache is not None and cache[0] == version and cache[1] is visible:
            return cache[2]
        if visible is self._store.pool_rank():
            lift: Lifter = PoolLifter(self._store)
        else:
            lift = Lifter(self._store, visible)
        if isinstance(visible, frozenset) or isinstance(lift, PoolLifter):
            self._lift_cache = (version, visible, lift)
        return lift

    def _projection(self, project_to: Any) -> Container[str] | None:
        """None for "raw"; otherwise the set to project onto."""
        if isinstance(project_to, str):
            check_choice("project_to", project_to, ("raw", "visible"))
            return None if project_to == "raw" else self._visible(None)
        ids = check_id_set("project_to", project_to, allow_none=False)
        return ids

    def _types(self, types: Any, argument: str = "types") -> frozenset[str] | None:
        return lower_set(check_str_list(argument, types))
