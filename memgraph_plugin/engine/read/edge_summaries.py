"""`EdgeSummaries`: a store's edge summaries over its default visible set, kept across turns.

The candidateRows block asks for one edge summary per candidate every turn, and a summary walks
the adjacency of the candidate's whole hidden subtree. Between two turns only a few nodes change,
so the summaries are kept, and before each use the store's change log says which ones a write
(or a new visible set) can have changed: those, and only those, are dropped and recomputed.

A summary of anchor ``A`` reads: the members of ``A`` (``A`` and the hidden nodes that lift to
it), their edges, the seq of both ends of each edge, and where each neighbour lifts. Every member
and neighbour of a kept summary has its lift memoised, so the memo says which summaries a node
is part of. An edge at ``x`` drops the summary ``x`` lifts to; a new ``seq_to`` also drops the
summaries its neighbours lift to. A move in the hierarchy (parent, archived, type, level) or in
or out of the visible set moves the lifts of ``x``'s hidden subtree: each of those nodes drops
what it and its neighbours lifted to, and its memoised lift; ``x``'s ancestors drop theirs (the
subtree's new anchor is one of them). Titles and types of neighbours are read when a view is
built, so a rename drops nothing.
"""

from __future__ import annotations

from collections.abc import Container, Iterable

import attrs

from ..graph.store import Store
from ..model.models import Node
from ..model.views import EMPTY_EDGE_SUMMARY, EdgeSummaryView, SampleNeighbor
from .projection import Lifter, SummaryParts, summary_parts, summary_view

#: a new visible set that differs from the last one in more than this share of its ids is not
#: worth patching: every summary is recomputed
REBUILD_SHARE = 0.25

#: the newest neighbours a kept summary holds (a larger `limit` is computed afresh): kept entries
#: survive garbage collections, so each is kept small
KEEP_NEIGHBOURS = 16

#: a kept summary: its parts, then the last view built from them, its limit and the neighbour
#: records its samples were read from
_Entry = tuple[SummaryParts, int, EdgeSummaryView, tuple[Node | None, ...]]


