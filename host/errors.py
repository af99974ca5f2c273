"""The host's errors: a plugin failure made fatal (strict mode), and bad settings."""

from __future__ import annotations


class PluginError(Exception):
    """A plugin failed to load, to validate, or in a hook, and the host is strict about it.

    ``plugin`` is the plugin's name, ``origin`` where it came from (path or entry-point spec)
    when known, and ``failures`` the `host.notify.HookFailure` list for hook failures.
    """

    def __init__(
        self,
        message: str,
        *,
        plugin: str | None = None,
        origin: str | None = None,
        failures: tuple = (),
    ) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.origin = origin
        self.failures = tuple(failures)


class SettingsError(ValueError):
    """A settings file or value is malformed; the message names the file and the key."""
