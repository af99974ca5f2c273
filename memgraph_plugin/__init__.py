"""memgraph_plugin: the long-term memory graph (schema, store + indices, views, read/write API)."""

from .batch import apply_batch, build_rollup
from .converter import converter
from .errors import MemoryGraphError
from .frozen import FrozenDict, deep_freeze, thaw
from .injection import InjectionHub, hub_for
from .models import Edge, EdgeKey, Node
from .read_api import ReadApi, get_read_api
from .results import (
    BatchResult,
    CommitInfo,
    CompactResult,
    CreateResult,
    DeleteLinksResult,
    DeleteResult,
    EditResult,
    Rejection,
    RejectionError,
    UpsertLinksResult,
)
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
from .service import MemoryGraph, memory_graph_for
from .session import Session
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
from .write_api import WriteApi, get_write_api

__all__ = [
    "DEFAULT_SCHEMA",
    "INTERNAL_EDGE_TYPES",
    "RELATIONS",
    "SYMMETRIC_RELATIONS",
    "BatchResult",
    "Changeset",
    "CommitInfo",
    "CompactResult",
    "CompactionCandidates",
    "CompactionGroup",
    "Compression",
    "CreateResult",
    "DeleteLinksResult",
    "DeleteResult",
    "Edge",
    "EdgeKey",
    "EdgeSummaryView",
    "EdgeView",
    "EditResult",
    "FindResult",
    "FrozenDict",
    "InjectionHub",
    "InjectionState",
    "MemoryGraph",
    "MemoryGraphError",
    "NeighborView",
    "Node",
    "NodeBriefView",
    "NodeTypeSpec",
    "NodeView",
    "RankedView",
    "ReadApi",
    "Rejection",
    "RejectionError",
    "RelationCount",
    "SampleNeighbor",
    "Schema",
    "SchemaSpecView",
    "SchemaView",
    "Session",
    "Store",
    "UpsertLinksResult",
    "WriteApi",
    "apply_batch",
    "build_rollup",
    "converter",
    "deep_freeze",
    "extend_schema",
    "get_read_api",
    "get_write_api",
    "hub_for",
    "load_schema",
    "memory_graph_for",
    "normalize_schema",
    "thaw",
]
