"""memgraph_plugin: the long-term memory graph (schema, store + indices, views, read/write API).

The public names load on first use (PEP 562): importing engine code (``memgraph_plugin.engine...``)
loads neither the host nor the service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.lazy_exports import lazy_exports

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "BatchResult": "memgraph_plugin.engine.model.results",
    "Changeset": "memgraph_plugin.engine.graph.store",
    "CommitInfo": "memgraph_plugin.engine.model.results",
    "CompactResult": "memgraph_plugin.engine.model.results",
    "CompactionCandidates": "memgraph_plugin.engine.model.views",
    "CompactionGroup": "memgraph_plugin.engine.model.views",
    "Compression": "memgraph_plugin.engine.model.schema",
    "CreateResult": "memgraph_plugin.engine.model.results",
    "DEFAULT_SCHEMA": "memgraph_plugin.engine.model.schema",
    "DeleteLinksResult": "memgraph_plugin.engine.model.results",
    "DeleteResult": "memgraph_plugin.engine.model.results",
    "Edge": "memgraph_plugin.engine.model.models",
    "EdgeKey": "memgraph_plugin.engine.model.models",
    "EdgeSummaryView": "memgraph_plugin.engine.model.views",
    "EdgeView": "memgraph_plugin.engine.model.views",
    "EditResult": "memgraph_plugin.engine.model.results",
    "FindResult": "memgraph_plugin.engine.model.views",
    "FrozenDict": "memgraph_plugin.engine.model.frozen",
    "INTERNAL_EDGE_TYPES": "memgraph_plugin.engine.model.schema",
    "InjectionHub": "memgraph_plugin.api.injection",
    "InjectionState": "memgraph_plugin.engine.model.views",
    "MemoryGraph": "memgraph_plugin.service",
    "MemoryGraphError": "memgraph_plugin.errors",
    "NeighborView": "memgraph_plugin.engine.model.views",
    "Node": "memgraph_plugin.engine.model.models",
    "NodeBriefView": "memgraph_plugin.engine.model.views",
    "NodeTypeSpec": "memgraph_plugin.engine.model.schema",
    "NodeView": "memgraph_plugin.engine.model.views",
    "RELATIONS": "memgraph_plugin.engine.model.schema",
    "RankedView": "memgraph_plugin.engine.model.views",
    "ReadApi": "memgraph_plugin.api.read",
    "Rejection": "memgraph_plugin.engine.model.results",
    "RejectionError": "memgraph_plugin.engine.model.results",
    "RelationCount": "memgraph_plugin.engine.model.views",
    "SYMMETRIC_RELATIONS": "memgraph_plugin.engine.model.schema",
    "SampleNeighbor": "memgraph_plugin.engine.model.views",
    "Schema": "memgraph_plugin.engine.model.schema",
    "SchemaSpecView": "memgraph_plugin.engine.model.views",
    "SchemaView": "memgraph_plugin.engine.model.views",
    "Session": "memgraph_plugin.api.session",
    "Store": "memgraph_plugin.engine.graph.store",
    "UpsertLinksResult": "memgraph_plugin.engine.model.results",
    "WriteApi": "memgraph_plugin.api.write",
    "apply_batch": "memgraph_plugin.engine.write.batch",
    "build_rollup": "memgraph_plugin.engine.write.rollups",
    "converter": "memgraph_plugin.engine.model.converter",
    "deep_freeze": "memgraph_plugin.engine.model.frozen",
    "extend_schema": "memgraph_plugin.engine.model.schema",
    "get_read_api": "memgraph_plugin.api.read",
    "get_write_api": "memgraph_plugin.api.write",
    "hub_for": "memgraph_plugin.api.injection",
    "load_schema": "memgraph_plugin.engine.model.schema",
    "memory_graph_for": "memgraph_plugin.service",
    "normalize_schema": "memgraph_plugin.engine.model.schema",
    "thaw": "memgraph_plugin.engine.model.frozen",
}

__all__ = [
    "BatchResult",
    "Changeset",
    "CommitInfo",
    "CompactResult",
    "CompactionCandidates",
    "CompactionGroup",
    "Compression",
    "CreateResult",
    "DEFAULT_SCHEMA",
    "DeleteLinksResult",
    "DeleteResult",
    "Edge",
    "EdgeKey",
    "EdgeSummaryView",
    "EdgeView",
    "EditResult",
    "FindResult",
    "FrozenDict",
    "INTERNAL_EDGE_TYPES",
    "InjectionHub",
    "InjectionState",
    "MemoryGraph",
    "MemoryGraphError",
    "NeighborView",
    "Node",
    "NodeBriefView",
    "NodeTypeSpec",
    "NodeView",
    "RELATIONS",
    "RankedView",
    "ReadApi",
    "Rejection",
    "RejectionError",
    "RelationCount",
    "SYMMETRIC_RELATIONS",
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

if TYPE_CHECKING:
    from memgraph_plugin.api.injection import InjectionHub, hub_for
    from memgraph_plugin.api.read import ReadApi, get_read_api
    from memgraph_plugin.api.session import Session
    from memgraph_plugin.api.write import WriteApi, get_write_api
    from memgraph_plugin.engine.graph.store import Changeset, Store
    from memgraph_plugin.engine.model.converter import converter
    from memgraph_plugin.engine.model.frozen import FrozenDict, deep_freeze, thaw
    from memgraph_plugin.engine.model.models import Edge, EdgeKey, Node
    from memgraph_plugin.engine.model.results import (
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
    from memgraph_plugin.engine.model.schema import (
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
    from memgraph_plugin.engine.model.views import (
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
    from memgraph_plugin.engine.write.batch import apply_batch
    from memgraph_plugin.engine.write.rollups import build_rollup
    from memgraph_plugin.errors import MemoryGraphError
    from memgraph_plugin.service import MemoryGraph, memory_graph_for


__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
