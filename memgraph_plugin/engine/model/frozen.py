"""Immutable containers for views and records: `FrozenDict`, `deep_freeze`, `thaw`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any


class FrozenDict(Mapping[str, Any]):
    """A read-only, hashable mapping (insertion ordered). Values should be frozen too."""

    __slots__ = ("_data", "_hash")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_data", dict(*args, **kwargs))
        object.__setattr__(self, "_hash", None)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(frozenset(self._data.items()))
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if type(other) is FrozenDict or isinstance(other, FrozenDict):
            return self._data == other._data  # type: ignore[attr-defined]
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FrozenDict is immutable")

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    @staticmethod
    def parse_all(values: Iterable[Any]) -> None:
        """Parse every not yet parsed `JsonFields` among `values` with one `json.loads` (a
        whole-chat index build reads every node's fields: one parse of all is about twice as
        fast as one per node)."""
        todo = [v for v in values if type(v) is JsonFields and not _parsed(v)]
        if len(todo) < 2:
            return
        texts = [v._text for v in todo]
        try:
            parsed = json.loads("[" + ",".join(texts) + "]")
        except ValueError:
            return  # a bad text: each raises its own clear error when read
        scalar = _SCALAR_TYPES
        for v, data in zip(todo, parsed, strict=True):
            if type(data) is dict:
                out = {k: x if type(x) in scalar else deep_freeze(x) for k, x in data.items()}
                _DATA_SLOT.__set__(v, out)


def _parsed(value: JsonFields) -> bool:
    try:
        _DATA_SLOT.__get__(value)
    except AttributeError:
        return False
    return True

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (self._data,))

    def to_dict(self) -> dict[str, Any]:
        """A plain, deep-thawed dict copy."""
        return thaw(self)


EMPTY = FrozenDict()
_DATA_SLOT = FrozenDict.__dict__["_data"]  # the slot itself, under the property below
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


class JsonFields(FrozenDict):
    """A `FrozenDict` read from its JSON text on first use: a chat opened from its columns
    keeps each node's fields as the stored text until something reads them (most nodes of a
    long chat are never read in a session). Equal, hashable and pickled like the parsed map."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_hash", None)

    @property  # type: ignore[override]
    def _data(self) -> dict[str, Any]:
        try:
            return _DATA_SLOT.__get__(self)  # type: ignore[no-any-return]
        except AttributeError:
            pass
        data = json.loads(self._text)
        if type(data) is not dict:
            raise ValueError(f"stored fields are not a JSON object: {self._text[:80]!r}")
        scalar = _SCALAR_TYPES
        out = {k: v if type(v) in scalar else deep_freeze(v) for k, v in data.items()}
        _DATA_SLOT.__set__(self, out)
        return out

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def deep_freeze(value: Any) -> Any:
    """Lists/tuples -> tuples, dicts -> FrozenDict, sets -> frozenset, recursively."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, FrozenDict):
        if all(_is_frozen(v) for v in value.values()):
            return value
        return FrozenDict({k: deep_freeze(v) for k, v in value.items()})
    if isinstance(value, Mapping):
        return FrozenDict({str(k): deep_freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(deep_freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(deep_freeze(v) for v in value)
    return value


_SCALARS = (str, int, float, bool, type(None))
MAX_DEPTH = 64  # nesting a field value may have (deeper is refused, like a self-containing list)


def json_problem(value: Any, where: str) -> str | None:
    """What keeps `value` from being stored as JSON data, starting with its path below `where`
    (e.g. ``"fields.when: expected JSON data, got date"``); None when it is fine.

    JSON data is None, bool, int, float, str, and lists, tuples, sets or mappings of it (mapping
    keys are made strings). Field values must be: stores are written out as JSON.
    """
    todo: list[tuple[Any, str, int]] = [(value, where, 0)]
    while todo:
        item, path, depth = todo.pop()
        if isinstance(item, _SCALARS):
            continue
        if depth >= MAX_DEPTH:
            return f"{path}: nested more than {MAX_DEPTH} levels deep"
        if isinstance(item, Mapping):
            todo.extend((v, f"{path}.{k}", depth + 1) for k, v in item.items())
        elif isinstance(item, (list, tuple, set, frozenset)):
            todo.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(item))
        else:
            return f"{path}: expected JSON data, got {type(item).__name__}"
    return None


def _is_frozen(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    if isinstance(value, FrozenDict):
        return all(_is_frozen(v) for v in value.values())
    if isinstance(value, (tuple, frozenset)):
        return all(_is_frozen(v) for v in value)
    return False


def _sort_key(value: Any) -> tuple[str, str]:
    return (type(value).__name__, repr(value) if not isinstance(value, str) else value)


def thaw(value: Any) -> Any:
    """Frozen data -> plain JSON data (mappings -> dict, tuples -> list, sets -> sorted list)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return [thaw(v) for v in sorted(value, key=_sort_key)]
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value
