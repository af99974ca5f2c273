"""An embedding profile for tests that counts what it embeds, and the plugin that offers it."""

from __future__ import annotations

import numpy as np

from host import hookimpl
from memgraph_plugin.embedding.hashing import HashingProfile


class CountingProfile(HashingProfile):
    """The hashing profile under another name (so: no stored vectors of it), counting texts."""

    def __init__(self) -> None:
        super().__init__(name="counting")
        self.texts = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return super().embed(texts)


class OffersProfile:
    """A plugin offering `profile` through ``memgraph_embedding_profiles``."""

    def __init__(self, profile: CountingProfile) -> None:
        self.profile = profile

    @hookimpl
    def memgraph_embedding_profiles(self):
        return [self.profile]
