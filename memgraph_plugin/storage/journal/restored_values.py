"""What a rollback restores, read for what it undoes only.

Rolling a chat back from its newest version to an earlier one through storage diffed the two
whole states, a dict per node each, and the chat was loaded again after: 1.7 s plus a 1.4 s
reopen at 100k nodes (minutes at 1M), where the same rollback of commits the process made
itself costs milliseconds (`PersistedChats.rollback_recent`). So the first regenerate after a
restart, the commonest first turn of a role-play, was the slowest turn of the chat.

`restored_values` reads the journal rows the rollback undoes (the commits after the target:
a few) for the nodes and edges they touched, and the target's state for those only (the
snapshot's rows and the journal's changes of those nodes and edges, read with a filter:
`LanceStorage.rows_at_sync`). The loaded chat is then rolled back in memory with them, like
with the commits it kept. An import or a
fork among the commits (a row pointing at a snapshot: everything replaced) answers None, and
the caller takes the whole-state path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.storage.format.graph_columns import (
    KEY_SEP,
    edge_dicts,
    node_dicts,
    picked,
    row_keys,
)
from memgraph_plugin.storage.format.json_shapes import EdgeKey, edge_key

__all__ = ["MAX_RESTORED", "PICKED_READ", "RestoredValues", "restored_values"]

#: Changes undone beyond this (nodes and edges, as the commits count them): None. Restored in
#: memory one by one, 100k nodes took 20 s, where the whole-state path takes about 3 s at any
#: size up to 100k nodes; 16k changes restore in about a second.
MAX_RESTORED = 16384
#: Node ids and edge sources up to this many are read with a filter (`rows_at_sync`); more:
#: the target's whole columns, then picked.
PICKED_READ = 4096


@attrs.frozen
class RestoredValues:
    """Each node and edge the undone commits touched as it was at the target (None: it did not
    exist then; node and edge dicts in the contract's JSON shape), and the target's counters."""

    nodes: Mapping[str, Mapping[str, Any] | None]
    edges: Mapping[EdgeKey, Mapping[str, Any] | None]
    node_seq: int
    seq_counter: int


def restored_values(storage: Any, chat_id: str, target: int, latest: int) -> RestoredValues | None:
    """What rolling `chat_id` back from version `latest` to `target` restores (`storage`: a
    `LanceStorage`); None when the commits in between are not all changes (an import, a fork)
    or change more than `MAX_RESTORED` nodes and edges. The caller makes sure `latest` is the
    chat's newest version."""
    applied = storage.journal.applied_between(chat_id, target, latest)
    if applied is None or applied > MAX_RESTORED:
        return None
    entries = storage.journal.entries(chat_id, target, latest)
    if not entries or entries[-1].version != latest:
        return None
    node_ids: set[str] = set()
    edge_keys: set[EdgeKey] = set()
    for entry in entries:
        if entry.snapshot is not None:  # the graph replaced whole
            return None
        change = entry.change()
        node_ids.update(str(node["id"]) for node in change.nodes)
        node_ids.update(change.nodes_removed)
        edge_keys.update(edge_key(edge) for edge in change.edges_added)
        edge_keys.update(tuple(key) for key in change.edges_removed)  # type: ignore[misc]
    nodes: dict[str, Mapping[str, Any] | None] = dict.fromkeys(node_ids)
    edges: dict[EdgeKey, Mapping[str, Any] | None] = dict.fromkeys(edge_keys)
    if target == 0:  # before the first commit: nothing existed
        return RestoredValues(nodes, edges, 0, 0)
    ids, sources = sorted(node_ids), sorted({key[0] for key in edge_keys})
    if len(ids) + len(sources) <= PICKED_READ:
        state = storage.rows_at_sync(chat_id, target, ids, sources)
    else:  # (a filter of that many literals costs more than reading every row)
        state = storage.state_at_sync(chat_id, version=target)
    node_table, edge_table = picked(*state.tables(), ids, sources)
    nodes.update(node_dicts(node_table))
    if edge_keys and edge_table.num_rows:
        wanted = pa.array(sorted(KEY_SEP.join(key) for key in edge_keys), pa.string())
        found = pc.is_in(row_keys(edge_table), value_set=wanted)
        for edge in edge_dicts(edge_table.filter(found)):
            edges[edge_key(edge)] = edge
    node_seq, seq_counter = state.counters
    return RestoredValues(nodes, edges, node_seq, seq_counter)
