"""Projection onto a visible set: nearest visible ancestor, projected edges, edge summaries, drill.

Everything per node works from adjacency of the node's own subtree (the nodes that lift to it),
never from a scan of all edges, so an edge summary costs what the node touches.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable

import attrs

from ..graph.store import Store
from ..model.models import Edge, EdgeKey
from ..model.models import nearest_visible_ancestor_id as nearest_visible_ancestor_id
from ..model.schema import INTERNAL_EDGE_TYPES, SYMMETRIC_RELATIONS
from ..model.views import EMPTY_EDGE_SUMMARY, EdgeSummaryView, RelationCount, SampleNeighbor

Projected = tuple[str, str, str, int]  # (from, to, type, weight)


class Lifter:
    """`nearest_visible_ancestor_id` memoised for one visible set (one call's worth)."""

    __slots__ = ("_store", "_visible", "_memo", "samples")

    def __init__(self, store: Store, visible: Container[str]) -> None:
        self._store = store
        self._visible = visible
        self._memo: dict[str, str | None] = {}
        #: (neighbour id, seq) -> SampleNeighbor, shared by the summaries of one turn
        self.samples: dict[tuple[str, int], SampleNeighbor] = {}

    def __call__(self, id: str) -> str | None:
        memo = self._memo
        if id in memo:
            return memo[id]
        visible = self._visible
        node_of = self._store.node
        path: list[str] = []
        result: str | None = None
        cur = id
        seen: set[str] = set()
        while cur and cur not in seen:
            if cur in memo:
                result = memo[cur]
                break
            node = node_of(cur)
            if node is None or node.archived:
                break
            path.append(cur)
            if cur in visible:
                result = cur
                break
            seen.add(cur)
            cur = node.parent_id
        for p in path:
            memo[p] = result
        return result


class PoolLifter(Lifter):
    """A `Lifter` onto the store's candidate pool that reads the store's pool-anchor index
    instead of walking (`Store.pool_anchors`): no per-turn work to lift every node again."""

    __slots__ = ()

    def __init__(self, store: Store) -> None:
        super().__init__(store, store.pool_rank())
        self._memo = store.pool_anchors()  # type: ignore[assignment]

    def __call__(self, id: str) -> str | None:
        return self._memo.get(id)


def _type_filter(edge_types: Iterable[str] | None, exclude_internal: bool) -> Callable[[str], bool]:
    wanted = None if edge_types is None else frozenset(t.lower() for t in edge_types)
    if wanted is None:
        if exclude_internal:
            return lambda t: t not in INTERNAL_EDGE_TYPES
        return lambda t: True
    if exclude_internal:
        wanted = wanted - INTERNAL_EDGE_TYPES
    return wanted.__contains__


def _orient(src: str, dst: str, etype: str) -> tuple[str, str]:
    if etype in SYMMETRIC_RELATIONS and dst < src:
        return dst, src
    return src, dst


def project_edges(
    store: Store,
    visible: Container[str],
    *,
    edge_types: Iterable[str] | None = None,
    exclude_internal: bool = True,
) -> list[Projected]:
    """Every raw edge with both ends lifted; dropped when an end has no visible ancestor or both
    ends meet; merged on ``(from, to, type)`` with weight = raw edge count (first-seen order)."""
    keep = _type_filter(edge_types, exclude_internal)
    lift = Lifter(store, visible)
    merged: dict[tuple[str, str, str], int] = {}
    for edge in store.iter_edges():
        if not keep(edge.type):
            continue
        a = lift(edge.source)
        if a is None:
            continue
        b = lift(edge.target)
        if b is None or a == b:
            continue
        a, b = _orient(a, b, edge.type)
        k = (a, b, edge.type)
        merged[k] = merged.get(k, 0) + 1
    return [(a, b, t, w) for (a, b, t), w in merged.items()]


def subtree_members(store: Store, id: str, visible: Container[str]) -> list[str]:
    """`id` and the descendants whose nearest visible ancestor is `id` (cycle-safe)."""
    node_of = store.node
    kids_of = store.kids
    out = [id]
    seen = {id}
    i = 0
    while i < len(out):
        for kid in kids_of(out[i]):
            if kid in seen or kid in visible:
                continue
            node = node_of(kid)
            if node is None or node.archived:
                continue
            seen.add(kid)
            out.append(kid)
        i += 1
    return out


def _touching_edges(store: Store, members: list[str], keep: Callable[[str], bool]) -> list[Edge]:
    """Raw edges touching any member (each once), in store (insertion) order."""
    keys: set[EdgeKey] = set()
    out_of, in_of = store.out_edges, store.in_edges
    for m in members:
        keys.update(k for k in out_of(m) if keep(k.type))
        keys.update(k for k in in_of(m) if keep(k.type))
    edge = store.edge
    if len(keys) > 1:
        serial = store.edge_serial
        ordered = sorted(keys, key=serial)
    else:
        ordered = list(keys)
    return [edge(k) for k in ordered]  # type: ignore[misc]


_MISSING = object()


@attrs.frozen
class SummaryParts:
    """An edge summary before its neighbours are dressed as views: what depends on the graph's
    structure only (a neighbour's title and type are read when the view is built)."""

    degree: int
    relations: tuple[RelationCount, ...]
    latest: tuple[tuple[str, int], ...]  # (neighbour, latest edge seq or -1), newest first
    members: tuple[str, ...]  # the summarised node and the hidden nodes lifted to it


def edge_summary(
    store: Store,
    id: str,
    visible: Container[str],
    *,
    edge_types: Iterable[str] | None = None,
    limit: int = 8,
    lift: Lifter | None = None,
) -> EdgeSummaryView:
    """Degree, relation counts and sample neighbours over the projected edges touching `id`
    (internal edges included). Works from the adjacency of `id`'s subtree only.

    A projected edge is ``(neighbour, relation, direction)`` (symmetric relations point from the
    smaller id); its weight is the count of raw edges merged into it, so `degree` (the sum of
    ``max(1, weight)``) is the count of raw edges that project. `relations` count projected edges
    per (relation, direction), most first, ties by the first raw edge (store order);
    `sample_neighbors` are one per neighbour with its latest edge seq, newest first, then id.
    """
    lift = lift or Lifter(store, visible)
    parts = summary_parts(store, id, visible, edge_types=edge_types, lift=lift)
    if parts is None:
        return EMPTY_EDGE_SUMMARY
    return summary_view(store, parts, limit, lift.samples)


def summary_parts(
    store: Store,
    id: str,
    visible: Container[str],
    *,
    edge_types: Iterable[str] | None = None,
    lift: Lifter,
) -> SummaryParts | None:
    """The structural part of `edge_summary`; None when `id` is missing, archived or not in
    `visible` (its summary is zero)."""
    nodes, _edges, out_adj, in_adj, _serial, kids = store.internals()
    anchor = nodes.get(id)
    if anchor is None or anchor.archived or id not in visible:
        return None
    wanted = None if edge_types is None else frozenset(t.lower() for t in edge_types)
    memo = lift._memo
    members = subtree_members(store, id, visible) if id in kids else [id]
    member_set = frozenset(members) if len(members) > 1 else None
    pairs: set[tuple[str, str, bool]] = set()  # projected edges (neighbour, relation, out)
    relations: dict[tuple[str, bool], list[int]] = {}  # -> [projected count, first serial]
    latest: dict[str, int] = {}
    degree = 0
    symmetric = SYMMETRIC_RELATIONS
    for m in members:
        mseq = nodes[m].seq_to
        for adj, outgoing in ((out_adj.get(m), True), (in_adj.get(m), False)):
            if not adj:
                continue
            for source, target, t, seq, s in adj:
                other = target if outgoing else source
                if other == id or (member_set is not None and other in member_set):
                    continue
                if wanted is not None and t not in wanted:
                    continue
                w = memo.get(other, _MISSING)
                if w is _MISSING:
                    w = lift(other)
                if w is None or w == id:
                    continue
                degree += 1
                out = (id < w) if t in symmetric else outgoing  # type: ignore[operator]
                pair = (w, t, out)
                if pair in pairs:
                    r = relations[(t, out)]
                    if s < r[1]:
                        r[1] = s
                else:
                    pairs.add(pair)  # type: ignore[arg-type]
                    r = relations.get((t, out))  # type: ignore[assignment]
                    if r is None:
                        relations[(t, out)] = [1, s]
                    else:
                        r[0] += 1
                        if s < r[1]:
                            r[1] = s
                if seq is None:
                    oseq = nodes[other].seq_to
                    if oseq is None:
                        seq = -1 if mseq is None else mseq
                    else:
                        seq = oseq if mseq is None or oseq > mseq else mseq
                if latest.get(w, -2) < seq:  # type: ignore[arg-type]
                    latest[w] = seq  # type: ignore[index]
    rel = sorted(relations.items(), key=lambda kv: (-kv[1][0], kv[1][1]))
    return SummaryParts(
        degree,
        tuple(_relation(r, "out" if d else "in", c[0]) for (r, d), c in rel),
        tuple(sorted(latest.items(), key=lambda kv: (-kv[1], kv[0]))),
        tuple(members),
    )


def summary_view(
    store: Store,
    parts: SummaryParts,
    limit: int,
    cache: dict[tuple[str, int], SampleNeighbor] | None = None,
) -> EdgeSummaryView:
    """`parts` as an `EdgeSummaryView` with up to `limit` sample neighbours, each read from the
    store now; `cache` shares `SampleNeighbor` values between the summaries of one turn."""
    if not parts.degree:
        return EMPTY_EDGE_SUMMARY
    node_of = store.node
    samples = []
    for item in parts.latest[: max(0, limit)]:
        sn = None if cache is None else cache.get(item)
        if sn is None:
            nid, s = item
            nb = node_of(nid)
            sn = SampleNeighbor(nid, nb.type, nb.title, None if s < 0 else s)  # type: ignore[union-attr]
            if cache is not None:
                cache[item] = sn
        samples.append(sn)
    return EdgeSummaryView(parts.degree, parts.relations, tuple(samples))


_RELATIONS: dict[tuple[str, str, int], RelationCount] = {}


def _relation(relation: str, direction: str, count: int) -> RelationCount:
    """Interned `RelationCount` values (they are immutable; a few hundred distinct ones)."""
    key = (relation, direction, count)
    rc = _RELATIONS.get(key)
    if rc is None:
        rc = RelationCount(relation, direction, count)
        if len(_RELATIONS) < 4096:
            _RELATIONS[key] = rc
    return rc


def expand_from_seeds(
    store: Store,
    seeds: Iterable[str],
    *,
    hops: int = 1,
    edge_types: Iterable[str] | None = None,
    allowed: Collection[str] | None = None,
    include_children: bool = True,
    exclude_internal: bool = False,
) -> list[str]:
    """BFS drill: seeds first, then per hop unseen active children and neighbours across
    projected edges (`allowed` None: raw edges across the whole store). Discovery order.

    ``exclude_internal`` leaves the hierarchy out altogether, as in ``project_edges``: neither the
    internal edge types nor a rollup's children (its hierarchy) are followed."""
    keep = _type_filter(edge_types, exclude_internal)
    include_children = include_children and not exclude_internal
    node_of = store.node
    order: list[str] = []
    seen: set[str] = set()
    for s in seeds:
        n = node_of(s)
        if n is None or n.archived or s in seen:
            continue
        seen.add(s)
        order.append(s)
    lift = Lifter(store, allowed) if allowed is not None else None
    frontier = list(order)
    for _ in range(hops):
        nxt: list[str] = []
        for f in frontier:
            if include_children:
                fn = node_of(f)
                kids = list(fn.children_ids) if fn is not None else []
                kids.extend(k for k in sorted(store.kids(f)) if k not in kids)
                for kid in kids:
                    kn = node_of(kid)
                    if kid in seen or kn is None or kn.archived or kn.parent_id != f:
                        continue
                    seen.add(kid)
                    nxt.append(kid)
            if lift is None:
                members = [f]
            elif f in allowed:  # type: ignore[operator]
                members = subtree_members(store, f, allowed)  # type: ignore[arg-type]
            else:
                members = [f]
            member_set = set(members)
            for edge in _touching_edges(store, members, keep):
                src_in = edge.source in member_set
                if src_in and edge.target in member_set:
                    continue
                other = edge.target if src_in else edge.source
                w = other if lift is None else lift(other)
                if w is None or w in seen:
                    continue
                wn = node_of(w)
                if wn is None or wn.archived:
                    continue
                seen.add(w)
                nxt.append(w)
        order.extend(nxt)
        frontier = nxt
        if not frontier:
            break
    return order
