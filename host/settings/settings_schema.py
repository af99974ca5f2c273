"""The settings schema: every setting key with its type, default and doc, declared by its owner.

Each subsystem declares its own keys beside its code with `declare` (host keys in
``host/settings/settings.py``, the memory graph's in ``memgraph_plugin/settings_keys.py``, a
plugin's in its
own module). Declaring happens at import time, so the schema is the union of what the loaded code
declared; the host checks a settings table against it once its plugins are loaded. This module
imports nothing from the rest of the project, so any package can depend on it without a cycle.
"""

from __future__ import annotations

import difflib
import enum
import os
import sys
import threading
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from host.errors import SettingsError

#: Environment variables ``MEMGRAPH_HOST_<KEY>`` set a key; these names are switches, not keys.
ENV_PREFIX = "MEMGRAPH_HOST_"
RESERVED_ENV = frozenset({"MEMGRAPH_HOST_STRICT", "MEMGRAPH_HOST_BLOCK", "MEMGRAPH_HOST_DATA_DIR"})

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class Kind(enum.StrEnum):
    """The type of a setting's value (as written in ``memgraph-host.toml``)."""

    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"  # an integer or a float
    BOOLEAN = "boolean"
    CHOICE = "choice"  # one of ``choices``
    PATH = "path"
    PATHS = "paths"  # a path or a list of paths
    TABLE = "table"  # a TOML table (dict)
    ANY = "any"  # anything TOML can hold; the owner checks it


def env_name(key: str) -> str:
    """The environment variable that sets ``key``: ``MEMGRAPH_HOST_RECALL_TOP_K``."""
    return ENV_PREFIX + key.upper()


@attrs.frozen
class Setting:
    """One settings key: type, default (``None`` allowed as "unset" when the default is None)."""

    key: str
    kind: Kind = attrs.field(converter=Kind)
    default: Any
    doc: str
    owner: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = attrs.field(default=(), converter=tuple)

    @property
    def nullable(self) -> bool:
        return self.default is None

    def type_text(self) -> str:
        """``integer >= 1``, ``one of: off, shadow, canary``, ``number in [0, 1]``..."""
        if self.kind is Kind.CHOICE:
            text = "one of: " + ", ".join(self.choices)
        elif self.minimum is not None and self.maximum is not None:
            text = f"{self.kind} in [{self.minimum:g}, {self.maximum:g}]"
        elif self.minimum is not None:
            text = f"{self.kind} >= {self.minimum:g}"
        elif self.maximum is not None:
            text = f"{self.kind} <= {self.maximum:g}"
        else:
            text = str(self.kind)
        return text + (" (or unset)" if self.nullable else "")

    def check(self, value: Any, where: str) -> Any:
        """``value`` when it fits this key, else a `SettingsError` naming ``where`` and the key."""
        if value is None and self.nullable:
            return value
        if not self._fits(value):
            raise SettingsError(
                f"{where}: setting {self.key} = {value!r}: expected {self.type_text()}"
            )
        return value

    def _fits(self, value: Any) -> bool:
        kind = self.kind
        if kind is Kind.ANY:
            return True
        if kind is Kind.BOOLEAN:
            return isinstance(value, bool)
        if kind in (Kind.STRING, Kind.PATH):
            return isinstance(value, str | os.PathLike)
        if kind is Kind.CHOICE:
            return isinstance(value, str) and value in self.choices
        if kind is Kind.PATHS:
            if isinstance(value, str | os.PathLike):
                return True
            return isinstance(value, list | tuple) and all(
                isinstance(v, str | os.PathLike) for v in value
            )
        if kind is Kind.TABLE:
            return isinstance(value, Mapping)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if kind is Kind.INTEGER and not isinstance(value, int):
            return False
        if value != value or value in (float("inf"), float("-inf")):
            return False
        if self.minimum is not None and value < self.minimum:
            return False
        return self.maximum is None or value <= self.maximum

    def parse_text(self, text: str, where: str) -> Any:
        """A value given as text (environment variable, ``--set KEY=VALUE``), checked."""
        kind = self.kind
        stripped = text.strip()
        if self.nullable and stripped.lower() in {"", "none", "null"}:
            return None
        value: Any = text
        if kind is Kind.BOOLEAN:
            low = stripped.lower()
            value = True if low in _TRUE else False if low in _FALSE else text
        elif kind in (Kind.INTEGER, Kind.NUMBER):
            value = _number(stripped)
        elif kind is Kind.CHOICE:
            value = stripped.lower()
        elif kind is Kind.PATHS:
            value = [p for p in text.split(os.pathsep) if p]
        elif kind in (Kind.TABLE, Kind.ANY):
            value = _toml_value(stripped, text)
        return self.check(value, where)


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _toml_value(text: str, fallback: Any) -> Any:
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
        if not setting.key.isidentifier() or setting.key != setting.key.lower():
            raise SettingsError(f"setting key {setting.key!r} must be a lower_case identifier")
        if env_name(setting.key) in RESERVED_ENV:
            raise SettingsError(f"setting key {setting.key!r} is reserved")
        if setting.kind is Kind.CHOICE and not setting.choices:
            raise SettingsError(f"setting {setting.key}: a choice needs choices")
        if setting.default is not None:
            setting.check(setting.default, f"declaring {setting.key}")
        with self._lock:
            old = self._settings.get(setting.key)
            if old is not None and old.owner != setting.owner and old.kind != setting.kind:
                raise SettingsError(
                    f"setting {setting.key} is already declared by {old.owner} as {old.kind}; "
                    f"{setting.owner} declares it as {setting.kind}"
                )
            if old is not None and old.owner != setting.owner:
                return old  # the same module loaded again under another name (a plugin folder)
            self._settings[setting.key] = setting
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

    def closest(self, key: str) -> str | None:
        """The declared key nearest to ``key`` (a likely misspelling), or None."""
        near = difflib.get_close_matches(key, list(self._settings), n=1, cutoff=0.6)
        return near[0] if near else None

    def unknown_error(self, key: str, where: str) -> SettingsError:
        near = self.closest(key)
        hint = f"; did you mean {near!r}?" if near else "; see `memgraph-host config --all`"
        return SettingsError(f"{where}: unknown setting {key!r}{hint}")

    def check(self, values: Mapping[str, Any], where: str, *, unknown: bool = True) -> None:
        """Check every value of a declared key; ``unknown``: an undeclared key is an error too."""
        for key, value in values.items():
            setting = self._settings.get(key)
            if setting is None:
                if unknown:
                    raise self.unknown_error(str(key), where)
                continue
            setting.check(value, where)


#: The process-wide schema every `declare` call adds to.
SCHEMA = SettingsSchema()


def declare(
    key: str,
    kind: Kind | str,
    default: Any,
    doc: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] = (),
    owner: str | None = None,
) -> Setting:
    """Declare a setting key in `SCHEMA` (call it at import time, beside the code reading it).

    ``owner`` defaults to the calling module's name. Returns the `Setting`, whose ``key`` and
    ``default`` the code can use: ``settings.get(TOP_K.key, TOP_K.default)``.
    """
    if owner is None:
        owner = sys._getframe(1).f_globals.get("__name__", "")
    return SCHEMA.declare(
        Setting(
            key,
            Kind(kind),
            default,
            " ".join(doc.split()),
            owner=owner,
            minimum=minimum,
            maximum=maximum,
            choices=choices,
        )
    )
