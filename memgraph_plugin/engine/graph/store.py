"""The in-memory `Store`: nodes, edges and every index the per-turn read paths need.

Indices (adjacency, parent -> children, the visible set, the recency-ordered candidate pool, the
keyword index, a view cache) follow every write, so reads never rescan the graph. Writes happen
inside `transaction()`; an exception undoes every change (indices included) and a clean exit that
changed something bumps `version` and adds to the pending `Changeset`.

The store's parts live beside it, one concept each: `candidate_pool` (recency keys and the
chunked pool), `edge_records` (the edge tuples and their stored form), `store_transactions`
(transactions, changesets and the change log) and `store_loading` (bulk loading and `to_dict`).

Why this module is longer than 500 lines: it is the graph's one read surface, and the indices it
keeps must change together inside one transaction; its parts that stand alone already live in the
modules above.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from ...errors import MemoryGraphError, bad_args
from ..index.candidate_pool import (
    EMPTY_TYPE_POOL,
    PoolKey,
    PoolMembership,
    SortedPool,
    TypePool,
    recency_key,
    timeline_key,
)
from ..index.name_index import NameIndex, id_order
from ..keyword.keyword_index import KeywordIndex
from ..load.lazy_nodes import LazyNodes
from ..load.store_loading import StoreLoading
from ..model.edge_records import EdgeRec, edge_keys, edge_of, normalize_edge, normalize_key
from ..model.frozen import JsonFields
from ..model.models import Edge, EdgeKey, Node
from ..model.schema import DEFAULT_SCHEMA, Schema, load_schema
from ..model.views import NodeView
from .store_transactions import Changeset, StoreTransactions

__all__ = [
    "Changeset",
    "Store",
    "TypePool",
    "normalize_edge",
    "normalize_key",
    "recency_key",
    "timeline_key",
]

_SortedPool = SortedPool  # the name the store's tests know
_edge_of = edge_of


_intern = sys.intern
BULK_PARSE = 256  # dirty nodes past which the keyword index parses their fields at once


class Store(StoreLoading, StoreTransactions, PoolMembership):
    """A chat's memory graph with its indices. Only the batch pipeline writes to it."""

    def __init__(self, *, schema: Schema | Any = None) -> None:
        self._schema: Schema = load_schema(schema) if schema is not None else DEFAULT_SCHEMA
        self._deferred: dict[str, Any] = {}  # attributes a columnar load left to first read
        self._nodes: dict[str, Node] = {}
        self._edges: dict[EdgeKey, EdgeRec] = {}  # in serial (insertion) order
        self._next_serial = 0
        # adjacency: node -> its edges' records in serial order (the same tuples as `_edges`;
        # a list, not a dict: most nodes have a few edges, and a small dict weighs three lists)
        self._out: dict[str, list[EdgeRec]] = {}
        self._in: dict[str, list[EdgeRec]] = {}
        self._kids: dict[str, list[str]] = {}  # parent -> children (lists: most have a few)
        self._visible: set[str] = set()
        self._pool_of: dict[str, tuple[PoolKey, str]] = {}  # id -> (key, lower-case type)
        self._loaded_order: Any = None  # `StoreLoading._order_as_loaded`
        self._anchor: dict[str, str | None] = {}  # id -> nearest pool member up from it
        self._pool = SortedPool()
        self._type_pools: dict[str, SortedPool] = {}
        self._views: dict[str, NodeView] = {}
        self._keywords = KeywordIndex()
        self._kw_dirty: dict[str, None] = {}  # nodes to (re-)index before the next search
        self._names = NameIndex(self._schema)  # latest-only identity
        self._names_dirty: dict[str, None] = {}  # nodes to re-read before the next lookup
        self._node_seq = 0
        self._seq_counter = 0
        self.version = 0
        self._clear_pool_caches()
        self._visible_cache: frozenset[str] | None = None
        #: the read side's kept edge summaries (`summaries.summaries_for`); never read here
        self.summaries: Any = None
        self._init_transactions()

    # -- schema and counters -----------------------------------------------------------------

    @property
    def schema(self) -> Schema:
        return self._schema

    def set_schema(self, schema: Schema | Any) -> None:
        """Switch schemas; the keyword index (which reads schema columns), the name index and
        visibility (which types are hierarchical) follow."""
        self._schema = load_schema(schema)
        self._keywords.clear()
        self._kw_dirty = dict.fromkeys(self._nodes)
        self._names = NameIndex(self._schema, self._nodes.items())
        self._names_dirty = {}
        for nid in self._nodes:
            self._reindex(nid, content_changed=False)
        self._anchor = self._anchors_from_scratch()
        self._clear_pool_caches()
        self._restart_changes()

    @property
    def node_seq(self) -> int:
        return self._node_seq

    @property
    def seq_counter(self) -> int:
        return self._seq_counter

    def __len__(self) -> int:
        return len(self._nodes)

    # -- reads -------------------------------------------------------------------------------

    def node(self, id: str) -> Node | None:
        return self._nodes.get(id)

    def iter_nodes(self) -> Iterator[Node]:  # a loaded store makes every record, once
        return iter(tuple(self._nodes.values()))

    def column_ids(self) -> tuple[list[str], Mapping[str, int]] | None:
        """`LazyNodes.column_ids` of a store loaded from columns (read only); else None."""
        return self._nodes.column_ids() if isinstance(self._nodes, LazyNodes) else None

    def node_ids(self) -> Iterator[str]:
        """Every node id, in `iter_nodes` order, without making records."""
        nodes = self._nodes
        return nodes.ids() if isinstance(nodes, LazyNodes) else iter(tuple(nodes))

    def edge(self, key: tuple[str, str, str]) -> Edge | None:
        rec = self._edges.get(normalize_key(key))
        return None if rec is None else _edge_of(rec)

    def iter_edges(self) -> Iterator[Edge]:
        return iter(tuple(map(_edge_of, self._edges.values())))

    @property
    def edge_count(self) -> int:
        return len(self._edges)

    def out_edges(
        self, id: str, limit: int | None = None, *, newest: bool = False
    ) -> Collection[EdgeKey]:
        """The keys of `id`'s outgoing edges, oldest first. With `limit`, only the first (or,
        `newest`, the last) `limit`: a hub's thousands of edges are not copied to read a few."""
        return edge_keys(self._out.get(id, ()), limit, newest)

    def in_edges(
        self, id: str, limit: int | None = None, *, newest: bool = False
    ) -> Collection[EdgeKey]:
        """The keys of `id`'s incoming edges, oldest first; `limit` and `newest` as `out_edges`."""
        return edge_keys(self._in.get(id, ()), limit, newest)

    def degree(self, id: str) -> int:
        """How many edges touch `id` (counted, not copied)."""
        return len(self._out.get(id, ())) + len(self._in.get(id, ()))

    def edges_of(self, id: str) -> tuple[Edge, ...]:
        """Every edge touching `id` (out edges first), without copying the adjacency twice."""
        out = [_edge_of(r) for r in self._out.get(id, ())]
        out.extend(_edge_of(r) for r in self._in.get(id, ()))
        return tuple(out)

    def internals(
        self,
    ) -> tuple[
        dict[str, Node],
        dict[EdgeKey, EdgeRec],
        dict[str, list[EdgeRec]],
        dict[str, list[EdgeRec]],
        None,
        dict[str, list[str]],
    ]:
        """The live maps (nodes, edge records, out, in, -, kids) for the engine's hot read loops
        (projection). Edge records are ``(source, target, type, seq_to, serial)`` tuples; out
        and in map a node to the list of its edges' records in serial order; the fifth slot is
        unused (edge serials live in the records). Read-only by contract: never
        mutate them, never hand them out."""
        return self._nodes, self._edges, self._out, self._in, None, self._kids

    def edge_serial(self, key: EdgeKey) -> int:
        """Insertion rank of an edge (the order `iter_edges` follows)."""
        return self._edges[key][4]

    def kids(self, id: str) -> Collection[str]:
        """Ids whose `parent_id` is `id` (the live index: do not mutate)."""
        return self._kids.get(id, ())

    def child_ids(self, id: str) -> frozenset[str]:
        """Ids of nodes whose `parent_id` is `id` (the index, not the `children_ids` field)."""
        return frozenset(self._kids.get(id, ()))

    def is_visible(self, id: str) -> bool:
        return id in self._visible

    def visible_ids(self) -> frozenset[str]:
        cache = self._visible_cache
        if cache is None:
            cache = self._visible_cache = frozenset(self._visible)
        return cache

    @property
    def keywords(self) -> KeywordIndex:
        """The keyword index, current: nodes written since the last search are (re-)indexed
        here, so a write pays nothing for text it never searches."""
        dirty = self._kw_dirty
        if dirty:
            index, nodes, get = self._keywords, self._nodes, self._schema.get
            if len(dirty) > BULK_PARSE:  # e.g. the first search after a load: fields in one parse
                JsonFields.parse_all(n.fields for nid in dirty if (n := nodes.get(nid)) is not None)
            for nid in dirty:
                if nid not in nodes:
                    index.remove(nid)
            index.update_many(
                (node, get(node.type)) for nid in dirty if (node := nodes.get(nid)) is not None
            )
            self._kw_dirty = {}
        return self._keywords

    def name_index(self, schema: Schema | None = None) -> NameIndex:
        """The latest-only name index under `schema` (default: the store's), current: nodes
        written since the last lookup are re-read here. Built with one scan by the first lookup
        after a load (the load marks every node), when the schema changes, and when asked for
        another schema; every write after that only marks its node, rollbacks included.
        """
        schema = self._schema if schema is None else schema
        index = self._names
        if index.schema is not schema and index.schema != schema:
            index = self._names = NameIndex(schema, self._nodes.items())
            self._names_dirty = {}
        elif self._names_dirty:
            nodes = self._nodes
            index.note_all((nid, nodes.get(nid)) for nid in self._names_dirty)
            self._names_dirty = {}
        return index

    def view(self, id: str) -> NodeView | None:
        """The cached `NodeView` of a node (rebuilt after the node changes)."""
        v = self._views.get(id)
        if v is None:
            node = self._nodes.get(id)
            if node is None:
                return None
            v = self._views[id] = NodeView.from_node(node)
        return v

    def candidate_pool(self) -> tuple[Node, ...]:
        """Visible, active, non-diagnostic, non-episodic nodes in recency order (cached)."""
        return self._pool.frozen().nodes

    def candidate_views(self) -> tuple[NodeView, ...]:
        """`candidate_pool()` as views, kept alongside it."""
        return self._pool.frozen().views

    def candidate_keys(self) -> tuple[PoolKey, ...]:
        """The pool's recency keys ``(-seq, -depth, id)``, ascending (for bisecting by seq)."""
        return self._pool.frozen().keys

    def pool_rank(self) -> dict[str, int]:
        """id -> position in the candidate pool (cached; a new dict after every change)."""
        rank = self._pool_rank
        if rank is None:
            rank = self._pool_rank = {k[2]: i for i, k in enumerate(self._pool.frozen().keys)}
        return rank

    def pool_order(self) -> Mapping[str, tuple[PoolKey, str]]:
        """id -> (recency key, lower-case type) of every pool member: a read-only live view
        (no copy), its values ordered like the pool; for bounded searches that break ties by
        recency without building `pool_rank` (after a columnar load, until the pool changes,
        from the load's arrays: `_order_as_loaded`)."""
        loaded = self._order_as_loaded()
        return MappingProxyType(self._pool_of) if loaded is None else loaded

    def type_pool(self, type_id: str) -> TypePool:
        """The candidate pool of one type, matched case-insensitively (kept per type)."""
        pool = self._type_pools.get(type_id.lower())
        return EMPTY_TYPE_POOL if pool is None else pool.frozen()

    def newest_in_pool(self, type_id: str, n: int) -> list[NodeView]:
        """The `n` newest pool members of one type (recency order), without copying the pool."""
        pool = self._type_pools.get(type_id.lower())
        if pool is None or n <= 0:
            return []
        views = (self.view(node.id) for node in pool.head(n))
        return [v for v in views if v is not None]

    def newest_leaf(self, type_id: str, field: str) -> NodeView | None:
        """The newest leaf of one type's pool (depth 0, no rollup): the highest seq, then the
        highest whole-number `field` (none: lowest), then the newest id (`id_order`). Found from
        the pool's keys and the values of `field` (read from the node columns for records not
        made yet): only the answer's view is made, however many leaves share its seq."""
        pool = self._type_pools.get(type_id.lower())
        if pool is None:
            return None
        nodes = self._nodes
        for ids in pool.leaves_by_seq():
            if isinstance(nodes, LazyNodes):
                facts = nodes.field_and_rollup(ids, field)
            else:
                facts = [(nodes[i].fields.get(field), nodes[i].semantic_rollup) for i in ids]
            numbers = {
                nid: value if type(value) is int else -1
                for nid, (value, rollup) in zip(ids, facts, strict=True)
                if not rollup
            }
            if numbers:
                top = max(numbers.values())
                newest = max((i for i, v in numbers.items() if v == top), key=id_order)
                return self.view(newest)
        return None

    def in_pool(self, id: str) -> bool:  # after an open: from the load's arrays (pool_order)
        return id in (self._pool_of if (loaded := self._order_as_loaded()) is None else loaded)

    # -- writes ------------------------------------------------------------------------------

    def allocate_id(self) -> str:
        """A fresh node id ``n_<k>`` (the counter skips ids already taken)."""
        if self._depth == 0:
            with self.transaction():
                return self.allocate_id()
        self._undo.append(("c", "node_seq", self._node_seq))
        while True:
            self._node_seq += 1
            new_id = f"n_{self._node_seq}"
            if new_id not in self._nodes:
                return new_id

    def set_seq_counter(self, value: int) -> None:
        self._set_counter("seq_counter", value)

    def set_node_seq(self, value: int) -> None:
        """Set the id counter (a revert restores it; `allocate_id` only ever raises it)."""
        self._set_counter("node_seq", value)

    def _set_counter(self, name: str, value: int) -> None:
        """Set `node_seq` or `seq_counter` inside a transaction (one of its own when none is
        open), recording the old value for a revert."""
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad_args(name, f"expected a non-negative integer, got {value!r}")
        attr = f"_{name}"
        if value == getattr(self, attr):
            return
        if self._depth == 0:
            with self.transaction():
                self._set_counter(name, value)
            return
        self._undo.append(("c", name, getattr(self, attr)))
        setattr(self, attr, value)

    def remove_node(self, id: str) -> bool:
        """Remove a node that has no edges left (a revert undoing its creation); False when
        there is none. Writes never delete: they archive."""
        old = self._nodes.get(id)
        if old is None:
            return False
        if self._out.get(id) or self._in.get(id):
            raise MemoryGraphError("BAD_ARGS", f"node {id!r} still has edges")
        if self._depth == 0:
            with self.transaction():
                return self.remove_node(id)
        self._undo.append(("n", id, old))
        self._drop_node_raw(id)
        self._note(id, "moved")
        return True

    def put_node(self, node: Node) -> None:
        """Insert or replace a node; every index follows."""
        if not isinstance(node, Node):
            raise bad_args("node", f"expected a Node, got {type(node).__name__}")
        if not node.id:
            raise bad_args("node.id", "must be a non-empty string")
        old = self._nodes.get(node.id)
        if old is node or old == node:
            return
        if self._depth == 0:
            with self.transaction():
                self.put_node(node)
            return
        self._undo.append(("n", node.id, old))
        self._put_node_raw(node)
        if (
            old is None
            or old.parent_id != node.parent_id
            or old.archived != node.archived
            or old.type != node.type
            or old.level != node.level
        ):
            self._note(node.id, "moved")
        else:
            self._note(node.id, "seq" if old.seq_to != node.seq_to else "node")

    def add_edge(self, edge: Edge) -> bool:
        """Add an edge; False for a self-edge or a duplicate ``(source, type, target)``.

        Symmetric relations are stored once with the smaller id first. Both ends must exist.
        """
        if not isinstance(edge, Edge):
            raise bad_args("edge", f"expected an Edge, got {type(edge).__name__}")
        if edge.source == edge.target:
            return False
        edge = normalize_edge(edge)
        key = edge.key
        if key in self._edges:
            return False
        for end, name in ((edge.source, "source"), (edge.target, "target")):
            if end not in self._nodes:
                raise MemoryGraphError("NODE_NOT_FOUND", f"edge {name} {end!r} is not in the store")
        if self._depth == 0:
            with self.transaction():
                return self.add_edge(edge)
        self._add_edge_raw(edge, None)
        self._undo.append(("e", key, None, self._edges[key][4]))
        self._note(key.source, "edge")
        self._note(key.target, "edge")
        return True

    def remove_edge(self, key: tuple[str, str, str]) -> bool:
        """Remove the edge with `key` ``(source, type, target)``; False when there is none."""
        key = normalize_key(key)
        old = self._edges.get(key)
        if old is None:
            return False
        if self._depth == 0:
            with self.transaction():
                return self.remove_edge(key)
        self._undo.append(("e", key, _edge_of(old), old[4]))
        self._remove_edge_raw(key)
        self._note(key.source, "edge")
        self._note(key.target, "edge")
        return True

    # -- raw index maintenance (no undo logging) ------------------------------------------------

    def _edge_exact(self, key: EdgeKey) -> Edge | None:
        """`edge` of a key already in stored form."""
        rec = self._edges.get(key)
        return None if rec is None else _edge_of(rec)

    def _add_edge_raw(self, edge: Edge, serial: int | None) -> None:
        # the key and record hold the store's own id strings and an interned type, so an edge
        # costs no copies of them (a loaded or decoded id is another object with the same text)
        nodes = self._nodes
        source, target = nodes[edge.source].id, nodes[edge.target].id
        etype = _intern(edge.type)
        key = EdgeKey(source, etype, target)
        if serial is None:
            serial = self._next_serial
            self._next_serial += 1
        rec = (source, target, etype, edge.seq_to, serial)
        self._edges[key] = rec
        out = self._out.get(source)
        if out is None:
            self._out[source] = [rec]
        else:
            out.append(rec)
        inn = self._in.get(target)
        if inn is None:
            self._in[target] = [rec]
        else:
            inn.append(rec)

    def _remove_edge_raw(self, key: EdgeKey) -> None:
        rec = self._edges.pop(key)
        out = self._out[key.source]
        out.remove(rec)  # O(degree), in C; removals are rare next to reads
        if not out:
            del self._out[key.source]
        inn = self._in[key.target]
        inn.remove(rec)
        if not inn:
            del self._in[key.target]

    def _put_node_raw(self, node: Node) -> None:
        nid = node.id
        old = self._nodes.get(nid)
        self._nodes[nid] = node
        self._views.pop(nid, None)
        if old is None or old.parent_id != node.parent_id:
            if old is not None and old.parent_id:
                kids = self._kids.get(old.parent_id)
                if kids is not None and nid in kids:
                    kids.remove(nid)
                    if not kids:
                        del self._kids[old.parent_id]
            if node.parent_id:
                kids = self._kids.get(node.parent_id)
                if kids is None:
                    self._kids[node.parent_id] = [nid]
                else:  # new here: its old parent (if any) was another
                    kids.append(nid)
        self._kw_dirty[nid] = None
        self._names_dirty[nid] = None
        changed = self._reindex(nid, content_changed=True)
        structural = (
            old is None
            or old.archived != node.archived
            or old.type != node.type
            or old.parent_id != node.parent_id
        )
        if old is None or old.archived != node.archived or old.type != node.type:
            for kid in tuple(self._kids.get(nid, ())):
                changed = self._reindex(kid, content_changed=False) or changed
        self._reanchor((nid, *self._kids.get(nid, ())) if structural else (nid,))
        if changed:
            self._clear_pool_caches()

    def _drop_node_raw(self, nid: str) -> None:
        """Forget a node entirely (only used to undo its creation)."""
        node = self._nodes.pop(nid)
        self._views.pop(nid, None)
        if node.parent_id:
            kids = self._kids.get(node.parent_id)
            if kids is not None and nid in kids:
                kids.remove(nid)
                if not kids:
                    del self._kids[node.parent_id]
        self._kw_dirty[nid] = None
        self._names_dirty[nid] = None
        changed = self._reindex(nid, content_changed=True)
        for kid in tuple(self._kids.get(nid, ())):
            changed = self._reindex(kid, content_changed=False) or changed
        self._anchor.pop(nid, None)
        self._reanchor(tuple(self._kids.get(nid, ())))
        if changed:
            self._clear_pool_caches()
