"""Embedding profiles (`wordllama`, the default, and `hashing` built in) and the per-chat vector
index."""

from memgraph_plugin.embedding.embedder import NodeEmbedder
from memgraph_plugin.embedding.hashing import HashingProfile
from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.embedding.profile import EmbeddingProfile
from memgraph_plugin.embedding.registry import (
    BUILTIN_PROFILES,
    DEFAULT_PROFILE,
    UnknownProfileError,
    available_profiles,
    plugin_profiles,
    resolve_profile,
)
from memgraph_plugin.embedding.text import embedding_columns_of, is_searchable, node_text
from memgraph_plugin.embedding.wordllama import WordLlamaProfile, WordLlamaUnavailable

__all__ = [
    "BUILTIN_PROFILES",
    "DEFAULT_PROFILE",
    "EmbeddingProfile",
    "HashingProfile",
    "NodeEmbedder",
    "UnknownProfileError",
    "VectorIndex",
    "WordLlamaProfile",
    "WordLlamaUnavailable",
    "available_profiles",
    "embedding_columns_of",
    "is_searchable",
    "node_text",
    "plugin_profiles",
    "resolve_profile",
]
