"""Layer A of the read API: data access (nodes, edges, the schema)."""

from __future__ import annotations

from ...engine.graph.store import timeline_key
from ...engine.model.models import Node
from ...engine.model.schema import INTERNAL_EDGE_TYPES, is_diagnostic_type
from ...engine.model.views import EdgeView, NodeView, SchemaSpecView, SchemaView
from ...errors import check_bool, check_range, check_str, check_str_list
from .read_base import Range, ReadBase, in_range, lower_set

__all__ = ["DataAccess"]


class DataAccess(ReadBase):
    """Layer A of the read API: data access (nodes, edges, the schema)."""

    # -- layer A: data access ---------------------------------------------------------------------

    def list_nodes(
        self,
        *,
        types: list[str] | None = None,
        levels: list[str] | None = None,
        active_only: bool = True,
        seq_range: Range | None = None,
    ) -> tuple[NodeView, ...]:
        """Every node (offline scan) in timeline order; `active_only` drops archived and
        diagnostic nodes; `seq_range` is inclusive ``(start, end)``."""
        tset = self._types(types)
        lset = lower_set(check_str_list("levels", levels))
        check_bool("active_only", active_only)
        rng = check_range("seq_range", seq_range) or (None, None)
        out: list[Node] = []
        for n in self._store.iter_nodes():
            if active_only and (n.archived or is_diagnostic_type(n.type)):
                continue
            if tset is not None and n.type.lower() not in tset:
                continue
            if lset is not None and n.level.lower() not in lset:
                continue
            if not in_range(n.seq_to, rng):
                continue
            out.append(n)
        out.sort(key=timeline_key)
        view = self._store.view
        return tuple(view(n.id) for n in out)  # type: ignore[misc]

    def get_node(self, id: str) -> NodeView | None:
        """The node's view (archived ones too), or None; empty / blank ids give None."""
        check_str("id", id)
        if not id.strip():
            return None
        return self._store.view(id)

    def list_edges(
        self,
        *,
        source: str | None = None,
        target: str | None = None,
        types: list[str] | None = None,
        exclude_internal: bool = False,
    ) -> tuple[EdgeView, ...]:
        """Raw stored edges in store order (no weight); `exclude_internal` drops contains /
        semantic_contains."""
        check_str("source", source, allow_none=True)
        check_str("target", target, allow_none=True)
        tset = self._types(types)
        check_bool("exclude_internal", exclude_internal)
        store = self._store
        if source is not None or target is not None:
            keys = (
                store.out_edges(source) if source is not None else store.in_edges(target)  # type: ignore[arg-type]
            )
            edges = sorted((store.edge(k) for k in keys), key=lambda e: store.edge_serial(e.key))  # type: ignore[union-attr]
        else:
            edges = list(store.iter_edges())
        out = []
        for e in edges:
            if target is not None and e.target != target:
                continue
            if tset is not None and e.type.lower() not in tset:
                continue
            if exclude_internal and e.type in INTERNAL_EDGE_TYPES:
                continue
            out.append(EdgeView(e.source, e.target, e.type))
        return tuple(out)

    def get_schema(self) -> SchemaView:
        """The effective schema, types in definition order."""
        return SchemaView(types=tuple(SchemaSpecView.from_spec(s) for s in self.schema.types))
