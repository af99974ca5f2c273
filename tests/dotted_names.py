"""Dotted names the docs print (``pkg.mod.Name``) resolved to what they name."""

from __future__ import annotations

import importlib


def resolve_dotted(dotted: str) -> object:
    """The longest importable module prefix of `dotted`, then attributes; raises
    `ModuleNotFoundError` when no prefix imports, `AttributeError` for a missing name."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)
