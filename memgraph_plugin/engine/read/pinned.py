"""The nodes a person pinned (`Node.pinned`): recall injects them every turn.

`pinned_ids(store)` answers from a set kept per store: found once when first asked, then
patched from the store's change log (`changes_since`), so a turn reads only the nodes written
since the last one. The first search reads only records that can be pinned: a store opened
from columns holds a pinned node as a raw row, and the open decodes every raw row into a record
(`raw_rows`; a table of mostly raw rows is opened node by node), so the records a `LazyNodes`
has not made yet are never pinned.
"""

from __future__ import annotations

import weakref

from ..graph.store import Store
from ..index.name_index import id_order
from ..load.lazy_nodes import LazyNodes

__all__ = ["pinned_ids"]


class _Pins:
    """One store's pinned, active node ids and the change-log position they are current at."""

    __slots__ = ("ids", "position")

    def __init__(self, store: Store) -> None:
        self.position = store.change_position
        nodes = store._nodes  # the records that exist; see the module docstring
        records = dict.values(nodes) if isinstance(nodes, LazyNodes) else nodes.values()
        self.ids = {n.id for n in records if n.pinned and not n.archived}


_KEPT: weakref.WeakKeyDictionary[Store, _Pins] = weakref.WeakKeyDictionary()


def pinned_ids(store: Store) -> tuple[str, ...]:
    """The ids of the store's pinned nodes that are not archived, in creation order."""
    pins = _KEPT.get(store)
    if pins is None:
        pins = _KEPT[store] = _Pins(store)
    elif pins.position != store.change_position:
        changes = store.changes_since(pins.position)
        if changes is None:  # the log restarted: search again
            pins = _KEPT[store] = _Pins(store)
        else:
            pins.position = store.change_position
            for nid, kind in changes:
                if kind == "edge":
                    continue
                node = store.node(nid)
                if node is not None and node.pinned and not node.archived:
                    pins.ids.add(nid)
                else:
                    pins.ids.discard(nid)
    return tuple(sorted(pins.ids, key=id_order))
