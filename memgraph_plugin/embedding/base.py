"""The embedding-profile protocol: what a plugin provides through `memgraph_embedding_profiles`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

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
