"""Entity resolution against a chat's graph: a name found in a message -> the node it already is.

Only the store's name index (`memgraph_plugin.engine.index.name_index.NameIndex`) is asked, never a
scan: an exact name or alias first, then a short form ("Mel" -> "Melanie", "Juno" -> "Juno
Kade"), then the other way round (a new "Melanie" -> an existing "Mel"). A short form that fits
several nodes is ambiguous and resolves to nothing (a new node).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from memgraph_plugin.engine.index.name_index import NameIndex, id_order, numbered

from ..text.words import COMMON_WORDS, CONNECTORS
from .variants import spelling_variant

__all__ = ["CHARACTER", "PLACE", "KnownEntity", "NameResolver"]

CHARACTER = "character_sheet"
PLACE = "location_state"


@attrs.frozen
class KnownEntity:
    """A node of the graph a name resolved to."""

    id: str
    type: str
    title: str


class NameResolver:
    """Resolves names through one store's name index (refreshed once, when made)."""

    def __init__(self, index: NameIndex | None, node: Callable[[str], Any]) -> None:
        self.index = index
        self.node = node

    @classmethod
    def for_store(cls, store: Any) -> NameResolver:
        """A resolver over `store` as it is now (`store.name_index()` brings the index current)."""
        return cls(store.name_index(), store.node)

    @classmethod
    def empty(cls) -> NameResolver:
        """A resolver that knows nothing (a new chat, or a test)."""
        return cls(None, lambda _id: None)

    def known(self, word: str) -> bool:
        """Whether a (lower-case) word is a name or short form of a character or place."""
        if self.index is None:
            return False
        if word in COMMON_WORDS:  # "her" is no short form of "Heron": exact names only
            return any(self.index.known_as(t, word) for t in (CHARACTER, PLACE))
        return any(
            self.index.known_as(t, word) or self.index.known_short(t, word)
            for t in (CHARACTER, PLACE)
        ) or self._variant(CHARACTER, word) is not None

    def resolve(self, name: str, types: Sequence[str] = (CHARACTER, PLACE)) -> KnownEntity | None:
        """The node `name` already is (exact, then short form, then longer form), else None."""
        if self.index is None:
            return None
        key = " ".join(name.lower().split())
        if not key:
            return None
        for step in (self._exact, self._short, self._longer, self._variant):
            for type_id in types:
                found = step(type_id, key)
                if found is not None:
                    return found
        return None

    def _entity(self, ids: frozenset[str] | set[str], *, unique: bool) -> KnownEntity | None:
        if not ids or (unique and len(ids) > 1):
            return None
        for node_id in sorted(ids, key=id_order):
            node = self.node(node_id)
            if node is not None and not node.archived:
                return KnownEntity(node.id, node.type, node.title)
        return None

    def _exact(self, type_id: str, key: str) -> KnownEntity | None:
        assert self.index is not None
        return self._entity(self.index.known_as(type_id, key), unique=False)

    def _short(self, type_id: str, key: str) -> KnownEntity | None:
        assert self.index is not None
        return self._entity(self.index.known_short(type_id, key), unique=True)

    def _longer(self, type_id: str, key: str) -> KnownEntity | None:
        """An existing short name this longer one extends ("mel" for a new "melanie"). A numbered
        name ("Room 101", "Message 12") names one of several things, never their shared word."""
        assert self.index is not None
        words = key.split()
        if numbered(key):
            return None
        candidates: list[str] = []
        if len(words) > 1 and CONNECTORS.isdisjoint(words):  # "Bank of Qel" is not Qel
            candidates += [words[0], words[-1]]
        elif len(words) > 1:
            candidates.append(words[0])
        else:
            candidates += [key[:k] for k in range(len(key) - 1, 2, -1)]
        found: set[str] = set()
        for form in candidates:
            found.update(self.index.known_as(type_id, form))
        return self._entity(found, unique=True)

    def _variant(self, type_id: str, key: str) -> KnownEntity | None:
        """The one node known by a spelling variant of `key` ("mohammed" -> Muhammad): the
        candidates share its consonant skeleton (an index lookup), `spelling_variant` decides."""
        assert self.index is not None
        ids = self.index.sounding_like(type_id, key)
        if not ids:
            return None
        found = set()
        for node_id in ids:
            names = self.index.names.get(node_id)
            if names is not None and any(spelling_variant(key, n) for n in names[1]):
                found.add(node_id)
        return self._entity(found, unique=True)
