"""Layer B of the read API: topology (neighbours, ancestors, descendants, projected edges)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ...engine.model.models import Node
from ...engine.model.views import EdgeView, NeighborView, NodeView
from ...engine.read.projection import Lifter, nearest_visible_ancestor_id
from ...engine.read.projection import project_edges as _project_edges
from ...errors import (
    bad_args,
    check_bool,
    check_choice,
    check_id_set,
    check_int,
    check_str,
    check_str_list,
)
from .read_base import DIRECTIONS, ReadBase

__all__ = ["Topology"]


class Topology(ReadBase):
    """Layer B of the read API: topology (neighbours, ancestors, descendants, projected edges)."""

    # -- layer B: topology -------------------------------------------------------------------------

    def get_neighbors(
        self,
        id: str,
        *,
        edge_types: list[str] | None = None,
        direction: str = "both",
        project_to: str | list[str] = "raw",
    ) -> tuple[NeighborView, ...]:
        """Neighbours over the node's raw edges (store order); archived ones are dropped.

        With a projection each neighbour becomes its nearest visible ancestor (dropped when it
        has none); results are unique on (neighbour, edge type, direction).
        """
        check_str("id", id)
        tset = self._types(edge_types, "edge_types")
        check_choice("direction", direction, DIRECTIONS)
        target_set = self._projection(project_to)
        store = self._store
        if store.node(id) is None:
            return ()
        keys = []
        if direction in ("out", "both"):
            keys.extend(store.out_edges(id))
        if direction in ("in", "both"):
            keys.extend(store.in_edges(id))
        keys.sort(key=store.edge_serial)
        lift = Lifter(store, target_set) if target_set is not None else None
        seen: set[tuple[str, str, str]] = set()
        out: list[NeighborView] = []
        for k in keys:
            if tset is not None and k.type.lower() not in tset:
                continue
            is_out = k.source == id
            other = k.target if is_out else k.source
            if lift is not None:
                other = lift(other)  # type: ignore[assignment]
                if other is None or other == id:
                    continue
            node = store.node(other)
            if node is None or node.archived:
                continue
            d = "out" if is_out else "in"
            sig = (other, k.type, d)
            if sig in seen:
                continue
            seen.add(sig)
            out.append(NeighborView(store.view(other), k.type, d))  # type: ignore[arg-type]
        return tuple(out)

    def get_ancestor(
        self,
        id: str,
        *,
        active_only: bool = True,
        predicate: Callable[[NodeView], Any] | None = None,
    ) -> NodeView | None:
        """The first ancestor strictly above `id` matching `predicate` (default: the parent).

        With `active_only` an archived ancestor on the way ends the walk with None.
        """
        check_str("id", id)
        check_bool("active_only", active_only)
        if predicate is not None and not callable(predicate):
            raise bad_args("predicate", f"expected a callable, got {type(predicate).__name__}")
        store = self._store
        node = store.node(id)
        seen = {id}
        while node is not None and node.parent_id and node.parent_id not in seen:
            parent = store.node(node.parent_id)
            if parent is None:
                return None
            if active_only and parent.archived:
                return None
            view = store.view(parent.id)
            if predicate is None or predicate(view):  # type: ignore[arg-type]
                return view
            seen.add(parent.id)
            node = parent
        return None

    def get_descendants(
        self, id: str, *, active_only: bool = True, max_depth: int | None = None
    ) -> tuple[NodeView, ...]:
        """BFS over `children_ids` (level 1 first), the root excluded; `max_depth` None: no
        limit; `active_only` skips archived children and what lies below them."""
        check_str("id", id)
        check_bool("active_only", active_only)
        check_int("max_depth", max_depth, minimum=0, allow_none=True)
        store = self._store
        root = store.node(id)
        if root is None:
            return ()
        out: list[str] = []
        seen = {id}
        frontier = [root]
        depth = 0
        while frontier and (max_depth is None or depth < max_depth):
            depth += 1
            nxt: list[Node] = []
            for n in frontier:
                for cid in n.children_ids:
                    if cid in seen:
                        continue
                    child = store.node(cid)
                    if child is None or (active_only and child.archived):
                        continue
                    seen.add(cid)
                    out.append(cid)
                    nxt.append(child)
            frontier = nxt
        return tuple(store.view(i) for i in out)  # type: ignore[misc]

    def get_nearest_visible_ancestor(
        self, id: str, *, visible_node_ids: Iterable[str]
    ) -> NodeView | None:
        """The first node from `id` upwards (itself included) that is in `visible_node_ids`."""
        check_str("id", id)
        visible = check_id_set("visible_node_ids", visible_node_ids, allow_none=False)
        found = nearest_visible_ancestor_id(self._store, id, visible)  # type: ignore[arg-type]
        return None if found is None else self._store.view(found)

    def project_edges(
        self,
        *,
        visible_node_ids: Iterable[str],
        edge_types: list[str] | None = None,
        exclude_internal: bool = True,
    ) -> tuple[EdgeView, ...]:
        """Raw edges lifted onto the visible set and merged; `weight` = raw edge count."""
        visible = check_id_set("visible_node_ids", visible_node_ids, allow_none=False)
        types = check_str_list("edge_types", edge_types)
        check_bool("exclude_internal", exclude_internal)
        rows = _project_edges(
            self._store,
            visible,
            edge_types=types,
            exclude_internal=exclude_internal,  # type: ignore[arg-type]
        )
        return tuple(EdgeView(a, b, t, w) for a, b, t, w in rows)
