"""The module-level default registry and the front end's two helper functions."""

from __future__ import annotations

from extension_registry.registry import ExtensionEntry, ExtensionRegistry

#: The process-wide registry the helpers act on; every `host.Host` has a registry of its own.
default_registry = ExtensionRegistry()


def register_extension_api(
    name: str, api: object, *, owner: str | None = None, version: str | None = None
) -> ExtensionEntry:
    """Publish ``api`` as ``name`` in the default registry."""
    return default_registry.register(name, api, owner=owner, version=version)


def get_extension_api(name: str) -> object | None:
    """The API published as ``name`` in the default registry, or ``None``; never raises."""
    return default_registry.get(name)


def unregister_extension_api(name: str) -> bool:
    """Remove ``name`` from the default registry; True when something was removed."""
    return default_registry.unregister(name)
