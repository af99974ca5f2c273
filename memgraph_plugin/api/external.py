"""The legacy external API: injected ids, lexical search, recent nodes, node by id.

Read-only and forgiving about absence: a `None` store, a `None` or empty query or id gives an
empty result (or `None`) instead of raising, so callers can call these unconditionally. A value
of the wrong kind (a store that is no `Store`, a numeric query, a limit that is no non-negative
integer, exclude ids that are no ids) is ``BAD_ARGS`` naming the argument.
`record_injected_node_ids` is how the recall pipeline sets a chat's injection state (listeners and
``memgraph_injection_changed`` fire). Injection state is per chat.

As the contract has it, ``store`` may also be a plain dict in the contract's JSON shape (what
``Store.to_dict()`` writes); it is read as it is at the call. The original's injection-state
helpers are here too: `create_empty_injection_state`, `apply_memory_graph_injection_update`,
`get_memory_graph_injection_state`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ..engine.graph.store import Store, timeline_key
from ..engine.keyword.keyword_text import _flatten  # the words keyword search reads of a value
from ..engine.model.models import Node
from ..engine.model.views import InjectionState, NodeView
from ..errors import MemoryGraphError, bad_args, check_bool, check_int, check_str
from .injection import hub_for

__all__ = [
    "INJECTION_KEYS",
    "LEXICAL_FIELDS",
    "PREVIEW_LIMIT",
    "InjectedNodeIds",
    "apply_memory_graph_injection_update",
    "create_empty_injection_state",
    "get_currently_injected_node_ids",
    "get_memory_graph_injection_state",
    "get_node_by_id",
    "list_recent_nodes",
    "record_injected_node_ids",
    "search_nodes_lexical",
]

#: The fields a lexical match looks at (besides the node title), as the recall scorer does.
LEXICAL_FIELDS: tuple[str, ...] = (
    "title",
    "name",
    "summary",
    "state",
    "traits",
    "constraint",
    "key_sentences",
    "aliases",
)
PREVIEW_LIMIT = 300


@attrs.define
class InjectedNodeIds:
    """What `get_currently_injected_node_ids` returns: two fresh sets the caller may change."""

    always_inject_ids: set[str]
    recall_selected_ids: set[str]


def get_currently_injected_node_ids(ctx: Any) -> InjectedNodeIds:
    """The chat's always-inject and recall-selected ids, as defensive copies."""
    state = get_memory_graph_injection_state(ctx)
    return InjectedNodeIds(set(state.always_inject_ids), set(state.recall_selected_ids))


def record_injected_node_ids(
    ctx: Any,
    *,
    always_inject_ids: Iterable[str],
    recall_selected_ids: Iterable[str],
    visible_ids: Iterable[str] = (),
) -> InjectionState:
    """Set the chat's injection state (listeners run, ``memgraph_injection_changed`` fires)."""
    return hub_for(ctx).set(
        always_inject_ids=always_inject_ids,
        recall_selected_ids=recall_selected_ids,
        visible_ids=visible_ids,
    )


#: The keys an injection update may carry (the contract's camelCase spellings accepted too).
INJECTION_KEYS: Mapping[str, str] = {
    "always_inject_ids": "always_inject_ids",
    "alwaysInjectIds": "always_inject_ids",
    "recall_selected_ids": "recall_selected_ids",
    "recallSelectedIds": "recall_selected_ids",
    "visible_ids": "visible_ids",
    "visibleIds": "visible_ids",
}


def create_empty_injection_state() -> InjectionState:
    """An empty frozen injection state (the contract's ``createEmptyInjectionState``)."""
    return InjectionState()


def get_memory_graph_injection_state(ctx: Any) -> InjectionState:
    """The chat's current frozen injection state, the same as a session's
    ``get_injection_state()``; empty for a ``None`` context."""
    return hub_for(ctx).state if ctx is not None else InjectionState()


def apply_memory_graph_injection_update(ctx: Any, update: Any) -> InjectionState:
    """Set the id sets ``update`` names (a mapping with any of ``always_inject_ids``,
    ``recall_selected_ids``, ``visible_ids``, or their camelCase spellings); the ones it does not
    name keep their value. Listeners run and ``memgraph_injection_changed`` fires, as for
    `record_injected_node_ids`. Returns the new state."""
    if not isinstance(update, Mapping):
        raise bad_args("update", f"expected a mapping of id lists, got {type(update).__name__}")
    changes: dict[str, Any] = {}
    for key, value in update.items():
        name = INJECTION_KEYS.get(key)
        if name is None:
            allowed = ", ".join(sorted(set(INJECTION_KEYS.values())))
            raise bad_args(f"update.{key}", f"unknown key; expected one of {allowed}")
        changes[name] = value
    return hub_for(ctx).set(**changes)


