"""The settings schema: every setting key is a field of a frozen attrs class (a room of keys),
with its type, default, bounds (attrs validators) and doc (field metadata), and one cattrs
converter checks a value against its field's type.

A subsystem declares its keys beside its code::

    @settings_room
    class TidyKeys:
        tidy_every: int = setting(5, "How often tidy runs.", minimum=1)

`settings_room` makes the class frozen and adds its fields to `SCHEMA` (the field name is the
key, the defining module its owner). Declaring happens at import time, so the schema is the union
of what the loaded code declared; the host checks a settings table against it once its plugins
are loaded. Code reads a key through its field (``attrs.fields(TidyKeys).tidy_every``: name,
default, bounds) or a whole room at once (`read_room`). This module imports nothing from the rest
of the project but its errors, so any package can depend on it without a cycle.
"""

from __future__ import annotations

import difflib
import math
import os
import threading
import tomllib
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
import cattrs

from host.errors import SettingsError

#: Environment variables ``MEMGRAPH_HOST_<KEY>`` set a key; these names are switches, not keys.
ENV_PREFIX = "MEMGRAPH_HOST_"
RESERVED_ENV = frozenset({"MEMGRAPH_HOST_STRICT", "MEMGRAPH_HOST_BLOCK", "MEMGRAPH_HOST_DATA_DIR"})

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

#: Field types beyond the plain ones: a path or a list of paths; a TOML table.
Paths = tuple[str, ...]
Table = dict[str, Any]

_TYPE_TEXT: dict[Any, str] = {
    str: "string", int: "integer", float: "number", bool: "boolean", Path: "path",
    Paths: "paths", Table: "table", Any: "any",
}  # fmt: skip

R = TypeVar("R")


def env_name(key: str) -> str:
    """The environment variable that sets ``key``: ``MEMGRAPH_HOST_RECALL_TOP_K``."""
    return ENV_PREFIX + key.upper()


def _accept(*types: type, finite: bool = False) -> Any:
    """A structure hook that passes a value of ``types`` (never a bool unless asked) unchanged."""

    def hook(value: Any, _type: Any) -> Any:
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            raise TypeError(f"{value!r} is not {_type}")
        if finite and not math.isfinite(value):
            raise ValueError(f"{value!r} is not finite")
        return value

    return hook


def _paths(value: Any, _type: Any) -> Any:
    if isinstance(value, str | os.PathLike):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str | os.PathLike) for v in value):
        return value
    raise TypeError(f"{value!r} is not a path or a list of paths")


#: Checks a settings value against its field's type strictly (a bool is no integer, a number is
#: finite, a text is no number; numbers come out as floats for a ``float`` field, other values
#: unchanged), and structures a room from a settings table (`read_room`).
CONVERTER = cattrs.Converter()
CONVERTER.register_structure_hook(int, _accept(int))
_number_hook = _accept(int, float, finite=True)
CONVERTER.register_structure_hook(float, lambda value, type_: float(_number_hook(value, type_)))
CONVERTER.register_structure_hook(bool, _accept(bool))
CONVERTER.register_structure_hook(str, _accept(str, os.PathLike))
CONVERTER.register_structure_hook(Path, _accept(str, os.PathLike))
CONVERTER.register_structure_hook_func(lambda t: t == Paths, _paths)
CONVERTER.register_structure_hook_func(lambda t: t == Table, _accept(Mapping))


def setting(
    default: Any, doc: str, *, minimum: float | None = None, maximum: float | None = None
) -> Any:
    """One key's field: its default, doc and bounds (checked by attrs validators)."""
    bounds = [attrs.validators.ge(minimum)] if minimum is not None else []
    bounds += [attrs.validators.le(maximum)] if maximum is not None else []
    return attrs.field(
        default=default,
        validator=attrs.validators.optional(bounds) if bounds else None,
        metadata={"doc": " ".join(doc.split()), "minimum": minimum, "maximum": maximum},
    )


