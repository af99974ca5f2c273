"""The candidate pool: recency keys, the chunked sorted pool, its frozen view, and which nodes
are in it.

The pool is every visible, active, non-diagnostic, non-episodic node in recency order (newest
first). `SortedPool` keeps it as chunks so a write moves at most a chunk of entries; `TypePool`
is the immutable snapshot readers get; `PoolMembership` (a mixin of `Store`) keeps the visible
set, pool membership and each node's nearest pool member current, node by node.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from ..model.models import Node, nearest_visible_ancestor_id
from ..model.schema import Schema, is_diagnostic_type
from ..model.views import NodeView

PoolKey = tuple[int, int, str]


@attrs.frozen
class TypePool:
    """The candidate pool restricted to one type, in recency order."""

    nodes: tuple[Node, ...]
    views: tuple[NodeView, ...]
    keys: tuple[PoolKey, ...]


EMPTY_TYPE_POOL = TypePool(nodes=(), views=(), keys=())


class SortedPool:
    """Pool entries in recency order, kept as chunks of three parallel lists (keys, nodes,
    views) so an insert or removal moves at most a chunk's worth of entries, not the whole pool
    (new nodes are the newest, so they land at the front). `frozen()` is the cached tuple
    snapshot handed to readers.

    A pool made by `from_sorted` without views holds None in their place until the first
    `frozen()` asks its `view_of` for them (a loaded chat's pool is read well after the load,
    if at all); without nodes, likewise None until `frozen()` or `head()` reads them through
    `node_of` (the store's lazy node map, by id); writes always bring their nodes and views.
    """

    CHUNK = 256  # a chunk splits in two when it grows past twice this

    __slots__ = ("_chunks", "_firsts", "_size", "_frozen", "_view_of", "_node_of")

    def __init__(self) -> None:
        self._chunks: list[tuple[list[PoolKey], list[Node | None], list[NodeView | None]]] = []
        self._firsts: list[PoolKey] = []  # each chunk's first key, for bisecting
        self._size = 0
        self._frozen: TypePool | None = None
        self._view_of: Callable[[Node], NodeView] | None = None  # set while views are missing
        self._node_of: Callable[[str], Node] | None = None  # set while nodes are missing

    @classmethod
    def from_sorted(
        cls,
        keys: list[PoolKey],
        nodes: list[Node] | None,
        views: list[NodeView] | None = None,
        *,
        view_of: Callable[[Node], NodeView] | None = None,
        node_of: Callable[[str], Node] | None = None,
    ) -> SortedPool:
        """A pool from entries already in key order; without `views`, `view_of` makes them on
        the first `frozen()`; without `nodes`, `node_of` reads them by id on first use."""
        pool = cls()
        step = cls.CHUNK
        missing: list[Any] = [None] * step
        for i in range(0, len(keys), step):
            part = keys[i : i + step]
            chunk_views = views[i : i + step] if views is not None else missing[: len(part)]
            chunk_nodes = nodes[i : i + step] if nodes is not None else missing[: len(part)]
            pool._chunks.append((part, chunk_nodes, chunk_views))
            pool._firsts.append(keys[i])
        pool._size = len(keys)
        if views is None and keys:
            assert view_of is not None
            pool._view_of = view_of
        if nodes is None and keys:
            assert node_of is not None
            pool._node_of = node_of
        return pool

    def __len__(self) -> int:
        return self._size

    def count_depth(self, depth: int) -> int:
        """Members at `semantic_depth` `depth`, from their keys (no record or view made)."""
        target = -depth  # a key is (-seq_to or 1, -semantic_depth, id)
        return sum([k[1] == target for chunk in self._chunks for k in chunk[0]])

    def keys_from_oldest(self) -> Iterator[PoolKey]:
        """The members' keys, last (oldest) first (no record or view made)."""
        for chunk in reversed(self._chunks):
            yield from reversed(chunk[0])

    def leaves_by_seq(self) -> Iterator[list[str]]:
        """The ids of the members at depth 0, one list per seq that has any, newest seq first
        (members without a seq last), bisected from the keys: no record or view made."""
        group: list[str] = []
        current: int | None = None
        for keys, _nodes, _views in self._chunks:
            i, end_of_chunk = 0, len(keys)
            while i < end_of_chunk:
                seq_key = keys[i][0]
                if seq_key != current:
                    if group:
                        yield group
                        group = []
                    current = seq_key
                end = bisect.bisect_left(keys, (seq_key + 1,), i)  # past this seq in the chunk
                first_leaf = bisect.bisect_left(keys, (seq_key, 0), i, end)  # deeper ones first
                group.extend([key[2] for key in keys[first_leaf:end]])
                i = end
        if group:
            yield group

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

    def _fill_nodes(self, chunk: tuple[list[PoolKey], list[Node | None], Any], upto: int) -> None:
        """Read the missing nodes among a chunk's first `upto` entries."""
        node_of = self._node_of
        if node_of is None:
            return
        keys, nodes, _views = chunk
        for i in range(min(upto, len(nodes))):
            if nodes[i] is None:
                nodes[i] = node_of(keys[i][2])

    def head(self, n: int) -> list[Node]:
        """The first (newest) `n` nodes, read from the chunks without a snapshot."""
        out: list[Node] = []
        for chunk in self._chunks:
            if len(out) >= n:
                break
            self._fill_nodes(chunk, n - len(out))
            out.extend(chunk[1][: n - len(out)])  # type: ignore[arg-type]
        return out

    def frozen(self) -> TypePool:
        f = self._frozen
        if f is None:
            chunks = self._chunks
            if self._node_of is not None:  # nodes left to the first read
                for chunk in chunks:
                    self._fill_nodes(chunk, len(chunk[0]))
                self._node_of = None
            view_of = self._view_of
            if view_of is not None:  # views left to the first read
                for _keys, nodes, views in chunks:
                    for i, view in enumerate(views):
                        if view is None:
                            views[i] = view_of(nodes[i])  # type: ignore[arg-type]
                self._view_of = None
            join = itertools.chain.from_iterable
            f = self._frozen = TypePool(
                nodes=tuple(join([c[1] for c in chunks])),  # type: ignore[arg-type]
                views=tuple(join([c[2] for c in chunks])),  # type: ignore[arg-type]
                keys=tuple(join([c[0] for c in chunks])),
            )
        return f


def cached_view(views: dict[str, NodeView], node: Node) -> NodeView:
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


class PoolMembership:
    """Which nodes are visible and in the pool, and each node's nearest pool member upwards,
    kept current node by node (a mixin of `Store`: it provides the maps and the schema)."""

    _schema: Schema
    _nodes: dict[str, Node]
    _kids: dict[str, list[str]]
    _visible: set[str]
    _visible_cache: frozenset[str] | None
    _pool_of: dict[str, tuple[PoolKey, str]]
    _anchor: dict[str, str | None]
    _pool: SortedPool
    _type_pools: dict[str, SortedPool]

    def view(self, id: str) -> NodeView | None:
        raise NotImplementedError  # the store's view cache

    def _anchor_walk(self, nid: str) -> str | None:
        """The first pool member from `nid` upwards (itself included); None when a missing or
        archived node comes first, or the walk loops."""
        return nearest_visible_ancestor_id(self, nid, self._pool_of)

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
                tp = self._type_pools[ntype] = SortedPool()
            tp.insert(new_key, node, view)  # type: ignore[arg-type]
            self._pool_of[nid] = (new_key, ntype)
        return True

    def _clear_pool_caches(self) -> None:
        self._pool_rank: dict[str, int] | None = None
