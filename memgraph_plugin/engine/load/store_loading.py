"""Loading a whole graph into an empty `Store` at once, and writing it back out.

`StoreLoading` (a mixin of `Store`) builds every index in one pass each from decoded records
(`from_dict`: the contract's JSON; `from_columns`: a snapshot's pyarrow tables), which is what
`put_node` / `add_edge` one by one would leave without their per-write bookkeeping; the keyword
and name indices and the pools' views are left to their first use.
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Self

import pyarrow as pa

from host.collector_pause import gc_paused, paused

from ...errors import bad_args
from ..index.candidate_pool import PoolKey, SortedPool, cached_view
from ..index.deferred import Deferred, defer, started
from ..index.name_index import NameIndex, primary_key_values
from ..keyword.keyword_columns import KeywordColumns
from ..keyword.keyword_index import KeywordIndex
from ..model.edge_records import EdgeRec, edge_of
from ..model.json_records import decode_graph, edge_to_dict, node_to_dict
from ..model.models import Edge, EdgeKey, Node
from ..model.schema import Schema, is_diagnostic_type
from ..model.views import NodeView
from .column_loader import (
    LoadedColumns,
    LoadedPoolOrder,
    decode_edge_columns,
    load_node_columns,
    parse_all,
)
from .edge_columns import EdgeMaps, load_edge_columns
from .lazy_nodes import LazyNodes

_first = operator.itemgetter(0)
_intern = sys.intern


def share_strings(nodes: dict[str, Node]) -> None:
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


def names_from_columns(loaded: LoadedColumns, schema: Schema) -> NameIndex:
    """The name index of the loaded rows (what `NameIndex(schema, nodes)` gives for them), built
    from the title and fields columns: no `Node` made for each named node and their fields
    parsed in one call. Once the node map dropped its columns (every record made), from the
    records."""
    index = NameIndex(schema)
    rows, specs = loaded.named_rows(schema)
    nodes = loaded.nodes
    ids = loaded.id_objs[rows].tolist()
    titles, texts = nodes.loaded_column("title"), nodes.loaded_column("fields")
    if titles is None or texts is None:
        index.note_all((nid, nodes.get(nid)) for nid in ids)
        return index
    take = pa.array(rows, type=pa.int64())
    codes = loaded.type_codes()[rows].tolist()
    titles_of = titles.take(take).to_pylist()
    fields_of = parse_all(texts.take(take).to_pylist())
    empty: dict[str, Any] = {}

    def rows_of() -> Iterator[tuple[str, str, frozenset[str]]]:
        for nid, code, title, fields in zip(ids, codes, titles_of, fields_of, strict=True):
            spec = specs[code]
            assert spec is not None
            yield nid, spec.type, primary_key_values(spec, title or "", fields or empty)

    index.add_many(rows_of())
    return index


class StoreLoading:
    """Bulk loading and `to_dict` of a `Store` (a mixin: the store provides the attributes)."""

    # indices a columnar load leaves to their first read (`_load_columns`)
    _kw_dirty = Deferred()
    _names_dirty = Deferred()
    _names = Deferred()
    _visible = Deferred()
    _pool_of = Deferred()
    _pool = Deferred()
    _type_pools = Deferred()
    _anchor = Deferred()
    _deferred: dict[str, Callable[[], Any]]

    _schema: Schema
    _nodes: dict[str, Node]
    _edges: dict[EdgeKey, EdgeRec]
    _next_serial: int
    _out: dict[str, list[EdgeRec]]
    _in: dict[str, list[EdgeRec]]
    _kids: dict[str, list[str]]
    _views: dict[str, NodeView]
    _keywords: KeywordIndex
    _node_seq: int
    _seq_counter: int
    _visible_cache: frozenset[str] | None
    _loaded_order: Callable[[], LoadedPoolOrder | None] | LoadedPoolOrder | None
    _clear_pool_caches: Callable[[], None]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, schema: Schema | Any = None) -> Self:
        """A store from the contract's JSON (``nodes`` map, ``edges`` list, ``nodeSeq``,
        ``seqCounter``). Node keys may be camelCase or snake_case; unknown keys are ignored.
        Edges with a missing end, self-edges and duplicates are dropped.
        """
        if not isinstance(data, Mapping):
            raise bad_args("data", f"expected a mapping, got {type(data).__name__}")
        store = cls(schema=schema)
        with gc_paused():  # acyclic records only: see host.collector_pause
            store._bulk_load(*decode_graph(data))
        return store

    @classmethod
    def from_columns(
        cls,
        nodes: Any,
        edges: Any,
        node_seq: int,
        seq_counter: int,
        *,
        schema: Any = None,
        keywords: KeywordColumns | None = None,
        names_now: bool = False,
    ) -> Self:
        """A store from a snapshot's node and edge state tables (pyarrow,
        `storage/format/graph_columns.py`):
        the same store `from_dict` builds from the same graph, without a JSON dict per node
        (indices computed over whole columns: `columnar.load_node_columns`). `keywords`: the
        snapshot's keyword columns (`KeywordIndex.adopt`), so the index is not rebuilt from text.
        `names_now`: the name index built from the node columns on a build thread from the
        moment they are loaded (a chat's open: its first message waits for it), not at its
        first lookup."""
        store = cls(schema=schema)
        with gc_paused():
            loaded = load_node_columns(nodes, node_seq, store._schema)
            # the name index needs only the node columns: built from now on, beside the
            # edge columns' sorts (which let go of the GIL)
            names = None
            if names_now:  # (the build holds the schema, not the store: no cycle)
                named = store._schema
                names = started(paused(lambda: names_from_columns(loaded, named)))
            columns = loaded.nodes.column_ids() or ([], {})
            maps = load_edge_columns(edges, loaded.id_array, *columns)
            store._load_columns(
                loaded,
                maps if maps is not None else decode_edge_columns(edges, loaded.nodes),
                seq_counter,
                names=names,
            )
            shared = (  # the keyword columns' ids are the node rows' (the usual case)
                loaded.nodes.column_ids()
                if keywords is not None and loaded.same_ids(keywords.ids)
                else None
            )
            unknown = store._keywords.adopt(
                keywords, store._schema, len(store._nodes), ids=shared
            )
            if unknown is not None:  # the rest is indexed from the columns
                store._deferred.pop("_kw_dirty", None)
                store._kw_dirty = dict.fromkeys(unknown)
        return store

    def _load_columns(
        self,
        loaded: LoadedColumns,
        edges: EdgeMaps | dict[EdgeKey, Edge],
        seq_counter: int,
        *,
        names: Callable[[], NameIndex] | None = None,
    ) -> None:
        """Fill an empty store from indices computed over columns (what `_bulk_load` of the
        same records leaves). The node map makes records on first read (`LazyNodes`), and the
        indices' containers are made on first read too (`Deferred`): an open that reads a few
        nodes pays for those only."""
        nodes = self._nodes = loaded.nodes
        self._kids = loaded.kids
        if isinstance(edges, tuple):  # the edge map and adjacency, from the edge columns
            self._edges, self._out, self._in = edges
            self._next_serial = len(self._edges)
        else:
            self._load_edges(edges)
        views = self._views
        node_of = nodes.__getitem__  # the node map, not the store: no cycle through the pools
        view_of = functools.partial(cached_view, views)
        schema = self._schema  # builders hold no reference to the store (no cycle)

        def all_ids() -> dict[str, None]:
            return dict.fromkeys(nodes.ids())

        def pool() -> SortedPool:
            return SortedPool.from_sorted(
                loaded.pool_keys(), None, view_of=view_of, node_of=node_of
            )

        def type_pools() -> dict[str, SortedPool]:
            keys = loaded.pool_keys()
            return {
                t: SortedPool.from_sorted(
                    [keys[i] for i in rows], None, view_of=view_of, node_of=node_of
                )
                for t, rows in loaded.type_rows().items()
            }

        builders: dict[str, Callable[[], Any]] = {
            "_kw_dirty": all_ids,
            "_names": names or (lambda: names_from_columns(loaded, schema)),
            "_visible": loaded.visible,
            "_pool_of": loaded.pool_of,
            "_pool": pool,
            "_type_pools": type_pools,
            "_anchor": loaded.anchors,
        }
        # each builds containers of every id or name, none in a cycle: with the collector on,
        # their allocations (and the first turn's beside them) set off collections over the
        # whole loaded heap, again and again (a third of the name index's time at 100k)
        defer(self, **{name: paused(build) for name, build in builders.items()})
        self._names_dirty = {}  # writes before the first lookup: re-read after the build
        self._loaded_order = loaded.order_view
        self._node_seq = loaded.node_seq
        self._seq_counter = seq_counter
        self._clear_pool_caches()
        self._visible_cache = None

    def _order_as_loaded(self) -> LoadedPoolOrder | None:
        """`_pool_of` read from a columnar load's arrays while it is not built (the pool is
        still the load's: a write to the pool builds `_pool_of` first) and the node map still
        holds its columns; None otherwise (then `_pool_of` answers). Nothing per pool member:
        the first keyword search after an open breaks its ties with this."""
        loaded = self._loaded_order
        if loaded is None:
            return None
        nodes = self._nodes
        if "_pool_of" in self.__dict__ or (isinstance(nodes, LazyNodes) and nodes.complete):
            self._loaded_order = None  # built, or the columns are gone
            return None
        if not isinstance(loaded, LoadedPoolOrder):  # made on first use
            loaded = self._loaded_order = loaded()
        return loaded

    def _bulk_load(
        self, nodes: dict[str, Node], edges: dict[EdgeKey, Edge], node_seq: int, seq_counter: int
    ) -> None:
        """Fill an empty store's indices in one pass each (what `put_node` / `add_edge` one by
        one would leave, without their per-write bookkeeping). The keyword and name indices
        start with every node marked dirty: they are built by their first use."""
        self._nodes = nodes
        share_strings(nodes)
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
        own_id = nodes.own_id if isinstance(nodes, LazyNodes) else lambda k: nodes[k].id
        ids: dict[str, str] = {}  # decoded id text -> the node's own id string
        types: dict[str, str] = {}
        seqs: dict[int, int] = {}
        for serial, (key, edge) in enumerate(edges.items()):
            source, etype, target = key
            s = ids.get(source)
            if s is None:
                s = ids[source] = own_id(source)
            t = ids.get(target)
            if t is None:
                t = ids[target] = own_id(target)
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
        nodes, visible = self._nodes, self._visible
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
        self._fill_pools(entries)

    def _fill_pools(self, entries: list[tuple[PoolKey, Node, str]]) -> None:
        """The pool, the per-type pools and pool membership from `(key, node, lower-case type)`
        entries in key order."""
        pool_of = self._pool_of
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
        self._set_pools(keys, pool_nodes, by_type)

    def _set_pools(
        self,
        keys: list[PoolKey],
        pool_nodes: list[Node],
        by_type: dict[str, tuple[list[PoolKey], list[Node]]],
    ) -> None:
        """The pool and the per-type pools from their entries in key order."""
        # views on the first read, through the view cache (`view` returns the same objects)
        view_of = functools.partial(cached_view, self._views)
        self._pool = SortedPool.from_sorted(keys, pool_nodes, view_of=view_of)
        self._type_pools = {
            t: SortedPool.from_sorted(k, n, view_of=view_of) for t, (k, n) in by_type.items()
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
            "edges": [edge_to_dict(edge_of(r)) for r in self._edges.values()],
            "nodeSeq": self._node_seq,
            "seqCounter": self._seq_counter,
        }
