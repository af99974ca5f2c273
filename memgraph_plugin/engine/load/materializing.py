"""`MaterializingDict`: a dict a chat's load fills lazily from its columns (`LazyNodes`,
`LazyEdges`, `LazyAdjacency`). Reading one key reads only that entry; anything that reads the
whole dict (iteration, views, copies, equality, ``|``) first makes every entry
(`materialize`), so it sees what a dict filled entry by entry would hold."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


class MaterializingDict(dict[_K, _V]):
    """The whole-dict reads of a lazily filled dict; a subclass gives `materialize` and its
    per-key reads (``get``, ``__missing__``, ``__contains__``, writes)."""

    def materialize(self) -> None:
        """Make every entry not made yet (a no-op once whole)."""
        raise NotImplementedError

    def __iter__(self) -> Iterator[_K]:
        self.materialize()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator[_K]:
        self.materialize()
        return dict.__reversed__(self)

    def keys(self) -> Any:
        self.materialize()
        return dict.keys(self)

    def values(self) -> Any:
        self.materialize()
        return dict.values(self)

    def items(self) -> Any:
        self.materialize()
        return dict.items(self)

    def copy(self) -> dict[_K, _V]:
        self.materialize()
        return dict(dict.items(self))

    __copy__ = copy

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self.copy(),))

    def popitem(self) -> tuple[_K, _V]:
        self.materialize()
        return dict.popitem(self)

    def clear(self) -> None:
        self.materialize()
        dict.clear(self)

    def __eq__(self, other: object) -> bool:
        self.materialize()
        if isinstance(other, MaterializingDict):
            other.materialize()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self.materialize()
        if isinstance(other, MaterializingDict):
            other.materialize()
        return dict.__ne__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: Any) -> Any:
        return self.copy() | other

    def __ror__(self, other: Any) -> Any:
        return dict(other) | self.copy()

    def __ior__(self, other: Any) -> Any:
        self.update(other)
        return self

    def __repr__(self) -> str:
        self.materialize()
        return f"{type(self).__name__}({dict.__repr__(self)})"
