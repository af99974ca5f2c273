"""extension_registry: plugins publish APIs to each other by name, with owners and versions."""

from extension_registry.default import (
    default_registry,
    get_extension_api,
    register_extension_api,
    unregister_extension_api,
)
from extension_registry.registry import (
    ExtensionEntry,
    ExtensionRegistry,
    RegistryError,
    Subscriber,
)

__all__ = [
    "ExtensionEntry",
    "ExtensionRegistry",
    "RegistryError",
    "Subscriber",
    "default_registry",
    "get_extension_api",
    "register_extension_api",
    "unregister_extension_api",
]
