"""Persistence of chats: the `Persistence` interface and its LanceDB implementation.

LanceDB persistence only: the loaded chats the service keeps (`PersistedChats`) are in
`memgraph_plugin.chats`, above this package; nothing here imports the host or the service."""

from memgraph_plugin.storage.database.escape import sql_literal, where_eq
from memgraph_plugin.storage.errors import ConflictError, StorageError
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
