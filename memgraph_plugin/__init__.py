"""memgraph_plugin: the long-term memory graph (schema, store + indices, views, read/write API).

The public names load on first use (PEP 562): importing engine code (``memgraph_plugin.engine...``)
loads neither the host nor the service.
"""

from __future__ import annotations

from host.lazy_exports import lazy_exports

#: the module that defines them -> the public names
_DEFINED_IN: dict[str, tuple[str, ...]] = {
    "memgraph_plugin.api.injection": ("InjectionHub", "hub_for"),
    "memgraph_plugin.api.read": ("ReadApi", "get_read_api"),
    "memgraph_plugin.api.session": ("Session",),
    "memgraph_plugin.api.write": ("WriteApi", "get_write_api"),
    "memgraph_plugin.engine.graph.store": ("Changeset", "Store"),
    "memgraph_plugin.engine.model.converter": ("converter",),
    "memgraph_plugin.engine.model.frozen": ("FrozenDict", "deep_freeze", "thaw"),
    "memgraph_plugin.engine.model.models": ("Edge", "EdgeKey", "Node"),
    "memgraph_plugin.engine.model.results": (
        "BatchResult", "CommitInfo", "CompactResult", "CreateResult", "DeleteLinksResult",
        "DeleteResult", "EditResult", "Rejection", "RejectionError", "UpsertLinksResult",
    ),
    "memgraph_plugin.engine.model.schema": (
        "Compression", "DEFAULT_SCHEMA", "INTERNAL_EDGE_TYPES", "NodeTypeSpec", "RELATIONS",
        "SYMMETRIC_RELATIONS", "Schema", "extend_schema", "load_schema", "normalize_schema",
    ),
    "memgraph_plugin.engine.model.views": (
        "CompactionCandidates", "CompactionGroup", "EdgeSummaryView", "EdgeView", "FindResult",
        "InjectionState", "NeighborView", "NodeBriefView", "NodeView", "RankedView",
        "RelationCount", "SampleNeighbor", "SchemaSpecView", "SchemaView",
    ),
    "memgraph_plugin.engine.write.batch": ("apply_batch",),
    "memgraph_plugin.engine.write.rollups": ("build_rollup",),
    "memgraph_plugin.errors": ("MemoryGraphError",),
    "memgraph_plugin.service": ("MemoryGraph", "memory_graph_for"),
}
#: public name -> the module that defines it
_EXPORTS = {name: module for module, names in _DEFINED_IN.items() for name in names}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
