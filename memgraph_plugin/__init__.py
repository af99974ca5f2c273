"""memgraph_plugin: the long-term memory graph (schema, store + indices, views, read/write API)."""

from .errors import MemoryGraphError
from .frozen import FrozenDict, deep_freeze, thaw
from .models import Edge, EdgeKey, Node
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

__all__ = [
    "DEFAULT_SCHEMA",
    "INTERNAL_EDGE_TYPES",
    "RELATIONS",
    "SYMMETRIC_RELATIONS",
    "Changeset",
    "Compression",
    "Edge",
    "EdgeKey",
    "FrozenDict",
    "MemoryGraphError",
    "Node",
    "NodeTypeSpec",
    "Schema",
    "Store",
    "deep_freeze",
    "extend_schema",
    "load_schema",
    "normalize_schema",
    "thaw",
]