@attrs.frozen
class Setting:
    """One declared key: its attrs field and the module that declared it."""

    field: attrs.Attribute  # type: ignore[type-arg]
    owner: str

    key = property(lambda self: self.field.name)
    default = property(lambda self: self.field.default)
    doc = property(lambda self: self.field.metadata["doc"])

    @property
    def base(self) -> Any:
        """The field's type without ``| None``."""
        args = [a for a in typing.get_args(self.field.type) if a is not type(None)]
        return args[0] if self.nullable and len(args) == 1 else self.field.type

    @property
    def nullable(self) -> bool:
        return type(None) in typing.get_args(self.field.type)

    def type_text(self) -> str:
        """``integer >= 1``, ``one of: off, shadow, canary``, ``number in [0, 1]``..."""
        base = self.base
        if typing.get_origin(base) is typing.Literal:
            text = "one of: " + ", ".join(typing.get_args(base))
        else:
            text = _TYPE_TEXT[base] + bounds_text(self.field)
        return text + (" (or unset)" if self.nullable else "")

    def check(self, value: Any, where: str) -> Any:
        """``value`` when it fits this key, else a `SettingsError` naming ``where`` and the key."""
        try:
            checked = CONVERTER.structure(value, self.field.type)
            if checked is not None and self.field.validator is not None:
                self.field.validator(None, self.field, checked)
        except Exception as exc:  # noqa: BLE001 - cattrs and attrs raise several types
            raise SettingsError(
                f"{where}: setting {self.key} = {value!r}: expected {self.type_text()}"
            ) from exc
        return checked

    def parse_text(self, text: str, where: str) -> Any:
        """A value given as text (environment variable, ``--set KEY=VALUE``), checked."""
        base, stripped = self.base, text.strip()
        if self.nullable and stripped.lower() in {"", "none", "null"}:
            return None
        value: Any = text
        if base is bool:
            low = stripped.lower()
            value = True if low in _TRUE else False if low in _FALSE else text
        elif base in (int, float):
            value = _number(stripped)
        elif typing.get_origin(base) is typing.Literal:
            value = stripped.lower()
        elif base == Paths:
            value = [p for p in text.split(os.pathsep) if p]
        elif base in (Table, Any):
            value = toml_value(stripped, text)
        return self.check(value, where)


def bounds_text(field: attrs.Attribute) -> str:  # type: ignore[type-arg]
    """`` >= 1``, `` in [0, 1]``, `` <= 5`` or nothing: a field's bounds, as errors say them."""
    low, high = field.metadata.get("minimum"), field.metadata.get("maximum")
    if low is not None and high is not None:
        return f" in [{low:g}, {high:g}]"
    if low is not None:
        return f" >= {low:g}"
    return f" <= {high:g}" if high is not None else ""


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def toml_value(text: str, fallback: Any) -> Any:
    """``text`` read as a TOML value, else ``fallback``."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return fallback


class SettingsSchema:
    """The declared keys (thread-safe); `SCHEMA` is the process-wide one."""

    def __init__(self) -> None:
        self._settings: dict[str, Setting] = {}
        self._lock = threading.Lock()

    def declare(self, setting: Setting) -> Setting:
        """Add ``setting``; its owner declaring it again (a module imported again) replaces it.
        Another owner declaring it keeps the first declaration, or fails with another type."""
        key = setting.key
        if key != key.lower():
            raise SettingsError(f"setting key {key!r} must be a lower_case identifier")
        if env_name(key) in RESERVED_ENV:
            raise SettingsError(f"setting key {key!r} is reserved")
        if setting.default is not None:
            setting.check(setting.default, f"declaring {key}")
        with self._lock:
            old = self._settings.get(key)
            if old is not None and old.owner != setting.owner:
                if old.field.type != setting.field.type:
                    raise SettingsError(
                        f"setting {key} is already declared by {old.owner} as "
                        f"{old.type_text()}; {setting.owner} declares it as {setting.type_text()}"
                    )
                return old  # the same module loaded again under another name (a plugin folder)
            self._settings[key] = setting
        return setting

    def get(self, key: str) -> Setting | None:
        return self._settings.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._settings

    def __iter__(self) -> Iterator[Setting]:
        """The declared settings, sorted by key."""
        return iter(sorted(self._settings.values(), key=lambda s: s.key))

    def default(self, key: str) -> Any:
        """The declared default of ``key`` (`KeyError` when undeclared)."""
        return self._settings[key].default

    def unknown_error(self, key: str, where: str) -> SettingsError:
        """The error for an undeclared ``key``, naming the closest declared one."""
        near = difflib.get_close_matches(key, list(self._settings), n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]!r}?" if near else "; see `memgraph-host config --all`"
        return SettingsError(f"{where}: unknown setting {key!r}{hint}")


#: The process-wide schema every `settings_room` adds to.
SCHEMA = SettingsSchema()


def settings_room(cls: type[R]) -> type[R]:
    """``cls`` as a frozen attrs class whose fields are declared in `SCHEMA` (call at import)."""
    room = attrs.frozen(kw_only=True)(cls)
    attrs.resolve_types(room)
    for field in attrs.fields(room):
        SCHEMA.declare(Setting(field, room.__module__))
    return room


def read_room(
    settings: Mapping[str, Any], room: type[R], *, error: type[ValueError] = SettingsError
) -> R:
    """The keys of ``room`` in ``settings`` (absent or None: the default), as a ``room``; a value
    that does not fit raises ``error`` saying ``setting KEY=VALUE must be an integer >= 1``."""
    values = {}
    for field in attrs.fields(room):  # type: ignore[arg-type]
        value = settings.get(field.name)
        if value is None:
            continue
        setting = Setting(field, room.__module__)
        try:
            values[field.name] = setting.check(value, "")
        except SettingsError:
            text = setting.type_text()
            if not text.startswith("one of"):
                text = ("an " if text[0] in "aeiou" else "a ") + text
            raise error(f"setting {field.name}={value!r} must be {text}") from None
    return CONVERTER.structure(values, room)
