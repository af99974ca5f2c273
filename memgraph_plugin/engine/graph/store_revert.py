"""Undo the last changesets of a store in memory: what a rollback of the newest commits needs,
at the cost of what those commits changed, never of the chat's size.

Each `Changeset` carries its `Before` (the nodes, edges and counters it replaced). Reverting a
run of them restores, for every node and edge any of them touched, its state before the oldest
one, in one transaction of the store's ordinary writes (so every index, the change log and the
next changeset follow).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.models import Edge, EdgeKey, Node
from .store import Store
from .store_transactions import Before

__all__ = ["revert"]


def revert(store: Store, befores: Sequence[Before]) -> None:
    """Give `store` its state before the oldest of `befores` (oldest first, as committed)."""
    if not befores:
        return
    nodes: dict[str, Node | None] = {}
    edges: dict[EdgeKey, Edge | None] = {}
    for before in reversed(befores):  # newest first: an older state overrides a newer one
        nodes.update(before.nodes)
        edges.update(before.edges)
    with store.transaction():
        for key, old in edges.items():  # edges go first: a node leaves only without edges
            current = store.edge(key)
            if current is not None and current != old:
                store.remove_edge(key)
        for old in nodes.values():
            if old is not None:
                store.put_node(old)
        for key, old in edges.items():
            if old is not None and store.edge(key) != old:
                store.add_edge(old)
        for node_id, old in nodes.items():
            if old is None:
                store.remove_node(node_id)
        store.set_node_seq(befores[0].node_seq)
        store.set_seq_counter(befores[0].seq_counter)
