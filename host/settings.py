"""Host settings: defaults < ``<data_dir>/memgraph-host.toml`` < ``Host(settings=...)``.

Also the two environment switches: ``MEMGRAPH_HOST_STRICT`` and ``MEMGRAPH_HOST_BLOCK``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from host.errors import SettingsError

SETTINGS_FILE = "memgraph-host.toml"
STRICT_ENV = "MEMGRAPH_HOST_STRICT"
BLOCK_ENV = "MEMGRAPH_HOST_BLOCK"

DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"embedding_profile": "wordllama", "schema": None, "storage_uri": None, "plugin_dirs": ()}
)


def load_settings(data_dir: Path, explicit: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """Merge the defaults, the data dir's TOML file and ``explicit``; read-only result.

    ``storage_uri`` defaults to ``<data_dir>/lancedb``; ``plugin_dirs`` in the file are relative to
    the data dir.
    """
    if explicit is not None and not isinstance(explicit, Mapping):
        raise SettingsError(f"settings must be a mapping, got {type(explicit).__name__}")
    merged: dict[str, Any] = dict(DEFAULTS)
    from_file = read_settings_file(data_dir / SETTINGS_FILE)
    if "plugin_dirs" in from_file:
        from_file["plugin_dirs"] = [
            str(data_dir / d) for d in _paths(from_file["plugin_dirs"], SETTINGS_FILE)
        ]
    merged.update(from_file)
    merged.update(explicit or {})
    if merged.get("storage_uri") is None:
        merged["storage_uri"] = str(data_dir / "lancedb")
    merged["plugin_dirs"] = tuple(str(d) for d in _paths(merged["plugin_dirs"], "settings"))
    return MappingProxyType(merged)


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
