"""The host's errors: a plugin failure made fatal (strict mode), and bad settings."""

from __future__ import annotations


class PluginError(Exception):
    """A plugin failed to load, to validate, or in a hook, and the host is strict about it.

    ``plugin`` is the plugin's name, ``origin`` where it came from (path or entry-point spec)
    when known, and ``failures`` the `host.plugins.notify.HookFailure` list for hook failures.
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


class CommandError(Exception):
    """A command's user-facing failure (``unknown chat 'x'``): the CLI prints the message as one
    line, no traceback, and exits with ``exit_code`` (1)."""

    def __init__(self, message: str, *, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
