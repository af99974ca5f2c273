"""The embedding-profile protocol (what a plugin provides through `memgraph_embedding_profiles`)
and `VectorBlock`, the vectors a profile makes for some nodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs
import numpy as np


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
    """Embeddings of some nodes: one L2-normalised float32 row per id, made by `profile`."""

    profile: str
    ids: tuple[str, ...]
    matrix: np.ndarray  # shape (len(ids), dim), float32

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1]) if self.matrix.ndim == 2 else 0
