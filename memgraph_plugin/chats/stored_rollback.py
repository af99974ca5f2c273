"""A loaded chat's rollback over commits it did not keep (`RecentCommits` holds only this
process's newest): what they replaced, as a `Before`, from storage (`restored_values`)."""

from __future__ import annotations

from typing import Any

from memgraph_plugin.chats.loaded_chat import LoadedChat
from memgraph_plugin.engine.graph.store_transactions import Before
from memgraph_plugin.engine.model.json_records import edge_from_dict, node_from_dict
from memgraph_plugin.engine.model.models import EdgeKey
from memgraph_plugin.storage.errors import StorageError

__all__ = ["stored_befores"]


async def stored_befores(storage: Any, chat: LoadedChat, target: int) -> Before | None:
    """What the chat's commits after version `target` replaced (each node and edge they
    touched as it was at `target`), or None when storage cannot say (no such read, or an
    import or fork among them)."""
    read = getattr(storage, "restored_values", None)
    if read is None:
        return None
    try:
        values = await read(chat.chat_id, target, chat.version)
    except StorageError:  # (a journal pruned before `target`): the storage path says so
        return None
    if values is None:
        return None
    nodes = {
        nid: None if raw is None else node_from_dict(raw, key=nid)
        for nid, raw in values.nodes.items()
    }
    edges = {
        EdgeKey(*key): None if raw is None else edge_from_dict(raw)
        for key, raw in values.edges.items()
    }
    return Before(nodes, edges, values.node_seq, values.seq_counter)
