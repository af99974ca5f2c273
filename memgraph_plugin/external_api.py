"""The contract's path for the legacy external API (`docs/contract.md`): the functions defined
in `memgraph_plugin.api.external`, importable from here."""

from __future__ import annotations

from memgraph_plugin.api.external import (
    apply_memory_graph_injection_update,
    create_empty_injection_state,
    get_currently_injected_node_ids,
    get_memory_graph_injection_state,
    get_node_by_id,
    list_recent_nodes,
    record_injected_node_ids,
    search_nodes_lexical,
)

__all__ = [
    "apply_memory_graph_injection_update",
    "create_empty_injection_state",
    "get_currently_injected_node_ids",
    "get_memory_graph_injection_state",
    "get_node_by_id",
    "list_recent_nodes",
    "record_injected_node_ids",
    "search_nodes_lexical",
]
