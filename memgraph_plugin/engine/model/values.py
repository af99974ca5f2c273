"""What a stored value may be, and the size limits: strict JSON data the journal and `export` can
write (no NaN / Infinity, integers within int64, valid Unicode text), no bigger than the limits.

Limits come from the settings (documented defaults below; docs/robustness.md):

- ``max_title_chars`` (default 2000): the longest node title, in characters.
- ``max_field_bytes`` (default 65536): the largest field value, as UTF-8 JSON bytes.
- ``max_field_name_chars`` (default 256): the longest field name, in characters.
- ``max_node_bytes`` (default 1 MiB): the largest node, its title and every field name and value
  as UTF-8 JSON bytes (many fields each within ``max_field_bytes`` still add up).
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from typing import Any

import attrs

from .frozen import MAX_DEPTH

DEFAULT_MAX_TITLE_CHARS = 2000
DEFAULT_MAX_FIELD_BYTES = 64 * 1024
DEFAULT_MAX_FIELD_NAME_CHARS = 256
DEFAULT_MAX_NODE_BYTES = 1024 * 1024
#: ids, refs, types and relation names: short names, never text
MAX_NAME_CHARS = 512
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


@attrs.frozen
class Limits:
    """The size limits a write is checked against."""

    max_title_chars: int = DEFAULT_MAX_TITLE_CHARS
    max_field_bytes: int = DEFAULT_MAX_FIELD_BYTES
    max_field_name_chars: int = DEFAULT_MAX_FIELD_NAME_CHARS
    max_node_bytes: int = DEFAULT_MAX_NODE_BYTES

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> Limits:
        """The limits in `settings` (missing keys: the defaults; bad values are an error)."""
        settings = settings or {}
        out = {}
        for name, default in (
            ("max_title_chars", DEFAULT_MAX_TITLE_CHARS),
            ("max_field_bytes", DEFAULT_MAX_FIELD_BYTES),
            ("max_field_name_chars", DEFAULT_MAX_FIELD_NAME_CHARS),
            ("max_node_bytes", DEFAULT_MAX_NODE_BYTES),
        ):
            value = settings.get(name, default)
            if value is None:
                value = default
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"setting {name}: expected a positive integer, got {value!r}")
            out[name] = value
        return cls(**out)


DEFAULT_LIMITS = Limits()


def text_problem(
    value: str, where: str, *, max_chars: int | None = None, name: bool = False
) -> str | None:
    """What keeps the string `value` from being stored, as ``"<where>: ..."``; None when fine.

    Every string must be valid Unicode (no lone surrogates). A `name` (id, ref, type, relation)
    also has no control characters and at most `MAX_NAME_CHARS` characters.
    """
    limit = MAX_NAME_CHARS if name and max_chars is None else max_chars
    if limit is not None and len(value) > limit:
        return f"{where}: {len(value)} characters, over the limit of {limit}"
    if value.isascii() and (not name or value.isprintable()):
        return None  # ASCII is valid Unicode; printable ASCII has no control character
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"{where}: a lone surrogate at character {exc.start}: not valid Unicode text"
    if name:
        for i, char in enumerate(value):
            if (char < " " or "\x7f" <= char <= "\x9f") and unicodedata.category(char) == "Cc":
                return f"{where}: control character U+{ord(char):04X} at character {i}"
    return None


def scalar_problem(value: Any, where: str) -> str | None:
    """A float that is not finite or an int outside int64: what is wrong; None otherwise."""
    if type(value) is float or isinstance(value, float):
        if not math.isfinite(value):
            return f"{where}: {value!r} is not a finite number (JSON has no NaN or Infinity)"
    elif isinstance(value, int) and not isinstance(value, bool):
        if not INT_MIN <= value <= INT_MAX:
            return f"{where}: integer {value} is outside the 64-bit range"
    elif isinstance(value, str):
        return text_problem(value, where)
    return None


_SCALARS = (str, int, float, bool, type(None))


def value_problem(value: Any, where: str, limits: Limits = DEFAULT_LIMITS) -> str | None:
    """What keeps a field value from being stored, starting with its path below `where` (e.g.
    ``"fields.when[2]: ..."``); None when it is strict JSON data within ``max_field_bytes``."""
    kind = type(value)
    if kind is str and value.isascii() and len(value) * 6 + 2 <= limits.max_field_bytes:
        return None  # the common case: a short ASCII text (within the limit however escaped)
    if (kind is int or kind is bool or value is None) and limits.max_field_bytes >= 32:
        return scalar_problem(value, where)  # at most 20 bytes as JSON
    todo: list[tuple[Any, str, int]] = [(value, where, 0)]
    while todo:
        item, path, depth = todo.pop()
        if isinstance(item, _SCALARS):
            problem = scalar_problem(item, path)
            if problem is not None:
                return problem
            continue
        if depth >= MAX_DEPTH:
            return f"{path}: nested more than {MAX_DEPTH} levels deep"
        if isinstance(item, Mapping):
            for key, sub in item.items():
                if not isinstance(key, str):
                    return f"{path}: keys must be strings, found {type(key).__name__}"
                problem = text_problem(key, "key")
                if problem is not None:
                    return f"{path}: {problem}"
                todo.append((sub, f"{path}.{key}", depth + 1))
        elif isinstance(item, (list, tuple, set, frozenset)):
            todo.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(item))
        else:
            return f"{path}: expected JSON data, got {type(item).__name__}"
    size = _json_size(value, limits.max_field_bytes)
    if size > limits.max_field_bytes:
        return (
            f"{where}: {size} bytes as JSON, over the limit of {limits.max_field_bytes} "
            "(setting max_field_bytes)"
        )
    return None


def field_name_problem(name: str, where: str, limits: Limits = DEFAULT_LIMITS) -> str | None:
    """A field name: valid text within ``max_field_name_chars``."""
    if len(name) > limits.max_field_name_chars:
        return (
            f"{where}: a field name of {len(name)} characters, over the limit of "
            f"{limits.max_field_name_chars} (setting max_field_name_chars)"
        )
    return text_problem(name, where)


def node_size_problem(
    where: str, title: str, fields: Mapping[str, Any], limits: Limits = DEFAULT_LIMITS
) -> str | None:
    """A whole node: its title and fields within ``max_node_bytes`` as UTF-8 JSON."""
    cap = limits.max_node_bytes
    size = len(title.encode("utf-8", "surrogatepass")) + 2
    for key, value in fields.items():
        size += len(str(key).encode("utf-8", "surrogatepass")) + 4 + _json_size(value, cap)
        if size > cap:
            return (
                f"{where}: the node is over {cap} bytes as JSON (title and fields; setting "
                "max_node_bytes)"
            )
    return None


def _plain(value: Any) -> Any:
    """A frozen mapping or collection as JSON can encode it (for measuring)."""
    return dict(value) if isinstance(value, Mapping) else list(value)


def _json_size(value: Any, limit: int) -> int:
    """The UTF-8 JSON size of `value` (a short string is measured without encoding JSON)."""
    if isinstance(value, str) and len(value) * 6 + 2 <= limit:
        return len(value) + 2  # certainly within the limit: the exact figure is not needed
    return len(json.dumps(value, ensure_ascii=False, default=_plain).encode("utf-8"))


def title_problem(value: str, where: str, limits: Limits = DEFAULT_LIMITS) -> str | None:
    """A title: valid Unicode within ``max_title_chars``."""
    if len(value) > limits.max_title_chars:
        return (
            f"{where}: {len(value)} characters, over the limit of {limits.max_title_chars} "
            "(setting max_title_chars)"
        )
    return text_problem(value, where)
