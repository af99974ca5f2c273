"""Persistence of chats: the `Persistence` interface and its LanceDB implementation."""

from memgraph_plugin.storage.base import (
    ChangeRecord,
    ChatState,
    CommitRecord,
    Persistence,
    VectorBlock,
)
from memgraph_plugin.storage.codec import (
    StateBuilder,
    changeset_to_change,
    diff_states,
    edge_to_json,
    empty_state,
    node_to_json,
)
from memgraph_plugin.storage.errors import ConflictError, StorageError
from memgraph_plugin.storage.escape import sql_literal, where_eq
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.settings import StorageSettings

__all__ = [
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
    "sql_literal",
    "where_eq",
]
