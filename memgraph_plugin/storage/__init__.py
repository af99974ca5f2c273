"""Persistence of chats: the `Persistence` interface and its LanceDB implementation."""

from memgraph_plugin.storage.errors import ConflictError, StorageError
from memgraph_plugin.storage.escape import sql_literal, where_eq
from memgraph_plugin.storage.journal.change_codec import (
    StateBuilder,
    changeset_to_change,
    diff_states,
    edge_to_json,
    empty_state,
    node_to_json,
)
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.persistence import (
    ChangeRecord,
    ChatState,
    CommitRecord,
    Persistence,
    VectorBlock,
)
from memgraph_plugin.storage.settings import StorageSettings, number_setting

__all__ = [
    "PersistedChats",
    "persistence_for_host",
    "ChangeRecord",
    "ChatState",
    "CommitRecord",
    "ConflictError",
    "LanceStorage",
    "Persistence",
    "StateBuilder",
    "StorageError",
    "StorageSettings",
    "VectorBlock",
    "changeset_to_change",
    "diff_states",
    "edge_to_json",
    "empty_state",
    "node_to_json",
    "number_setting",
    "sql_literal",
    "where_eq",
]


def __getattr__(name: str) -> object:
    """`PersistedChats` and `persistence_for_host` load lazily (they import the embedding package,
    which imports this package's value types)."""
    if name == "PersistedChats":
        from memgraph_plugin.chats.chat_cache import PersistedChats

        return PersistedChats
    if name == "persistence_for_host":
        from memgraph_plugin.chats.factory import persistence_for_host

        return persistence_for_host
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
