"""Stores opened from columns (as a chat opens from its snapshot), for the lazy-loading tests."""

from __future__ import annotations

from typing import Any

from memgraph_plugin import Store
from memgraph_plugin.storage.format.graph_columns import state_tables


def graph_tables(data: dict[str, Any]) -> tuple[Any, Any]:
    """The node and edge tables of the store dict `data` (normalised through a `Store` first)."""
    return state_tables(Store.from_dict(data).to_dict())


def opened(data: dict[str, Any]) -> Store:
    """A store opened from the columns of `data`: it makes its records on first read."""
    nodes, edges = graph_tables(data)
    return Store.from_columns(nodes, edges, data["nodeSeq"], data["seqCounter"])


def made_records(store: Store) -> int:
    """Records the store's node map holds now (not the ids it can make)."""
    return dict.__len__(store.internals()[0])
