"""memgraph_plugin: the long-term memory graph (schema, store + indices, views, read/write API)."""

from .api.injection import InjectionHub, hub_for
from .api.read import ReadApi, get_read_api
from .api.session import Session
from .api.write import WriteApi, get_write_api
from .engine.batch import apply_batch
from .engine.converter import converter
from .engine.frozen import FrozenDict, deep_freeze, thaw
from .engine.models import Edge, EdgeKey, Node
from .engine.results import (
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
from .engine.rollups import build_rollup
from .engine.schema import (
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
from .engine.store import Changeset, Store
from .engine.views import (
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
from .errors import MemoryGraphError
from .service import MemoryGraph, memory_graph_for

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
