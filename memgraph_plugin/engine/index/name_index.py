"""Identity of latest-only nodes: the names a node is known by and an index from name to node.

A `create` of a latest-only type (character sheets, places, threads) merges into the active node
that shares one of its primary-key names. The `NameIndex` answers that lookup without a scan; the
`Store` builds one on the first lookup after it loads and brings it up to date lazily (only nodes
written since the last lookup are re-read), so a write pays one dict entry and a batch never
rescans the store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..model.models import Node
from ..model.schema import NodeTypeSpec, Schema
from .name_skeletons import name_skeleton, name_skeletons

__all__ = [
    "MAX_NAMES",
    "NameIndex",
    "merge_names",
    "name_items",
    "name_skeleton",
    "numbered",
    "primary_key_values",
    "short_forms",
    "split_aliases",
]

_ALIAS_SPLIT = re.compile(r"[,;|]")
#: The most names a node keeps (title and aliases): a merge past it keeps the names it knew and
#: drops the new ones, so no node's names (and the cost of re-indexing it on a write) grow
#: without bound when an extractor keeps finding "new" names for it.
MAX_NAMES = 32


def name_items(value: Any) -> list[str]:
    """Names in a primary-key value as written: strings split on ``, ; |`` and stripped."""
    out: list[str] = []
    if value is None:
        return out
    if isinstance(value, str):
        if _ALIAS_SPLIT.search(value) is None:  # one name: most values (an open reads them all)
            value = value.strip()
            if value:
                out.append(value)
        else:
            out.extend(p.strip() for p in _ALIAS_SPLIT.split(value) if p.strip())
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            out.extend(name_items(item))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.append(str(value))
    return out


def split_aliases(value: Any) -> list[str]:
    """Names in a primary-key value: strings split on ``, ; |``, stripped, lower-cased."""
    return [name.lower() for name in name_items(value)]


def merge_names(old: Any, new: Any, *extra: str) -> Any:
    """`old`'s names plus those of `new` and `extra` it lacks (compared lower-case), as a tuple,
    `MAX_NAMES` at most; `old` itself when nothing is new, so a latest-only merge never drops a
    name it knew."""
    known = {name.lower() for name in name_items(old)}
    added: list[str] = []
    room = MAX_NAMES - len(known)
    for name in (*name_items(new), *extra):
        if len(added) >= room:
            break
        if name.lower() not in known:
            known.add(name.lower())
            added.append(name)
    if not added:
        return old
    return (*name_items(old), *added)


def primary_key_values(spec: NodeTypeSpec, title: str, fields: Mapping[str, Any]) -> frozenset[str]:
    """Every normalised name a node of a latest-only type is known by (title included)."""
    names: set[str] = set()
    for column in spec.primary_key_columns:
        if column == "title":
            names.update(split_aliases(title))
        names.update(split_aliases(fields.get(column)))
    return frozenset(names)


def id_order(node_id: str) -> tuple[int, str]:
    """Creation order of ids: ``n_<k>`` by number, anything else after them by text."""
    tail = node_id[2:] if node_id.startswith("n_") else ""
    return (int(tail), node_id) if tail.isdigit() else (1 << 62, node_id)


def numbered(name: str) -> bool:
    """Whether a name holds a number ("Guard 2", "Room 101"): it names one of several things, so
    it answers to no short form and no other name answers to a part of it."""
    return any(map(str.isdigit, name))


def short_forms(name: str) -> set[str]:
    """The short forms a normalised name answers to: its first word's prefixes of 3 letters or
    more ("mel" for "melanie"), and for a name of several words its first and last word; none
    for a `numbered` name."""
    words = name.split()
    if not words or numbered(name):
        return set()
    first = words[0]
    forms = {first[:k] for k in range(3, len(first))}
    if len(words) > 1:
        forms.update((first, words[-1]))
    forms.discard(name)
    return forms


class NameIndex:
    """(type, normalised name) -> ids of the active latest-only nodes known by that name,
    (type, short form) -> ids known by a longer name with that short form (`short_forms`), and
    (type, skeleton) -> ids known by a name with that consonant skeleton (`name_skeleton`)."""

    __slots__ = ("schema", "ids", "names", "shorts", "skeletons")

    def __init__(self, schema: Schema, nodes: Iterable[tuple[str, Node | None]] = ()) -> None:
        self.schema = schema
        self.ids: dict[tuple[str, str], set[str]] = {}
        self.names: dict[str, tuple[str, frozenset[str]]] = {}
        self.shorts: dict[tuple[str, str], set[str]] = {}
        self.skeletons: dict[tuple[str, str], set[str]] = {}
        self.note_all(nodes)

    def note(self, node_id: str, node: Node | None) -> None:
        """Index `node_id` as it is now (`node` None, archived or not latest-only: forgotten)."""
        old = self.names.pop(node_id, None)
        if old is not None:
            for name in old[1]:
                ids = self.ids.get((old[0], name))
                if ids is not None:
                    ids.discard(node_id)
                    if not ids:
                        del self.ids[(old[0], name)]
                for form in short_forms(name):
                    ids = self.shorts.get((old[0], form))
                    if ids is not None:
                        ids.discard(node_id)
                        if not ids:
                            del self.shorts[(old[0], form)]
                ids = self.skeletons.get((old[0], name_skeleton(name)))
                if ids is not None:
                    ids.discard(node_id)
                    if not ids:
                        del self.skeletons[(old[0], name_skeleton(name))]
        if node is None or node.archived:
            return
        spec = self.schema.get(node.type)
        if spec is None or not spec.latest_only:
            return
        self.add(node_id, spec.type, primary_key_values(spec, node.title, node.fields))

    def add(self, node_id: str, type_id: str, names: frozenset[str]) -> None:
        """Index a node not indexed yet under `names`, `type_id` its spec's type (a bulk build
        from columns calls this with no `Node` made)."""
        self.add_many(((node_id, type_id, names),))

    def add_many(self, rows: Iterable[tuple[str, str, frozenset[str]]]) -> None:
        """`add` of each `(node id, type, names)` row, the short forms and skeleton of each
        distinct name computed once (an open indexes every named node of a long chat, and
        aliases and shared first names repeat)."""
        ids, names_of, shorts, skeletons = self.ids, self.names, self.shorts, self.skeletons
        rows = [row for row in rows if row[2]]
        distinct = list({name: None for _, _, names in rows for name in names})
        forms = dict(
            zip(
                distinct,
                zip(map(short_forms, distinct), name_skeletons(distinct), strict=True),
                strict=True,
            )
        )
        for node_id, type_id, names in rows:
            names_of[node_id] = (type_id, names)
            for name in names:
                known = forms[name]
                ids.setdefault((type_id, name), set()).add(node_id)
                for form in known[0]:
                    shorts.setdefault((type_id, form), set()).add(node_id)
                skeletons.setdefault((type_id, known[1]), set()).add(node_id)

    def note_all(self, nodes: Iterable[tuple[str, Node | None]]) -> None:
        for node_id, node in nodes:
            self.note(node_id, node)

    def find(self, spec: NodeTypeSpec, names: Iterable[str]) -> str | None:
        """The oldest active node id of `spec`'s type known by one of `names`."""
        found: set[str] = set()
        for name in names:
            found.update(self.ids.get((spec.type, name), ()))
        return min(found, key=id_order, default=None)

    def known_as(self, type_id: str, name: str) -> frozenset[str]:
        """Ids of `type_id` known by exactly `name` (normalised)."""
        return frozenset(self.ids.get((type_id, name), ()))

    def sounding_like(self, type_id: str, name: str) -> frozenset[str]:
        """Ids of `type_id` known by a name with the same consonant skeleton as `name`."""
        return frozenset(self.skeletons.get((type_id, name_skeleton(name)), ()))

    def known_short(self, type_id: str, form: str) -> frozenset[str]:
        """Ids of `type_id` with a longer name whose short form is `form` ("mel" -> Melanie)."""
        return frozenset(self.shorts.get((type_id, form), ()))