def _lexical_text(node: Node) -> str:
    parts = [node.title] if node.title else []
    for key in LEXICAL_FIELDS:
        _flatten(node.fields.get(key), parts)
    return " ".join(parts)


def _preview(node: Node) -> str:
    text = _lexical_text(node)
    return text if len(text) <= PREVIEW_LIMIT else text[:PREVIEW_LIMIT]


def _row(node: Node) -> dict[str, Any]:
    row: dict[str, Any] = {"id": node.id, "preview": _preview(node), "type": node.type}
    if node.seq_to is not None:
        row["time"] = node.seq_to
    return row


def _store(store: Any) -> Store | None:
    """A `Store`, None, or the contract's plain dict store (read through `Store.from_dict`)."""
    if isinstance(store, Mapping):
        try:
            return Store.from_dict(store)
        except MemoryGraphError as exc:
            raise bad_args("store", f"not a store in the contract's shape: {exc.message}") from None
    if store is not None and not isinstance(store, Store):
        raise bad_args(
            "store", f"expected a Store, a dict store or None, got {type(store).__name__}"
        )
    return store


def _exclude_set(exclude_ids: Any) -> frozenset[str]:
    """None: nothing; one id; or an iterable of ids."""
    if exclude_ids is None:
        return frozenset()
    if isinstance(exclude_ids, str):
        return frozenset((exclude_ids,))
    if isinstance(exclude_ids, (bytes, dict)) or not isinstance(exclude_ids, Iterable):
        raise bad_args("exclude_ids", f"expected ids, got {type(exclude_ids).__name__}")
    out = frozenset(exclude_ids)
    for item in out:
        if not isinstance(item, str):
            raise bad_args("exclude_ids", f"expected ids (strings), found {item!r}")
    return out


def search_nodes_lexical(
    store: Any, query: Any, *, limit: int | None = None, exclude_ids: Any = None
) -> dict[str, list[dict[str, Any]]]:
    """Case-insensitive substring search over title + the lexical fields, newest first.

    ``{"nodes": [{"id", "preview", "type", "time"?}]}``; archived nodes are skipped.
    """
    store = _store(store)
    check_str("query", query, allow_none=True)
    cap = check_int("limit", limit, minimum=0, allow_none=True)
    excluded = _exclude_set(exclude_ids)
    if store is None or query is None or not query.strip():
        return {"nodes": []}
    needle = query.strip().lower()
    hits = [
        node
        for node in store.iter_nodes()
        if not node.archived and node.id not in excluded and needle in _lexical_text(node).lower()
    ]
    hits.sort(key=timeline_key, reverse=True)  # newest first, like list_recent_nodes
    if cap is not None:
        hits = hits[:cap]
    return {"nodes": [_row(n) for n in hits]}


def list_recent_nodes(
    store: Any, *, limit: int | None = 10, exclude_ids: Any = None
) -> dict[str, list[dict[str, Any]]]:
    """Active nodes in reverse timeline order (newest first), ``limit`` (default 10) of them."""
    store = _store(store)
    cap = check_int("limit", limit, minimum=0, allow_none=True)
    if cap is None:  # null / undefined in the contract: the default
        cap = 10
    excluded = _exclude_set(exclude_ids)
    if store is None:
        return {"nodes": []}
    live = (n for n in store.iter_nodes() if not n.archived and n.id not in excluded)
    nodes = heapq.nlargest(cap, live, key=timeline_key)  # newest first
    return {"nodes": [_row(n) for n in nodes]}


def get_node_by_id(store: Any, id: Any, *, include_neighbors: bool = True) -> dict[str, Any] | None:
    """``{"node": NodeView, "neighbors": [{"id", "edge_type", "relation"?}]}`` or None."""
    store = _store(store)
    check_str("id", id, allow_none=True)
    check_bool("include_neighbors", include_neighbors)
    if store is None or not id:
        return None
    node = store.node(id)
    if node is None:
        return None
    neighbors: list[dict[str, Any]] = []
    if include_neighbors:
        seen: set[tuple[str, str]] = set()
        for key in (*store.out_edges(id), *store.in_edges(id)):
            other = key.target if key.source == id else key.source
            if (other, key.type) in seen:
                continue
            seen.add((other, key.type))
            entry: dict[str, Any] = {"id": other, "edge_type": key.type}
            if key.type not in ("contains", "semantic_contains"):
                entry["relation"] = key.type
            neighbors.append(entry)
    return {"node": NodeView.from_node(node), "neighbors": neighbors}
