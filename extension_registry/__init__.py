"""extension_registry."""
