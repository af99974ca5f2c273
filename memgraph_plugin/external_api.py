"""The contract's path for the legacy external API (`docs/contract.md`): the functions defined
in `memgraph_plugin.api.external`, importable from here."""

# ruff: noqa: F401 (each import is re-exported: it is named in `__all__`)

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

#: every function imported above
__all__ = [name for name in dir() if not name.startswith("_")]
