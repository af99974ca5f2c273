"""memgraph_plugin: the long-term memory graph (schema, store + indices, views, read/write API)."""

from .converter import converter
from .errors import MemoryGraphError
from .frozen import FrozenDict, deep_freeze, thaw
from .models import Edge, EdgeKey, Node
from .read_api import ReadApi, get_read_api
from .schema import (
    DEFAULT_SCHEMA,
    INTERNAL_EDGE_TYPES,
    RELATIONS,
    SYMMETRIC_RELATIONS,
    Compression,
    NodeTypeSpec,
    Schema,
    extend_schema,
    load_schema,
    normalize_schema,
)
from .store import Changeset, Store
from .views import (
    CompactionCandidates,
    CompactionGroup,
    EdgeSummaryView,
    EdgeView,
    FindResult,
    InjectionState,
    NeighborView,
    NodeBriefView,
    NodeView,
    RankedView,
    RelationCount,
    SampleNeighbor,
    SchemaSpecView,
    SchemaView,
)

__all__ = [
    "DEFAULT_SCHEMA",
    "INTERNAL_EDGE_TYPES",
    "RELATIONS",
    "SYMMETRIC_RELATIONS",
    "Changeset",
    "CompactionCandidates",
    "CompactionGroup",
    "Compression",
    "Edge",
    "EdgeKey",
    "EdgeSummaryView",
    "EdgeView",
    "FindResult",
    "FrozenDict",
    "InjectionState",
    "MemoryGraphError",
    "NeighborView",
    "Node",
    "NodeBriefView",
    "NodeTypeSpec",
    "NodeView",
    "RankedView",
    "ReadApi",
    "RelationCount",
    "SampleNeighbor",
    "Schema",
    "SchemaSpecView",
    "SchemaView",
    "Store",
    "converter",
    "deep_freeze",
    "extend_schema",
    "get_read_api",
    "load_schema",
    "normalize_schema",
    "thaw",
]
