"""The in-memory `Store`: nodes, edges and every index the per-turn read paths need.

Indices (adjacency, parent -> children, the visible set, the recency-ordered candidate pool, the
keyword index, a view cache) follow every write, so reads never rescan the graph. Writes happen
inside `transaction()`; an exception undoes every change (indices included) and a clean exit that
changed something bumps `version` and adds to the pending `Changeset`.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

import attrs

from ..errors import MemoryGraphError, bad_args
from .gc_pause import gc_paused
from .json_codec import decode_graph, edge_to_dict, node_to_dict
from .keyword_index import KeywordIndex
from .models import Edge, EdgeKey, Node
from .name_index import NameIndex
from .schema import DEFAULT_SCHEMA, SYMMETRIC_RELATIONS, Schema, is_diagnostic_type, load_schema
from .views import NodeView

PoolKey = tuple[int, int, str]
#: (node id, kind) of a write: "edge" (an edge at the node came or went), "seq" (its `seq_to`
#: changed), "moved" (new or dropped, or its parent, archived flag, type or level changed),
#: "node" (anything else in its record)
Change = tuple[str, str]
CHANGE_LOG_LIMIT = 1 << 16  # past this many entries the log restarts (readers rebuild)
#: one edge, shared by the edge map and both ends' adjacency (no `Edge` object is kept: `edge()`
#: makes one): (source, target, type, seq_to, serial)
EdgeRec = tuple[str, str, str, "int | None", int]
AdjRecord = EdgeRec
_first = operator.itemgetter(0)
_intern = sys.intern


@attrs.frozen
class Changeset:
    """What transactions changed since the last `take_changeset()`.

    Apply `edges_removed` before `edges_added` (a replaced edge appears in `edges_added` only).
    """

    version: int
    nodes: tuple[Node, ...]
    edges_added: tuple[Edge, ...]
    edges_removed: tuple[EdgeKey, ...]
    node_seq: int
    seq_counter: int


@attrs.frozen
class TypePool:
    """The candidate pool restricted to one type, in recency order."""

    nodes: tuple[Node, ...]
    views: tuple[NodeView, ...]
    keys: tuple[PoolKey, ...]


EMPTY_TYPE_POOL = TypePool(nodes=(), views=(), keys=())


class _SortedPool:
    """Pool entries in recency order, kept as chunks of three parallel lists (keys, nodes,
    views) so an insert or removal moves at most a chunk's worth of entries, not the whole pool
    (new nodes are the newest, so they land at the front). `frozen()` is the cached tuple
    snapshot handed to readers.

    A pool made by `from_sorted` without views holds None in their place until the first
    `frozen()` asks its `view_of` for them (a loaded chat's pool is read well after the load,
    if at all); writes always bring their views.
    """

    CHUNK = 256  # a chunk splits in two when it grows past twice this

    __slots__ = ("_chunks", "_firsts", "_size", "_frozen", "_view_of")

    def __init__(self) -> None:
        self._chunks: list[tuple[list[PoolKey], list[Node], list[NodeView | None]]] = []
        self._firsts: list[PoolKey] = []  # each chunk's first key, for bisecting
        self._size = 0
        self._frozen: TypePool | None = None
        self._view_of: Callable[[Node], NodeView] | None = None  # set while views are missing

    @classmethod
    def from_sorted(
        cls,
        keys: list[PoolKey],
        nodes: list[Node],
        views: list[NodeView] | None = None,
        *,
        view_of: Callable[[Node], NodeView] | None = None,
    ) -> _SortedPool:
        """A pool from entries already in key order; without `views`, `view_of` makes them on
        the first `frozen()`."""
        pool = cls()
        step = cls.CHUNK
        missing: list[NodeView | None] = [None] * step if views is None else []
        for i in range(0, len(keys), step):
            part = keys[i : i + step]
            chunk_views = views[i : i + step] if views is not None else missing[: len(part)]
            pool._chunks.append((part, nodes[i : i + step], chunk_views))
            pool._firsts.append(keys[i])
        pool._size = len(keys)
        if views is None and keys:
            assert view_of is not None
            pool._view_of = view_of
        return pool

    def __len__(self) -> int:
        return self._size

    def _chunk_of(self, key: PoolKey) -> int:
        """The chunk `key` belongs in (the last whose first key is <= key; 0 before them all)."""
        return max(0, bisect.bisect_right(self._firsts, key) - 1)

    def insert(self, key: PoolKey, node: Node, view: NodeView) -> None:
        self._frozen = None
        self._size += 1
        if not self._chunks:
            self._chunks.append(([key], [node], [view]))
            self._firsts.append(key)
            return
        c = self._chunk_of(key)
        keys, nodes, views = self._chunks[c]
        i = bisect.bisect_left(keys, key)
        keys.insert(i, key)
        nodes.insert(i, node)
        views.insert(i, view)
        if i == 0:
            self._firsts[c] = key
        if len(keys) > 2 * self.CHUNK:
            half = len(keys) // 2
            self._chunks[c] = (keys[:half], nodes[:half], views[:half])
            self._chunks.insert(c + 1, (keys[half:], nodes[half:], views[half:]))
            self._firsts.insert(c + 1, keys[half])

    def _find(self, key: PoolKey) -> tuple[int, int]:
        c = self._chunk_of(key)
        i = bisect.bisect_left(self._chunks[c][0], key)
        return c, i

    def remove(self, key: PoolKey) -> None:
        c, i = self._find(key)
        keys, nodes, views = self._chunks[c]
        del keys[i]
        del nodes[i]
        del views[i]
        self._size -= 1
        self._frozen = None
        if not keys:
            del self._chunks[c]
            del self._firsts[c]
        elif i == 0:
            self._firsts[c] = keys[0]

    def replace(self, key: PoolKey, node: Node, view: NodeView) -> None:
        c, i = self._find(key)
        _keys, nodes, views = self._chunks[c]
        nodes[i] = node
        views[i] = view
        self._frozen = None

    def head(self, n: int) -> list[Node]:
        """The first (newest) `n` nodes, read from the chunks without a snapshot."""
        out: list[Node] = []
        for _keys, nodes, _views in self._chunks:
            if len(out) >= n:
                break
            out.extend(nodes[: n - len(out)])
        return out

    def frozen(self) -> TypePool:
        f = self._frozen
        if f is None:
            chunks = self._chunks
            view_of = self._view_of
            if view_of is not None:  # views left to the first read
                for _keys, nodes, views in chunks:
                    for i, view in enumerate(views):
                        if view is None:
                            views[i] = view_of(nodes[i])
                self._view_of = None
            join = itertools.chain.from_iterable
            f = self._frozen = TypePool(
                nodes=tuple(join([c[1] for c in chunks])),
                views=tuple(join([c[2] for c in chunks])),
                keys=tuple(join([c[0] for c in chunks])),
            )
        return f


def _edge_of(rec: EdgeRec) -> Edge:
    """The `Edge` an edge record stands for (made on demand: the store keeps records only)."""
    return Edge(rec[0], rec[1], rec[2], rec[3])


def _share_strings(nodes: dict[str, Node]) -> None:
    """Point every loaded node's id, type, level, parent and children at one string object per
    text, and its `seq_to` at one int per value (decoders make a new object for every
    occurrence: a node's id, its key, its children's and edges' references to it, "event" for
    every event). Values stay equal, so this changes
    nothing but memory (records are frozen; their fields are set in place as `records` does)."""
    setattr_ = object.__setattr__
    shared: dict[str, str] = {}
    seqs: dict[int, int] = {}
    for nid, node in nodes.items():
        seq = node.seq_to
        if seq is not None and seqs.setdefault(seq, seq) is not seq:
            setattr_(node, "seq_to", seqs[seq])
        if node.id is not nid and node.id == nid:
            setattr_(node, "id", nid)
        value = node.type
        one = shared.get(value)
        if one is None:
            one = shared[value] = _intern(value)
        if one is not value:
            setattr_(node, "type", one)
        value = node.level
        one = shared.get(value)
        if one is None:
            one = shared[value] = _intern(value)
        if one is not value:
            setattr_(node, "level", one)
    for node in nodes.values():
        parent = node.parent_id
        if parent:
            owner = nodes.get(parent)
            if owner is not None and owner.id is not parent:
                setattr_(node, "parent_id", owner.id)
        kids = node.children_ids
        if kids:
            same = tuple(k if (o := nodes.get(k)) is None else o.id for k in kids)
            if any(a is not b for a, b in zip(same, kids, strict=True)):
                setattr_(node, "children_ids", same)


def _by_serial(item: tuple[EdgeKey, EdgeRec]) -> int:
    return item[1][4]


def _serial_of(rec: EdgeRec) -> int:
    return rec[4]


def _cached_view(views: dict[str, NodeView], node: Node) -> NodeView:
    """`Store.view` of a pool member, given the store's view cache (not the store: a pool holding
    the store would make a reference cycle, keeping a dropped store alive until a collection)."""
    view = views.get(node.id)
    if view is None:
        view = views[node.id] = NodeView.from_node(node)
    return view


def recency_key(node: Node) -> PoolKey:
    """Recency order: seq_to descending (missing = -1), semantic_depth descending, then id."""
    seq = node.seq_to if node.seq_to is not None else -1
    return (-seq, -node.semantic_depth, node.id)


def timeline_key(node: Node | NodeView) -> tuple[bool, int, str]:
    """Timeline order: seq_to ascending (missing last), then id."""
    return (node.seq_to is None, node.seq_to or 0, node.id)


def normalize_edge(edge: Edge) -> Edge:
    """Edge types are stored lower-case (the original lower-cases relations when it reads them,
    so an imported ``"Mentions"`` is ``mentions``); symmetric relations once, the smaller id
    first."""
    etype = edge.type if edge.type.islower() else edge.type.lower()
    if etype in SYMMETRIC_RELATIONS and edge.target < edge.source:
        return Edge(edge.target, edge.source, etype, edge.seq_to)
    if etype is not edge.type:
        return Edge(edge.source, edge.target, etype, edge.seq_to)
    return edge


def normalize_key(key: tuple[str, str, str]) -> EdgeKey:
    """A lookup key in stored form (lower-case type; symmetric: the smaller id first)."""
    source, etype, target = key
    if not etype.islower():
        etype = etype.lower()
        key = (source, etype, target)
    if etype in SYMMETRIC_RELATIONS and target < source:
        return EdgeKey(target, etype, source)
    return key if isinstance(key, EdgeKey) else EdgeKey(source, etype, target)


class Store:
    """A chat's memory graph with its indices. Only the batch pipeline writes to it."""

    def __init__(self, *, schema: Schema | Any = None) -> None:
        self._schema: Schema = load_schema(schema) if schema is not None else DEFAULT_SCHEMA
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
        self._anchor: dict[str, str | None] = {}  # id -> nearest pool member up from it
        self._pool = _SortedPool()
        self._type_pools: dict[str, _SortedPool] = {}
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
        # change log for caches derived outside the store (`changes_since`)
        self._changes: list[Change] = []
        self._changes_base = 0  # the position of _changes[0]
        #: the read side's kept edge summaries (`summaries.summaries_for`); never read here
        self.summaries: Any = None
        # transactions
        self._depth = 0
        self._undo: list[tuple[Any, ...]] = []
        self._pending_nodes: dict[str, None] = {}
        self._pending_edges: dict[EdgeKey, Edge | None] = {}
        self._pending = False

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

    def iter_nodes(self) -> Iterator[Node]:
        return iter(tuple(self._nodes.values()))

    def edge(self, key: tuple[str, str, str]) -> Edge | None:
        rec = self._edges.get(normalize_key(key))
        return None if rec is None else _edge_of(rec)

    def iter_edges(self) -> Iterator[Edge]:
        return iter(tuple(map(_edge_of, self._edges.values())))

    @property
    def edge_count(self) -> int:
        return len(self._edges)

    def out_edges(self, id: str) -> Collection[EdgeKey]:
        return tuple([EdgeKey(r[0], r[2], r[1]) for r in self._out.get(id, ())])

    def in_edges(self, id: str) -> Collection[EdgeKey]:
        return tuple([EdgeKey(r[0], r[2], r[1]) for r in self._in.get(id, ())])

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
        recency without building `pool_rank`."""
        return MappingProxyType(self._pool_of)

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

    def in_pool(self, id: str) -> bool:
        return id in self._pool_of

    # -- change log ----------------------------------------------------------------------------

    @property
    def change_position(self) -> int:
        """The change log's end: pass it to `changes_since` later to learn what was written."""
        return self._changes_base + len(self._changes)

    def changes_since(self, position: int) -> list[Change] | None:
        """``(node id, kind)`` (see `Change`) for every write since `position`, oldest first (a
        node written twice appears twice; an edge write names both ends); None when the log no
        longer reaches back that far (the reader rebuilds)."""
        start = position - self._changes_base
        if start < 0:
            return None
        return self._changes[start:]

    def _note(self, nid: str, kind: str) -> None:
        log = self._changes
        log.append((nid, kind))
        if len(log) > CHANGE_LOG_LIMIT:
            self._restart_changes()

    def _restart_changes(self) -> None:
        """Forget the log: every reader's position falls before it and rebuilds."""
        self._changes_base += len(self._changes) + 1
        self._changes = []

    # -- transactions --------------------------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing: an exception inside undoes every change made since entering.

        Nested transactions are part of the outer one (an exception escaping a nested block
        undoes that block's changes; the outer one decides about the rest).
        """
        outer = self._depth == 0
        mark = len(self._undo)
        self._depth += 1
        try:
            yield
        except BaseException:
            self._rollback_to(mark)
            raise
        finally:
            self._depth -= 1
        if outer:
            self._commit()

    def _commit(self) -> None:
        undo, self._undo = self._undo, []
        if not undo:
            return
        first_node: dict[str, Node | None] = {}
        first_edge: dict[EdgeKey, Edge | None] = {}
        first_counter: dict[str, int] = {}
        for entry in undo:
            kind = entry[0]
            if kind == "n":
                first_node.setdefault(entry[1], entry[2])
            elif kind == "e":
                first_edge.setdefault(entry[1], entry[2])
            else:
                first_counter.setdefault(entry[1], entry[2])
        nodes, edge = self._nodes, self._edge_exact
        changed_nodes = [
            i for i, old in first_node.items() if (cur := nodes.get(i)) is not old and cur != old
        ]
        changed_edges = [k for k, old in first_edge.items() if edge(k) != old]
        counters = (
            first_counter.get("node_seq", self._node_seq) != self._node_seq
            or first_counter.get("seq_counter", self._seq_counter) != self._seq_counter
        )
        if not (changed_nodes or changed_edges or counters):
            return
        self.version += 1
        self._pending = True
        for i in changed_nodes:
            self._pending_nodes[i] = None
        for k in changed_edges:
            self._pending_edges.setdefault(k, first_edge[k])

    def take_changeset(self) -> Changeset | None:
        """What committed transactions changed since the last call (None: nothing)."""
        if not self._pending:
            return None
        nodes, edge = self._nodes, self._edge_exact
        added: list[Edge] = []
        removed: list[EdgeKey] = []
        for key, old in self._pending_edges.items():
            cur = edge(key)
            if cur == old:
                continue
            if cur is None:
                removed.append(key)
            else:
                added.append(cur)
        cs = Changeset(
            version=self.version,
            nodes=tuple(nodes[i] for i in self._pending_nodes if i in nodes),
            edges_added=tuple(added),
            edges_removed=tuple(removed),
            node_seq=self._node_seq,
            seq_counter=self._seq_counter,
        )
        self._pending_nodes = {}
        self._pending_edges = {}
        self._pending = False
        return cs

    def _rollback_to(self, mark: int) -> None:
        undo = self._undo
        reorder: set[str] = set()
        while len(undo) > mark:
            entry = undo.pop()
            kind = entry[0]
            if kind == "n":
                _, node_id, old = entry
                if old is None:
                    self._drop_node_raw(node_id)
                else:
                    self._put_node_raw(old)
                self._note(node_id, "moved")
            elif kind == "e":
                _, key, old, serial = entry
                self._note(key.source, "edge")
                self._note(key.target, "edge")
                if old is None:
                    self._remove_edge_raw(key)
                else:
                    self._add_edge_raw(old, serial)
                    reorder.add(key.source)
                    reorder.add(key.target)
            elif entry[1] == "node_seq":
                self._node_seq = entry[2]
            else:
                self._seq_counter = entry[2]
        if reorder:
            self._edges = dict(sorted(self._edges.items(), key=_by_serial))
            for nid in reorder:
                for adj in (self._out, self._in):
                    recs = adj.get(nid)
                    if recs:
                        recs.sort(key=_serial_of)

    def _auto(self) -> bool:
        return self._depth == 0

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
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad_args("seq_counter", f"expected a non-negative integer, got {value!r}")
        if value == self._seq_counter:
            return
        if self._depth == 0:
            with self.transaction():
                self.set_seq_counter(value)
            return
        self._undo.append(("c", "seq_counter", self._seq_counter))
        self._seq_counter = value

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

    def _anchor_walk(self, nid: str) -> str | None:
        """The first pool member from `nid` upwards (itself included); None when a missing or
        archived node comes first, or the walk loops."""
        nodes, pool = self._nodes, self._pool_of
        seen: set[str] = set()
        cur = nid
        while cur and cur not in seen:
            node = nodes.get(cur)
            if node is None or node.archived:
                return None
            if cur in pool:
                return cur
            seen.add(cur)
            cur = node.parent_id
        return None

    def _reanchor(self, start: Iterable[str]) -> None:
        """Bring the pool-anchor index up to date from `start` down: a node whose anchor moved
        passes the change on to its children (those outside the pool walk up through it)."""
        anchor, kids_of, nodes = self._anchor, self._kids, self._nodes
        todo = list(start)
        seen: set[str] = set()
        while todo:
            nid = todo.pop()
            if nid in seen or nid not in nodes:
                continue
            seen.add(nid)
            new = self._anchor_walk(nid)
            if nid in anchor and anchor[nid] == new:
                continue
            anchor[nid] = new
            todo.extend(kids_of.get(nid, ()))

    def pool_anchors(self) -> Mapping[str, str | None]:
        """id -> nearest candidate-pool member from the node upwards (the node itself included;
        None when a missing or archived node comes first): `nearest_visible_ancestor_id` onto
        the pool, kept current by every write. The live map: read-only by contract."""
        return self._anchor

    def _compute_visible(self, node: Node | None) -> bool:
        """Active, and not below an active parent of its own hierarchical type (a rollup stands
        for its leaves); nodes of other types are all visible, whatever their parent."""
        if node is None or node.archived:
            return False
        if not node.parent_id:
            return True
        parent = self._nodes.get(node.parent_id)
        if parent is None or parent.archived or parent.type != node.type:
            return True
        spec = self._schema.get(node.type)
        return spec is None or not spec.compression.hierarchical

    def _reindex(self, nid: str, *, content_changed: bool) -> bool:
        """Re-evaluate visibility and pool membership of one node; True if the pool changed."""
        node = self._nodes.get(nid)
        visible = self._compute_visible(node)
        if visible:
            if nid not in self._visible:
                self._visible.add(nid)
                self._visible_cache = None
        elif nid in self._visible:
            self._visible.discard(nid)
            self._visible_cache = None
        new_key = (
            recency_key(node)  # type: ignore[arg-type]
            if visible and node.level != "episodic" and not is_diagnostic_type(node.type)  # type: ignore[union-attr]
            else None
        )
        old = self._pool_of.get(nid)
        if new_key is not None:
            ntype = node.type.lower()  # type: ignore[union-attr]
            if old is not None and old[0] == new_key and old[1] == ntype:
                if not content_changed:
                    return False
                view = self.view(nid)
                self._pool.replace(new_key, node, view)  # type: ignore[arg-type]
                self._type_pools[ntype].replace(new_key, node, view)  # type: ignore[arg-type]
                return True
        if old is not None:
            self._pool.remove(old[0])
            tp = self._type_pools[old[1]]
            tp.remove(old[0])
            if not len(tp):
                del self._type_pools[old[1]]
            del self._pool_of[nid]
        if new_key is not None:
            view = self.view(nid)  # type: ignore[assignment]
            self._pool.insert(new_key, node, view)  # type: ignore[arg-type]
            tp = self._type_pools.get(ntype)
            if tp is None:
                tp = self._type_pools[ntype] = _SortedPool()
            tp.insert(new_key, node, view)  # type: ignore[arg-type]
            self._pool_of[nid] = (new_key, ntype)
        return True

    def _clear_pool_caches(self) -> None:
        self._pool_rank: dict[str, int] | None = None

    # -- the original's JSON shape --------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, schema: Schema | Any = None) -> Store:
        """A store from the original's JSON (``nodes`` map, ``edges`` list, ``nodeSeq``,
        ``seqCounter``). Node keys may be camelCase or snake_case; unknown keys are ignored.
        Edges with a missing end, self-edges and duplicates are dropped.
        """
        if not isinstance(data, Mapping):
            raise bad_args("data", f"expected a mapping, got {type(data).__name__}")
        store = cls(schema=schema)
        with gc_paused():  # acyclic records only: see gc_pause
            store._bulk_load(*decode_graph(data))
        return store

    @classmethod
    def from_columns(
        cls, nodes: Any, edges: Any, node_seq: int, seq_counter: int, *, schema: Any = None
    ) -> Store:
        """A store from a snapshot's node and edge state tables (pyarrow, `storage/columns.py`):
        the same store `from_dict` builds from the same graph, without a JSON dict per node."""
        from .columnar import decode_columns

        store = cls(schema=schema)
        with gc_paused():
            store._bulk_load(*decode_columns(nodes, edges, node_seq, seq_counter))
        return store

    def _bulk_load(
        self, nodes: dict[str, Node], edges: dict[EdgeKey, Edge], node_seq: int, seq_counter: int
    ) -> None:
        """Fill an empty store's indices in one pass each (what `put_node` / `add_edge` one by
        one would leave, without their per-write bookkeeping). The keyword and name indices
        start with every node marked dirty: they are built by their first use."""
        self._nodes = nodes
        _share_strings(nodes)
        kids = self._kids
        for nid, node in nodes.items():
            parent = node.parent_id
            if parent:
                ks = kids.get(parent)
                if ks is None:
                    kids[parent] = [nid]
                else:
                    ks.append(nid)
        self._load_edges(edges)
        self._kw_dirty = dict.fromkeys(nodes)
        self._names = NameIndex(self._schema)
        self._names_dirty = dict.fromkeys(nodes)
        self._load_pools()
        self._anchor = self._anchors_from_scratch()
        self._node_seq = node_seq
        self._seq_counter = seq_counter
        self._clear_pool_caches()
        self._visible_cache = None

    def _load_edges(self, edges: dict[EdgeKey, Edge]) -> None:
        """The edge map and adjacency of an empty store holding `edges` (keys in stored form,
        both ends in the store): what `_add_edge_raw` of each edge in order leaves. An index
        that `_add_edge_raw` maintains must be filled here too (test_store's bulk-load test
        compares every index with a store built by single writes)."""
        table: dict[EdgeKey, EdgeRec] = {}
        self._next_serial = len(edges)
        out_of, in_of, nodes = self._out, self._in, self._nodes
        ids: dict[str, str] = {}  # decoded id text -> the node's own id string
        types: dict[str, str] = {}
        seqs: dict[int, int] = {}
        for serial, (key, edge) in enumerate(edges.items()):
            source, etype, target = key
            s = ids.get(source)
            if s is None:
                s = ids[source] = nodes[source].id
            t = ids.get(target)
            if t is None:
                t = ids[target] = nodes[target].id
            e = types.get(etype)
            if e is None:
                e = types[etype] = _intern(etype)
            key = EdgeKey(s, e, t)
            seq = edge.seq_to
            if seq is not None:  # one int object per value (a decoder makes one per edge)
                seq = seqs.setdefault(seq, seq)
            rec = (s, t, e, seq, serial)
            table[key] = rec
            out = out_of.get(s)
            if out is None:
                out_of[s] = [rec]
            else:
                out.append(rec)
            inn = in_of.get(t)
            if inn is None:
                in_of[t] = [rec]
            else:
                inn.append(rec)
        self._edges = table

    def _load_pools(self) -> None:
        """The visible set, the candidate pool and the per-type pools of a freshly loaded store
        (what `_reindex` of every node would give)."""
        nodes, visible, pool_of = self._nodes, self._visible, self._pool_of
        spec_of = self._schema.get
        hierarchical: dict[str, bool] = {}  # type -> hierarchical compression
        diagnostic: dict[str, bool] = {}  # type -> is_diagnostic_type
        entries: list[tuple[PoolKey, Node, str]] = []
        for nid, node in nodes.items():
            if node.archived:
                continue
            ntype = node.type
            parent_id = node.parent_id
            if parent_id:  # `_compute_visible`, with the schema lookups memoised per type
                parent = nodes.get(parent_id)
                if parent is not None and not parent.archived and parent.type == ntype:
                    h = hierarchical.get(ntype)
                    if h is None:
                        spec = spec_of(ntype)
                        h = hierarchical[ntype] = spec is not None and spec.compression.hierarchical
                    if h:
                        continue
            visible.add(nid)
            if node.level == "episodic":
                continue
            d = diagnostic.get(ntype)
            if d is None:
                d = diagnostic[ntype] = is_diagnostic_type(ntype)
            if d:
                continue
            seq = node.seq_to
            key = (-seq if seq is not None else 1, -node.semantic_depth, nid)  # recency_key
            entries.append((key, node, ntype.lower()))
        entries.sort(key=_first)
        keys: list[PoolKey] = []
        pool_nodes: list[Node] = []
        by_type: dict[str, tuple[list[PoolKey], list[Node]]] = {}
        for key, node, ltype in entries:
            keys.append(key)
            pool_nodes.append(node)
            pool_of[key[2]] = (key, ltype)
            parts = by_type.get(ltype)
            if parts is None:
                parts = by_type[ltype] = ([], [])
            parts[0].append(key)
            parts[1].append(node)
        # views on the first read, through the view cache (`view` returns the same objects)
        view_of = functools.partial(_cached_view, self._views)
        self._pool = _SortedPool.from_sorted(keys, pool_nodes, view_of=view_of)
        self._type_pools = {
            t: _SortedPool.from_sorted(k, n, view_of=view_of) for t, (k, n) in by_type.items()
        }

    def _anchors_from_scratch(self) -> dict[str, str | None]:
        """`_anchor_walk` of every node, each chain walked once: a node's anchor is its own id
        in the pool, None when archived, else its parent's (None for a missing parent or a
        parent loop)."""
        nodes, pool = self._nodes, self._pool_of
        anchor: dict[str, str | None] = {}
        for nid, node in nodes.items():
            if node.archived:
                anchor[nid] = None
            elif nid in pool:
                anchor[nid] = nid
        if len(anchor) == len(nodes):
            return anchor
        for nid in nodes:
            if nid in anchor:
                continue
            chain: list[str] = []  # ids walked from nid up, their anchor not known yet
            on_chain: set[str] = set()
            cur = nid
            found: str | None = None
            while cur and cur not in on_chain:  # else no parent, or a loop: no anchor
                if cur in anchor:
                    found = anchor[cur]
                    break
                node = nodes.get(cur)
                if node is None:
                    break
                chain.append(cur)
                on_chain.add(cur)
                cur = node.parent_id
            for c in chain:
                anchor[c] = found
        return {nid: anchor[nid] for nid in nodes}

    def to_dict(self) -> dict[str, Any]:
        """The original's JSON shape (camelCase keys); `from_dict` reads it back."""
        return {
            "nodes": {nid: node_to_dict(n) for nid, n in self._nodes.items()},
            "edges": [edge_to_dict(_edge_of(r)) for r in self._edges.values()],
            "nodeSeq": self._node_seq,
            "seqCounter": self._seq_counter,
        }
