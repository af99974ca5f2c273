"""`MemoryGraphError` (every error carries a `.code`) and argument checks naming the bad one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, NoReturn

#: Every code an engine error or a batch rejection can carry (`batch.REJECTION_CODES` included).
ERROR_CODES: frozenset[str] = frozenset(
    {
        "NO_EMBEDDING_PROFILE",
        "BAD_ARGS",
        "CHILD_NOT_FOUND",
        "CHILD_HAS_PARENT",
        "OP_FAILED",
        "MEMORY_STORE_MISSING",
        "VALIDATION_SKIP",
        "NODE_NOT_FOUND",
        "NODE_ARCHIVED",
        "TYPE_MISMATCH",
        "BAD_OP",
        "UNKNOWN_OP",
        "BAD_REF",
        "BAD_RELATION",
    }
)


class MemoryGraphError(Exception):
    """An engine error: `.code` says what kind (e.g. ``BAD_ARGS``), `.message` says what exactly."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across processes
        return (type(self), (self.code, self.message))


def bad_args(argument: str, problem: str) -> MemoryGraphError:
    """A ``BAD_ARGS`` error whose message starts with the name of the bad argument."""
    return MemoryGraphError("BAD_ARGS", f"{argument}: {problem}")


def raise_bad_args(argument: str, problem: str) -> NoReturn:
    raise bad_args(argument, problem)


def _kind(value: Any) -> str:
    return type(value).__name__


def check_str(argument: str, value: Any, *, allow_none: bool = False) -> str | None:
    """`value` must be a str (or None when allowed)."""
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise_bad_args(argument, f"expected a string, got {_kind(value)}")
    return value


def check_bool(argument: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise_bad_args(argument, f"expected True or False, got {_kind(value)}")
    return value


def check_int(
    argument: str, value: Any, *, minimum: int | None = None, allow_none: bool = False
) -> int | None:
    """`value` must be an int (not a bool) at least `minimum`."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise_bad_args(argument, f"expected an integer, got {_kind(value)}")
    if minimum is not None and value < minimum:
        raise_bad_args(argument, f"must be >= {minimum}, got {value}")
    return value


def check_choice(argument: str, value: Any, choices: Iterable[str]) -> str:
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        raise_bad_args(argument, f"must be one of {', '.join(options)}; got {value!r}")
    return value


def check_str_list(argument: str, value: Any, *, allow_none: bool = True) -> tuple[str, ...] | None:
    """`value` must be a list/tuple/set of strings (a bare string is refused: it is not a list)."""
    if value is None:
        if allow_none:
            return None
        raise_bad_args(argument, "is required")
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
        raise_bad_args(argument, f"expected a list of strings, got {_kind(value)}")
    for item in value:
        if not isinstance(item, str):
            raise_bad_args(argument, f"expected a list of strings, found {_kind(item)}")
    return tuple(value)


def check_id_list(argument: str, value: Any) -> tuple[str, ...]:
    """A required iterable of node ids (any iterable but a bare string), in order."""
    if value is None:
        raise_bad_args(argument, "is required")
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise_bad_args(argument, f"expected an iterable of ids, got {_kind(value)}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise_bad_args(argument, f"expected an iterable of ids, found {_kind(item)}")
    return items


def check_id_set(argument: str, value: Any, *, allow_none: bool = True) -> frozenset[str] | None:
    """An iterable of node ids (any iterable but a bare string), as a frozenset."""
    if value is None:
        if allow_none:
            return None
        raise_bad_args(argument, "is required")
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise_bad_args(argument, f"expected an iterable of ids, got {_kind(value)}")
    items = value if isinstance(value, frozenset) else frozenset(value)
    for item in items:
        if not isinstance(item, str):
            raise_bad_args(argument, f"expected an iterable of ids, found {_kind(item)}")
    return items


def check_id_container(argument: str, value: Any, *, allow_none: bool = True) -> Any:
    """Like `check_id_set`, but a set, frozenset or mapping is used as it is (no O(n) copy):
    read paths only test membership, once per call."""
    if isinstance(value, (frozenset, set, dict)):
        return value
    if isinstance(value, AbstractSet) and not isinstance(value, (str, bytes)):
        return value
    return check_id_set(argument, value, allow_none=allow_none)


def check_range(argument: str, value: Any) -> tuple[int | None, int | None] | None:
    """An inclusive ``(start, end)`` tuple, either end None for open (also a {from, to} mapping)."""
    if value is None:
        return None
    if isinstance(value, dict):
        unknown = set(value) - {"from", "to", "start", "end"}
        if unknown:
            raise_bad_args(argument, f"unknown keys {sorted(unknown)}")
        value = (value.get("from", value.get("start")), value.get("to", value.get("end")))
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise_bad_args(argument, "expected a (start, end) tuple")
    start, end = value
    for part, name in ((start, "start"), (end, "end")):
        if part is not None and (isinstance(part, bool) or not isinstance(part, int)):
            raise_bad_args(argument, f"{name} must be an integer or None, got {_kind(part)}")
    return (start, end)
