"""The store's transactions and change log: all-or-nothing writes, the pending `Changeset`, and
the log of written node ids that caches kept outside the store read (`changes_since`).

`StoreTransactions` is a mixin of `Store`: it keeps the undo log and the counters, and undoes a
failed transaction through the store's raw index maintenance (`_put_node_raw`, `_drop_node_raw`,
`_add_edge_raw`, `_remove_edge_raw`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import attrs

from ..model.edge_records import by_serial, serial_of
from ..model.models import Edge, EdgeKey, Node

#: (node id, kind) of a write: "edge" (an edge at the node came or went), "seq" (its `seq_to`
#: changed), "moved" (new or dropped, or its parent, archived flag, type or level changed),
#: "node" (anything else in its record)
Change = tuple[str, str]
CHANGE_LOG_LIMIT = 1 << 16  # past this many entries the log restarts (readers rebuild)


@attrs.frozen
class Before:
    """The state a changeset replaced: each changed node and edge as it was (None: it did not
    exist) and the counters. What undoing the changeset restores (`store_revert.revert`)."""

    nodes: Mapping[str, Node | None]
    edges: Mapping[EdgeKey, Edge | None]
    node_seq: int
    seq_counter: int


@attrs.frozen
class Changeset:
    """What transactions changed since the last `take_changeset()`.

    Apply `edges_removed` before `edges_added` (a replaced edge appears in `edges_added` only),
    and `nodes_removed` last (only a revert removes nodes).
    """

    version: int
    nodes: tuple[Node, ...]
    edges_added: tuple[Edge, ...]
    edges_removed: tuple[EdgeKey, ...]
    node_seq: int
    seq_counter: int
    nodes_removed: tuple[str, ...] = ()
    before: Before | None = attrs.field(default=None, eq=False)


class StoreTransactions:
    """Transactions, the pending changeset and the change log of a `Store` (a mixin: the store
    sets up the attributes in `_init_transactions` and provides the raw index maintenance)."""

    _nodes: dict[str, Node]
    _edges: dict[EdgeKey, Any]
    _out: dict[str, list[Any]]
    _in: dict[str, list[Any]]
    _node_seq: int
    _seq_counter: int
    version: int

    def _init_transactions(self) -> None:
        # change log for caches derived outside the store (`changes_since`)
        self._changes: list[Change] = []
        self._changes_base = 0  # the position of _changes[0]
        self._depth = 0
        self._undo: list[tuple[Any, ...]] = []
        self._pending_nodes: dict[str, Node | None] = {}  # id -> the node before the window
        self._pending_edges: dict[EdgeKey, Edge | None] = {}
        self._pending_counters: tuple[int, int] | None = None  # (node_seq, seq_counter) before
        self._pending = False

    # the store's raw index maintenance (no undo logging), used to undo
    def _put_node_raw(self, node: Node) -> None:
        raise NotImplementedError

    def _drop_node_raw(self, nid: str) -> None:
        raise NotImplementedError

    def _add_edge_raw(self, edge: Edge, serial: int | None) -> None:
        raise NotImplementedError

    def _remove_edge_raw(self, key: EdgeKey) -> None:
        raise NotImplementedError

    def _edge_exact(self, key: EdgeKey) -> Edge | None:
        raise NotImplementedError

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

    def transaction_changed_graph(self) -> bool:
        """Inside a transaction: did it change a node or an edge so far (counters aside)? A
        batch whose ops all changed nothing (a same-value edit, a duplicate link) moves no seq."""
        nodes, edge = self._nodes, self._edge_exact
        for entry in self._undo:
            if entry[0] == "n":
                cur = nodes.get(entry[1])
                if cur is not entry[2] and cur != entry[2]:
                    return True
            elif entry[0] == "e" and edge(entry[1]) != entry[2]:
                return True
        return False

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
        if self._pending_counters is None:
            self._pending_counters = (
                first_counter.get("node_seq", self._node_seq),
                first_counter.get("seq_counter", self._seq_counter),
            )
        for i in changed_nodes:
            self._pending_nodes.setdefault(i, first_node[i])
        for k in changed_edges:
            self._pending_edges.setdefault(k, first_edge[k])

    @property
    def has_changes(self) -> bool:
        """Committed transactions changed something not yet taken by `take_changeset`."""
        return self._pending

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
        before_nodes = self._pending_nodes
        node_seq, seq_counter = self._pending_counters or (self._node_seq, self._seq_counter)
        cs = Changeset(
            version=self.version,
            nodes=tuple(nodes[i] for i in before_nodes if i in nodes),
            edges_added=tuple(added),
            edges_removed=tuple(removed),
            node_seq=self._node_seq,
            seq_counter=self._seq_counter,
            nodes_removed=tuple(
                i for i, old in before_nodes.items() if i not in nodes and old is not None
            ),
            before=Before(
                nodes=before_nodes,
                edges=self._pending_edges,
                node_seq=node_seq,
                seq_counter=seq_counter,
            ),
        )
        self._pending_nodes = {}
        self._pending_edges = {}
        self._pending_counters = None
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
            self._edges = dict(sorted(self._edges.items(), key=by_serial))
            for nid in reorder:
                for adj in (self._out, self._in):
                    recs = adj.get(nid)
                    if recs:
                        recs.sort(key=serial_of)

    def _auto(self) -> bool:
        return self._depth == 0
