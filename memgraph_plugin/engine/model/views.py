"""Read views: frozen attrs classes with deep-frozen contents, built from the store's records.

A view shares no mutable state with the store: records are immutable and views copy nothing
mutable, so a later write never changes a view already handed out.
"""

from __future__ import annotations

from typing import Any

import attrs

from .frozen import EMPTY, FrozenDict, deep_freeze
from .models import Node
from .schema import NodeTypeSpec


def _ids(value: Any) -> frozenset[str]:
    return value if type(value) is frozenset else frozenset(value)


def _tuple(value: Any) -> tuple[Any, ...]:
    return value if type(value) is tuple else tuple(value)


@attrs.frozen
class NodeView:
    """The caller-safe view of one node."""

    id: str
    type: str
    level: str
    title: str
    fields: FrozenDict
    seq_to: int | None
    parent_id: str
    children_ids: tuple[str, ...]
    archived: bool
    semantic_rollup: bool
    semantic_depth: int

    @classmethod
    def from_node(cls, node: Node) -> NodeView:
        return cls(
            node.id,
            node.type,
            node.level,
            node.title,
            node.fields,
            node.seq_to,
            node.parent_id,
            node.children_ids,
            node.archived,
            node.semantic_rollup,
            node.semantic_depth,
        )


@attrs.frozen
class EdgeView:
    """A directed edge; `weight` is set only on `project_edges` output (raw edges merged)."""

    source: str
    target: str
    type: str
    weight: int | None = None


@attrs.frozen
class NeighborView:
    """A neighbour seen from a node: `direction` "out" = node -> neighbour, "in" = the reverse."""

    node: NodeView
    edge_type: str
    direction: str


@attrs.frozen
class RelationCount:
    relation: str
    direction: str
    count: int


@attrs.frozen
class SampleNeighbor:
    id: str
    type: str
    title: str
    to_seq: int | None


@attrs.frozen
class EdgeSummaryView:
    """Degree, per-(relation, direction) counts and a bounded sample of neighbours."""

    degree: int = 0
    relations: tuple[RelationCount, ...] = attrs.field(default=(), converter=_tuple)
    sample_neighbors: tuple[SampleNeighbor, ...] = attrs.field(default=(), converter=_tuple)


EMPTY_EDGE_SUMMARY = EdgeSummaryView()


@attrs.frozen
class InjectionState:
    """What is injected for a chat: pinned ids, the router's picks, and the pool it saw."""

    always_inject_ids: frozenset[str] = attrs.field(default=frozenset(), converter=_ids)
    recall_selected_ids: frozenset[str] = attrs.field(default=frozenset(), converter=_ids)
    visible_ids: frozenset[str] = attrs.field(default=frozenset(), converter=_ids)


EMPTY_INJECTION_STATE = InjectionState()


@attrs.frozen
class SchemaSpecView:
    type: str
    table_name: str
    table_columns: tuple[str, ...]
    required_columns: tuple[str, ...]
    primary_key_columns: tuple[str, ...]
    force_update: bool
    always_inject: bool
    editable: bool
    compression_mode: str

    @classmethod
    def from_spec(cls, spec: NodeTypeSpec) -> SchemaSpecView:
        return cls(
            spec.type,
            spec.table_name,
            spec.table_columns,
            spec.required_columns,
            spec.primary_key_columns,
            spec.force_update,
            spec.always_inject,
            spec.editable,
            spec.compression.mode,
        )


@attrs.frozen
class SchemaView:
    types: tuple[SchemaSpecView, ...] = attrs.field(converter=_tuple)


@attrs.frozen
class NodeBriefView:
    """One row of the router's candidateRows block."""

    id: str
    level: str
    type: str
    table_name: str
    title: str
    summary: str
    key_values: FrozenDict
    row_values: FrozenDict
    to_seq: int | None
    child_count: int
    exposure: str
    edge_summary: EdgeSummaryView | None
    always_inject: bool


@attrs.frozen
class RankedView(NodeView):
    """A `NodeView` with a search `score` and `score_mode` ("keyword" or "vector")."""

    score: float
    score_mode: str

    @classmethod
    def from_view(cls, view: NodeView, score: float, score_mode: str) -> RankedView:
        node_part = (getattr(view, a.name) for a in attrs.fields(NodeView))
        return cls(*node_part, float(score), score_mode)


@attrs.frozen
class FindResult:
    matches: tuple[NodeView, ...] = attrs.field(default=(), converter=_tuple)


@attrs.frozen
class CompactionGroup:
    """Children that one rollup would take: `depth` is the tier the rollup would have."""

    depth: int
    child_ids: tuple[str, ...] = attrs.field(converter=_tuple)
    fan_in: int


@attrs.frozen
class CompactionCandidates:
    groups: tuple[CompactionGroup, ...] = attrs.field(default=(), converter=_tuple)


def frozen_mapping(value: Any) -> FrozenDict:
    """A deep-frozen copy of a mapping (EMPTY for None)."""
    return EMPTY if not value else deep_freeze(dict(value))
