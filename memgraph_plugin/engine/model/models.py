"""The engine's internal records: `Node`, `Edge` and `EdgeKey` (frozen, deep-frozen contents)."""

from __future__ import annotations

from collections.abc import Container
from typing import Any, NamedTuple

import attrs

from .frozen import EMPTY, FrozenDict, deep_freeze


class EdgeKey(NamedTuple):
    """What makes an edge unique: ``(source, type, target)``."""

    source: str
    type: str
    target: str


def _ids(value: Any) -> tuple[str, ...]:
    return value if type(value) is tuple else tuple(value)


def _floor_range(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    start, end = value
    return (start, end)


@attrs.frozen
class Node:
    """One memory node. `parent_id` is "" when the node has no parent."""

    id: str
    type: str
    level: str = "semantic"
    title: str = ""
    fields: FrozenDict = attrs.field(default=EMPTY, converter=deep_freeze)
    parent_id: str = ""
    children_ids: tuple[str, ...] = attrs.field(default=(), converter=_ids)
    seq_to: int | None = None
    semantic_depth: int = 0
    semantic_rollup: bool = False
    archived: bool = False
    floor_range: tuple[int, int] | None = attrs.field(default=None, converter=_floor_range)
    superseded_by: str | None = None
    pinned: bool = False  # a person pinned it: recall always injects it

    @property
    def active(self) -> bool:
        return not self.archived


@attrs.frozen
class Edge:
    """A directed, typed edge; `seq_to` is the message the edge was written for (may be None)."""

    source: str
    target: str
    type: str
    seq_to: int | None = None

    @property
    def key(self) -> EdgeKey:
        return EdgeKey(self.source, self.type, self.target)


def nearest_visible_ancestor_id(store: Any, id: str, visible: Container[str]) -> str | None:
    """Walk up `parent_id` from `id` (itself included) through ``store.node`` (a `Store`): the
    first id in `visible` wins.

    A missing or archived node on the way ends the walk with None; cycles end it too.
    """
    nodes = store.node
    seen: set[str] = set()
    cur: str = id
    while cur and cur not in seen:
        node = nodes(cur)
        if node is None or node.archived:
            return None
        if cur in visible:
            return cur
        seen.add(cur)
        cur = node.parent_id
    return None
