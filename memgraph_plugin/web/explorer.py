"""What the graph explorer page shows, read from storage: chats, a chat's graph, one node's detail.

Read-only and built from the stored chat (``LanceStorage.load_sync``), so the page sees every
writer's commits, this process's or another's. A chat's store is cached by its journal version
and rebuilt only when a commit lands.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from memgraph_plugin.engine.model.frozen import thaw
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.recall.trace import TRACE_DIR, TraceLog
from memgraph_plugin.type_colours import colour_of

GRAPH_LIMIT = 1500  # nodes drawn at once: cytoscape stays responsive; the rest is found by search
HISTORY_LIMIT = 50  # newest commits listed in a node's history
TRACE_LIMIT = 500  # newest recall traces searched for the ones that chose a node
SEARCH_LIMIT = 25
INTERNAL_EDGES = frozenset({"contains", "semantic_contains"})


class UnknownChat(LookupError):
    """The chat has no commits in this data dir."""


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return str(value)


def node_json(node: Node, *, brief: bool = False) -> dict[str, Any]:
    """One node as the page reads it (``brief``: what the graph needs to draw it)."""
    data: dict[str, Any] = {
        "id": node.id,
        "type": node.type,
        "title": node.title or node.id,
        "rollup": node.semantic_rollup,
        "depth": node.semantic_depth,
        "archived": node.archived,
        "pinned": node.pinned,
        "seq": node.seq_to,
    }
    if not brief:
        data.update(
            level=node.level,
            parent=node.parent_id or None,
            children=list(node.children_ids),
            fields={str(k): _text(v) for k, v in node.fields.items()},
            values={str(k): thaw(v) for k, v in node.fields.items()},  # as stored, for edits
            superseded_by=node.superseded_by,
        )
    return data


def _draw_order(node: Node) -> tuple[int, int, int, str]:
    """Entities first, then rollups (highest first), then the newest leaves."""
    leaf = 1 if node.seq_to is not None and not node.semantic_rollup else 0
    return (leaf, -node.semantic_depth, -(node.seq_to or 0), node.id)


class GraphExplorer:
    """The explorer's data: ``storage`` is a `LanceStorage`, ``store_from_dict`` builds a store."""

    def __init__(
        self,
        storage: Any,
        store_from_dict: Callable[[dict[str, Any]], Any],
        data_dir: str | Path,
        *,
        graph_limit: int = GRAPH_LIMIT,
    ) -> None:
        self.storage = storage
        self.store_from_dict = store_from_dict
        self.traces = TraceLog(Path(data_dir) / TRACE_DIR)
        self.graph_limit = graph_limit
        self._lock = threading.RLock()
        self._stores: dict[str, tuple[int, Any]] = {}
        self._known: dict[str, int] = {}

    # ------------------------------------------------------------------ chats

    def chats(self) -> list[dict[str, Any]]:
        """Every chat with commits, and its newest version."""
        with self._lock:
            chats = self.storage.chats_sync()
        return [{"id": chat, "version": self.version(chat)} for chat in chats]

    def version(self, chat_id: str) -> int:
        """The chat's newest journal version (a cheap check when nothing changed since)."""
        with self._lock:  # one storage handle, shared by the request threads
            known = self._known.get(chat_id)
            if known is not None and not self.storage.has_changed_sync(chat_id, known):
                return known
            version = int(self.storage.latest_version_sync(chat_id))
            self._known[chat_id] = version
            return version

    def store(self, chat_id: str) -> tuple[int, Any]:
        """The chat's store at its newest version (cached until a commit lands)."""
        version = self.version(chat_id)
        with self._lock:
            cached = self._stores.get(chat_id)
            if cached is not None and cached[0] == version:
                return cached
            if version == 0:
                raise UnknownChat(chat_id)
            state = self.storage.load_sync(chat_id)
            entry = (int(state.version), self.store_from_dict(state.data))
            self._stores[chat_id] = entry
            return entry

    def history(self, chat_id: str) -> tuple[Any, ...]:
        with self._lock:
            return tuple(self.storage.history_sync(chat_id))

    # ------------------------------------------------------------------ graph

    def graph(self, chat_id: str, *, include: Iterable[str] = ()) -> dict[str, Any]:
        """Nodes (active ones, up to the drawing limit, plus ``include``) and the edges between."""
        version, store = self.store(chat_id)
        active = [n for n in store.iter_nodes() if not n.archived]
        active.sort(key=_draw_order)
        shown = {n.id: n for n in active[: self.graph_limit]}
        for nid in include:
            node = store.node(nid)
            if node is not None:
                shown[nid] = node
        edges = [
            {"source": e.source, "target": e.target, "type": e.type}
            for e in store.iter_edges()
            if e.source in shown and e.target in shown
        ]
        return {
            "chat": chat_id,
            "version": version,
            "total_nodes": len(active),
            "total_edges": store.edge_count,
            "types": types_json(store.schema, {n.type for n in shown.values()}),
            "nodes": [node_json(n, brief=True) for n in shown.values()],
            "edges": edges,
        }

    def search(self, chat_id: str, query: str) -> list[dict[str, Any]]:
        """Nodes whose id, title or a field contains ``query`` (case-insensitive), best first."""
        needle = " ".join(query.split()).casefold()
        if not needle:
            return []
        _, store = self.store(chat_id)
        hits: list[tuple[int, Node]] = []
        for node in store.iter_nodes():
            if node.archived:
                continue
            title = (node.title or "").casefold()
            if node.id.casefold() == needle or title == needle:
                rank = 0
            elif title.startswith(needle):
                rank = 1
            elif needle in title:
                rank = 2
            elif any(needle in _text(v).casefold() for v in node.fields.values()):
                rank = 3
            else:
                continue
            hits.append((rank, node))
        hits.sort(key=lambda h: (h[0], _draw_order(h[1])))
        return [node_json(n, brief=True) for _, n in hits[:SEARCH_LIMIT]]

    # ------------------------------------------------------------------- node

    def node(self, chat_id: str, node_id: str) -> dict[str, Any] | None:
        """One node's fields, edges, the commits that touched it and the recalls that chose it."""
        version, store = self.store(chat_id)
        node = store.node(node_id)
        if node is None:
            return None

        def title_of(nid: str) -> str:
            other = store.node(nid)
            return (other.title or nid) if other is not None else nid

        edges = [
            {
                "direction": "out" if e.source == node_id else "in",
                "type": e.type,
                "other": e.target if e.source == node_id else e.source,
                "other_title": title_of(e.target if e.source == node_id else e.source),
                "seq": e.seq_to,
            }
            for e in store.edges_of(node_id)
        ]
        history = [
            {"version": r.version, "seq": r.seq, "kind": r.kind, "created_at": r.created_at}
            for r in self.history(chat_id)
            if node_id in r.node_ids
        ][-HISTORY_LIMIT:]
        recalls = []
        for trace in self.traces.read(chat_id, last=TRACE_LIMIT):
            why = next((i for i in trace.selected if i.id == node_id), None)
            pinned = node_id in trace.always_inject_ids
            if why is None and not pinned:
                continue
            by_person = node_id in trace.pinned_ids
            recalls.append(
                {
                    "seq": trace.seq,
                    "query": trace.query,
                    "router": trace.router,
                    "pinned": pinned,
                    "why": "pinned" if by_person else _inclusion_text(why),
                }
            )
        data = node_json(node)
        data.update(version=version, edges=edges, history=history, recalls=recalls)
        return data

    # ----------------------------------------------------------------- recall

    def last_recall(self, chat_id: str) -> dict[str, Any]:
        """The chat's newest recall trace (a proxied turn's, any process's): its query and each
        injected item with why it was chosen; ``available`` is false when no recall ran yet."""
        _, store = self.store(chat_id)  # an unknown chat is a 404, like every read
        traces = self.traces.read(chat_id, last=1)
        if not traces:
            return {"chat": chat_id, "available": False, "query": None, "time": None, "items": []}
        trace = traces[-1]
        cut = set(trace.cut)
        why = {i.id: i for i in trace.selected}
        by_person = set(trace.pinned_ids)
        order = [*trace.always_inject_ids, *(i.id for i in trace.selected)]
        items = []
        for node_id in dict.fromkeys(order):
            if node_id in cut:
                continue
            node = store.node(node_id)
            inclusion = why.get(node_id)
            items.append(
                {
                    "id": node_id,
                    "type": node.type if node is not None else None,
                    "title": (node.title or node_id) if node is not None else node_id,
                    "pinned": node_id in trace.always_inject_ids,
                    "why": "pinned" if node_id in by_person else _inclusion_text(inclusion),
                    "score": None if inclusion is None else inclusion.score,
                }
            )
        return {
            "chat": chat_id,
            "available": True,
            "query": trace.query,
            "time": trace.time,
            "seq": trace.seq,
            "router": trace.router,
            "reused": trace.reused,
            "injected_chars": trace.injected_chars,
            "budget_chars": trace.budget_chars,
            "cut": list(trace.cut),
            "items": items,
        }


def types_json(schema: Any, types: Iterable[str]) -> dict[str, dict[str, Any]]:
    """How the page draws each type: its colour (`memgraph_plugin.type_colours`, graph.html's
    too) and whether it lies on the timeline (rolled-up types, events: ordered by seq)."""
    out = {}
    for name in sorted(types):
        spec = schema.get(name)
        timeline = spec is not None and (spec.compression.hierarchical or spec.level == "episodic")
        out[name] = {"colour": colour_of(name), "timeline": timeline}
    return out


def _inclusion_text(inclusion: Any) -> str:
    """A recall's reason for choosing a node, in one line."""
    if inclusion is None:
        return "always injected"
    describe = getattr(inclusion, "describe", None)
    return describe() if callable(describe) else str(getattr(inclusion, "why", ""))
