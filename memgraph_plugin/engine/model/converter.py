"""The one cattrs converter: `converter.unstructure(x)` turns any view, result or record into plain
JSON-ready data (dict, list, str, int, float, bool, None). Sets become sorted lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import cattrs

from ...errors import MemoryGraphError

__all__ = ["canonical_keys", "converter", "key_spellings", "to_json_data"]

converter = cattrs.Converter()


def _sort_key(value: Any) -> tuple[str, str]:
    return (type(value).__name__, value if isinstance(value, str) else repr(value))


def _attrs_instance(obj: Any) -> dict[str, Any]:
    un = converter.unstructure
    return {a.name: un(getattr(obj, a.name)) for a in attrs.fields(type(obj))}


def _mapping(obj: Mapping[Any, Any]) -> dict[str, Any]:
    un = converter.unstructure
    return {str(k): un(v) for k, v in obj.items()}


def _sequence(obj: Any) -> list[Any]:
    un = converter.unstructure
    return [un(v) for v in obj]


def _set(obj: Any) -> list[Any]:
    un = converter.unstructure
    return [un(v) for v in sorted(obj, key=_sort_key)]


def _error(obj: MemoryGraphError) -> dict[str, Any]:
    return {"code": obj.code, "message": obj.message}


def _is_mapping(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, Mapping)


def _is_sequence(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, (list, tuple))


def _is_set(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, (set, frozenset))


def _is_error(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, MemoryGraphError)


_JSON_SCALARS = (str, int, float, bool, type(None))


def _is_other(t: Any) -> bool:
    """Anything that is no JSON scalar (the more specific hooks below take precedence)."""
    return not (isinstance(t, type) and issubclass(t, _JSON_SCALARS))


def _other(obj: Any) -> str:
    """A value with no JSON form (a rejected op may hold anything): its repr, so the result of
    `unstructure` is JSON-ready whatever a caller put in."""
    return repr(obj)


converter.register_unstructure_hook_func(_is_other, _other)  # first: the lowest precedence
for _raw in (bytes, bytearray):  # cattrs passes these through as they are
    converter.register_unstructure_hook(_raw, _other)
converter.register_unstructure_hook_func(_is_error, _error)
converter.register_unstructure_hook_func(
    lambda t: isinstance(t, type) and attrs.has(t), _attrs_instance
)
converter.register_unstructure_hook_func(_is_mapping, _mapping)
converter.register_unstructure_hook_func(_is_set, _set)
converter.register_unstructure_hook_func(_is_sequence, _sequence)


def to_json_data(value: Any) -> Any:
    """Shorthand for `converter.unstructure(value)`."""
    return converter.unstructure(value)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def key_spellings(*names: str, **aliases: str) -> dict[str, str]:
    """``{spelling: snake_name}`` accepting each snake_case name and its camelCase spelling
    (the contract's JSON uses camelCase), plus `aliases` (``spelling=snake_name``)."""
    out: dict[str, str] = {}
    for name in names:
        out[_camel(name)] = name
        out[name] = name
    out.update(aliases)
    return out


def canonical_keys(raw: Mapping[str, Any], spellings: Mapping[str, str]) -> dict[str, Any]:
    """The entries of `raw` whose key is a known spelling, under their snake_case names
    (unknown keys are dropped; when both spellings are given the later one wins)."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        canon = spellings.get(key)
        if canon is not None:
            out[canon] = value
    return out
