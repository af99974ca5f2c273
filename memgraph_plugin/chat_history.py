"""The contract's path (`docs/api.md`) for `memgraph_plugin.versions.chat_versions`: its public
names."""

from memgraph_plugin.versions.chat_versions import (  # noqa: F401
    ChatHistory,
    checked_chat_id,
)

__all__ = [
    "ChatHistory",
    "checked_chat_id",
]