class EdgeSummaries:
    """Edge summaries (all edge types) of one store over one visible set at a time, patched
    from the store's change log. Use `summaries_for(store)`: one per store."""

    __slots__ = ("_store", "_visible", "_ids", "_position", "_lift", "_entries", "_samples")

    def __init__(self, store: Store) -> None:
        self._store = store
        self._visible: Container[str] | None = None
        self._ids: frozenset[str] = frozenset()
        self._position = store.change_position
        self._lift = Lifter(store, ())
        self._entries: dict[str, _Entry] = {}
        #: sample neighbours shared by the views built since the last write
        self._samples: dict[tuple[str, int], SampleNeighbor] = {}

    def summary(self, id: str, visible: Container[str], limit: int) -> EdgeSummaryView:
        """`projection.edge_summary(store, id, visible, limit=limit)`, from the cache when
        nothing it read has changed."""
        store = self._store
        if visible is not self._visible or store.change_position != self._position:
            self._sync(visible)
        if limit > KEEP_NEIGHBOURS:
            parts = summary_parts(store, id, visible, lift=self._lift)
            return EMPTY_EDGE_SUMMARY if parts is None else summary_view(store, parts, limit)
        entry = self._entries.get(id)
        if entry is None:
            parts = summary_parts(store, id, visible, lift=self._lift)
            if parts is None:
                return EMPTY_EDGE_SUMMARY
            memo = self._lift._memo
            for m in parts.members:
                memo[m] = id
            if len(parts.latest) > KEEP_NEIGHBOURS:
                parts = attrs.evolve(parts, latest=parts.latest[:KEEP_NEIGHBOURS])
        else:
            parts, kept_limit, view, records = entry
            if kept_limit == limit:
                node_of = store.node
                for sample, record in zip(view.sample_neighbors, records, strict=True):
                    if node_of(sample.id) is not record:
                        break
                else:
                    return view
        view = summary_view(store, parts, limit, self._samples)
        records = tuple(store.node(s.id) for s in view.sample_neighbors)
        self._entries[id] = (parts, limit, view, records)
        return view

    # -- keeping current -------------------------------------------------------------------------

    def _reset(self, visible: Container[str], ids: frozenset[str] | None = None) -> None:
        store = self._store
        self._visible = visible
        self._ids = _ids_of(visible) if ids is None else ids
        self._lift = Lifter(store, visible)
        if visible is store.pool_rank():  # the store keeps every node's lift onto the pool
            self._lift._memo = dict(store.pool_anchors())
        self._entries = {}
        self._samples = {}

    def _sync(self, visible: Container[str]) -> None:
        """Catch up with the store's writes and move to `visible`, dropping what they staled."""
        store = self._store
        changes = store.changes_since(self._position)
        self._position = store.change_position
        if changes is None or self._visible is None:
            self._reset(visible)
            return
        if changes:
            self._samples = {}
        moved: Iterable[str] = ()
        if visible is not self._visible:
            ids = _ids_of(visible)
            moved = ids ^ self._ids
            if len(moved) > REBUILD_SHARE * max(len(ids), 1) + 16:
                self._reset(visible, ids)
                return
            self._visible, self._ids = visible, ids
            lift = Lifter(store, visible)
            lift._memo = self._lift._memo  # kept: only the moved nodes' lifts are dropped below
            self._lift = lift
        for nid, kind in changes:
            if kind == "moved":
                self._moved(nid)
            elif kind == "edge":
                self._edge_at(nid)
            elif kind == "seq":
                self._edge_at(nid)
                self._drop_around(nid)
            # "node": a title or fields only, which views read when they are built
        for nid in moved:
            self._moved(nid)

    def _edge_at(self, nid: str) -> None:
        """An edge at `nid` came or went: drop the summary `nid` lifts to (a node in no kept
        summary has no memoised lift and drops nothing: its edges count nowhere yet)."""
        anchor = self._lift._memo.get(nid)
        if anchor is not None:
            self._entries.pop(anchor, None)

    def _moved(self, nid: str) -> None:
        """`nid` and its hidden subtree may all lift elsewhere now: drop their summaries (where
        they lifted to, and where their neighbours lift) and forget their memoised lifts."""
        entries, memo = self._entries, self._lift._memo
        visible, kids = self._visible, self._store.kids
        self._drop_ancestors(nid)
        todo = [nid]
        seen: set[str] = set()
        while todo:
            cur = todo.pop()
            if cur in seen:
                continue
            seen.add(cur)
            anchor = memo.pop(cur, None)
            if anchor is not None:
                entries.pop(anchor, None)
            entries.pop(cur, None)
            self._drop_around(cur)
            todo.extend(k for k in kids(cur) if k not in visible)  # type: ignore[operator]

    def _drop_ancestors(self, nid: str) -> None:
        """Drop the summaries of `nid` and every ancestor (where `nid` may lift to now)."""
        entries, node_of = self._entries, self._store.node
        seen: set[str] = set()
        cur: str | None = nid
        while cur and cur not in seen:
            seen.add(cur)
            entries.pop(cur, None)
            node = node_of(cur)
            cur = None if node is None else node.parent_id

    def _drop_around(self, nid: str) -> None:
        """Drop the summaries that `nid`'s current neighbours lift to."""
        entries, memo = self._entries, self._lift._memo
        _nodes, _edges, out_adj, in_adj, _serial, _kids = self._store.internals()
        for adj in (out_adj.get(nid), in_adj.get(nid)):
            if adj:
                for source, target, _t, _seq, _s in adj:
                    anchor = memo.get(target if source == nid else source)
                    if anchor is not None:
                        entries.pop(anchor, None)


def _ids_of(visible: Container[str]) -> frozenset[str]:
    if isinstance(visible, frozenset):
        return visible
    return frozenset(visible)  # type: ignore[call-overload]


def summaries_for(store: Store) -> EdgeSummaries:
    """The store's `EdgeSummaries` (made on first use, kept on the store and gone with it):
    every session opened on one loaded chat shares it, so a summary outlives the session that
    computed it."""
    cache = store.summaries
    if cache is None:
        cache = store.summaries = EdgeSummaries(store)
    return cache  # type: ignore[no-any-return]
