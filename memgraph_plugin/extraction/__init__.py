"""Built-in extraction from raw text: the offline extractor (names, places, events, links; no
network, no model) and its plugin. See docs/extraction.md."""

from __future__ import annotations

from .naming.names import Mention, find_mentions
from .naming.resolve import KnownEntity, NameResolver
from .offline import extract_message_ops
from .plugin import PLUGIN_NAME, offline_extract

__all__ = [
    "PLUGIN_NAME",
    "KnownEntity",
    "Mention",
    "NameResolver",
    "extract_message_ops",
    "find_mentions",
    "offline_extract",
]
