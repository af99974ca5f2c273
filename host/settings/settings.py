"""Host settings: schema defaults < ``<data_dir>/memgraph-host.toml`` < ``MEMGRAPH_HOST_<KEY>``
environment variables < ``Host(settings=...)`` / ``memgraph-host --set KEY=VALUE``.

Every key must be declared in the schema (`host.settings.settings_schema`); `SettingsState.check`
rejects unknown keys (naming the closest one) and ill-typed values once the host's plugins are
loaded, because plugins declare their own keys. Also the switches ``MEMGRAPH_HOST_STRICT`` and
``MEMGRAPH_HOST_BLOCK``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import attrs

from host.errors import SettingsError
from host.settings.settings_schema import (
    ENV_PREFIX,
    RESERVED_ENV,
    SCHEMA,
    Paths,
    setting,
    settings_room,
    toml_value,
)

SETTINGS_FILE = "memgraph-host.toml"
STRICT_ENV = "MEMGRAPH_HOST_STRICT"
BLOCK_ENV = "MEMGRAPH_HOST_BLOCK"


@settings_room
class HostKeys:
    """The host's own keys."""

    storage_uri: str | None = setting(
        None,
        """Where the LanceDB database lives: a folder or any LanceDB URI (``s3://bucket/prefix``,
        ``gs://...``, ``az://...``). Unset: ``<data_dir>/lancedb``.""",
    )
    plugin_dirs: Paths = setting(
        (),
        """Folders whose plugins are loaded (each ``name.py`` or ``name/__init__.py``). In the
        settings file, relative to the data dir. ``--plugins-dir`` adds more.""",
    )


#: The host's own defaults, present in every ``host.settings`` (the other keys are present only
#: when set; code reads them with the declared default).
DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"embedding_profile": "wordllama", "schema": None, "storage_uri": None, "plugin_dirs": ()}
)

#: Source labels shown by ``memgraph-host config``.
DEFAULT, FILE, ENV, FLAG = "default", "file", "env", "flag"


@attrs.define
class SettingsState:
    """The merged settings of one host, where each key came from, and the raw layers to check.

    ``values`` is exposed read-only as ``host.settings``; values given as text (environment,
    ``--set``) are read again with their key's type once the key is declared.
    """

    values: dict[str, Any]
    sources: dict[str, str]  # key -> "default" | "file <path>" | "env <VAR>" | "flag"
    layers: list[tuple[str, dict[str, Any]]] = attrs.Factory(list)  # (where, raw values)
    texts: dict[tuple[str, str], str] = attrs.Factory(dict)  # (where, key) -> text
    file_text: str = ""
    file_path: Path | None = None

    @property
    def view(self) -> Mapping[str, Any]:
        return MappingProxyType(self.values)

    def origin(self, key: str) -> str:
        return self.sources.get(key, DEFAULT)

    def check(self, *, unknown: bool = True) -> None:
        """Every set key must be declared (``unknown``) and hold a value of its type.

        Raises `SettingsError` naming where the key was set (file:line, variable, flag).
        """
        for where, layer in self.layers:
            for key, value in layer.items():
                setting = SCHEMA.get(key)
                place = self._where(where, key)
                if setting is None:
                    if unknown:
                        raise SCHEMA.unknown_error(key, place)
                    continue
                text = self.texts.get((where, key))
                if text is not None:
                    value = setting.parse_text(text, place)
                    layer[key] = value
                    if self.sources.get(key) == _source_label(where):
                        self.values[key] = _normalise(key, value, None)
                else:
                    setting.check(value, place)

    def _where(self, where: str, key: str) -> str:
        if self.file_path is not None and where == str(self.file_path):
            line = _line_of(self.file_text, key)
            return f"{where}:{line}" if line else where
        return where


def _source_label(where: str) -> str:
    if where.startswith(ENV_PREFIX):
        return f"{ENV} {where}"
    if where.startswith("--set") or where == "Host(settings=...)":
        return FLAG
    return f"{FILE} {where}"


def _line_of(text: str, key: str) -> int | None:
    match = re.search(rf"^[ \t]*{re.escape(key)}[ \t]*=", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _normalise(key: str, value: Any, file_path: Path | None) -> Any:
    if key == "plugin_dirs" and value is not None:
        base = file_path.parent if file_path is not None else None
        dirs = _paths(value, "plugin_dirs")
        return tuple(str(base / d) if base is not None else d for d in dirs)
    return value


def load_state(
    data_dir: Path,
    explicit: Mapping[str, Any] | None,
    *,
    texts: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> SettingsState:
    """Merge defaults, the data dir's TOML file, the environment and ``explicit`` + ``texts``
    (``--set KEY=VALUE`` values, read with their key's type). Values of keys declared so far
    are checked now; `SettingsState.check` checks the rest once plugins are loaded."""
    if explicit is not None and not isinstance(explicit, Mapping):
        raise SettingsError(f"settings must be a mapping, got {type(explicit).__name__}")
    env = os.environ if environ is None else environ
    path = data_dir / SETTINGS_FILE
    state = SettingsState(values=dict(DEFAULTS), sources={}, file_path=path)
    from_file = read_settings_file(path)
    if path.is_file():
        state.file_text = path.read_text(encoding="utf-8", errors="replace")
    state.layers.append((str(path), from_file))
    for name in sorted(env):
        if name.startswith(ENV_PREFIX) and name not in RESERVED_ENV:
            key = name[len(ENV_PREFIX) :].lower()
            state.layers.append((name, {key: toml_value(env[name], env[name])}))
            state.texts[(name, key)] = env[name]
    flags = dict(explicit or {})
    if flags:
        state.layers.append(("Host(settings=...)", flags))
    for key, text in (texts or {}).items():
        where = f"--set {key}"
        state.layers.append((where, {key: toml_value(text, text)}))
        state.texts[(where, key)] = text
    for where, layer in state.layers:
        for key, value in layer.items():
            state.values[key] = _normalise(key, value, path if where == str(path) else None)
            state.sources[key] = _source_label(where)
    state.check(unknown=False)
    if state.values.get("storage_uri") is None:
        state.values["storage_uri"] = str(data_dir / "lancedb")
    dirs = _paths(state.values["plugin_dirs"], "settings")
    state.values["plugin_dirs"] = tuple(str(d) for d in dirs)
    return state


def load_settings(data_dir: Path, explicit: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The merged settings (read-only); see `load_state`."""
    return load_state(data_dir, explicit).view


def read_settings_file(path: Path) -> dict[str, Any]:
    """The table in ``path`` (empty when the file does not exist)."""
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from exc


def _paths(value: Any, where: str) -> list[str]:
    if isinstance(value, str | os.PathLike):
        return [os.fspath(value)]
    if isinstance(value, Iterable) and all(isinstance(v, str | os.PathLike) for v in value):
        return [os.fspath(v) for v in value]
    raise SettingsError(f"{where}: plugin_dirs must be a path or a list of paths, got {value!r}")


def env_strict(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``MEMGRAPH_HOST_STRICT`` is set to a true value (1, true, yes, on)."""
    env = os.environ if environ is None else environ
    return env.get(STRICT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def env_blocked(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """Plugin names listed in ``MEMGRAPH_HOST_BLOCK`` (comma separated)."""
    env = os.environ if environ is None else environ
    return frozenset(n.strip() for n in env.get(BLOCK_ENV, "").split(",") if n.strip())
