"""`NodeEmbedder`: a profile plus the schema's embedding columns, turning nodes into vectors."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from memgraph_plugin.embedding.index import VectorIndex
from memgraph_plugin.embedding.profile import EmbeddingProfile, VectorBlock
from memgraph_plugin.embedding.text import (
    embedding_columns_of,
    is_searchable,
    node_id,
    node_text,
    node_type,
)


class NodeEmbedder:
    """Embeds nodes (engine records or JSON dicts) into `VectorBlock`s and keeps indices current."""

    def __init__(self, profile: EmbeddingProfile, schema: Any = None) -> None:
        self.profile = profile
        self.columns: Mapping[str, tuple[str, ...]] = (
            embedding_columns_of(schema) if schema is not None else {}
        )

    @property
    def name(self) -> str:
        return str(self.profile.name)

    def __call__(self, nodes: Iterable[Any]) -> VectorBlock | None:
        nodes = list(nodes)
        if not nodes:
            return None
        texts = [node_text(n, self.columns) for n in nodes]
        matrix = np.asarray(self.profile.embed(texts), dtype=np.float32)
        return VectorBlock(profile=self.name, ids=tuple(node_id(n) for n in nodes), matrix=matrix)

    def embed_query(self, query: str) -> np.ndarray:
        return np.asarray(self.profile.embed([query]), dtype=np.float32)[0]

    def new_index(self) -> VectorIndex:
        return VectorIndex(int(self.profile.dim), self.name)

    @staticmethod
    def apply(index: VectorIndex, nodes: Iterable[Any], block: VectorBlock | None) -> None:
        """Put `block`'s vectors for `nodes` into `index` with their types and flags."""
        nodes = list(nodes)
        if block is None or not nodes:
            return
        by_id = {node_id(n): n for n in nodes}
        ids = [i for i in block.ids if i in by_id]
        rows = [block.ids.index(i) for i in ids] if len(ids) != len(block.ids) else None
        matrix = block.matrix if rows is None else block.matrix[rows]
        index.upsert(
            ids,
            matrix,
            [node_type(by_id[i]) for i in ids],
            [is_searchable(by_id[i]) for i in ids],
        )
