"""The embedding-profile protocol (what a plugin provides through `memgraph_embedding_profiles`)
and `VectorBlock`, the vectors a profile makes for some nodes."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np

from memgraph_plugin.embedding.row_blocks import RowBlocks


@runtime_checkable
class EmbeddingProfile(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    `name` is what a user writes in the host settings (`embedding_profile = "<name>"`).
    `embed` returns an array of shape `(len(texts), dim)`; an empty text gives a zero row.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@attrs.frozen(eq=False)
class VectorBlock:
    """Embeddings of some nodes: one L2-normalised float32 row per id, made by `profile`.

    Made from a matrix (`VectorBlock(profile, ids, matrix)`) or from `RowBlocks` (vectors as
    read, not joined: `rows`); `matrix` is the rows as one array, joined on first read."""

    profile: str
    ids: tuple[str, ...]
    rows: RowBlocks = attrs.field(alias="matrix", converter=RowBlocks.of)  # (len(ids), dim)
    #: the ids as read from storage (a pyarrow string array), when they were: compared with a
    #: loaded node column in C, not string by string
    id_column: Any = attrs.field(default=None, kw_only=True)
    #: the row of each id in the node table of the state it was loaded for (int64), when
    #: known: an open takes the ids, types and flags from that table's arrays by it
    state_rows: np.ndarray | None = attrs.field(default=None, kw_only=True)

    @functools.cached_property
    def matrix(self) -> np.ndarray:
        """The rows as one float32 matrix (a copy when they are held in several blocks)."""
        return self.rows.array()

    @property
    def dim(self) -> int:
        return self.rows.dim
