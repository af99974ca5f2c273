"""The host's version, in a leaf module so any part of the host (and the entry point, before
anything else is imported) can read it without a cycle."""

from __future__ import annotations

import importlib.metadata

__version__ = "0.1.0"

#: The distribution this package is installed as.
DISTRIBUTION = "memgraph-host"


def own_version() -> str:
    """This distribution's installed version (the ``host`` package's own as a fallback)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return __version__
