"""The host's hook specifications: what every plugin may implement.

Call order is pluggy's: the implementation registered last runs first, adjusted by ``tryfirst`` /
``trylast``. The host registers plugins in tiers (built-in, entry points, folders, explicit) and
keeps that order (see `host.host.Host`), so a user's plugin runs before the built-in one.
Notification hooks (``host_startup``, ``host_shutdown``) are called through ``host.notify`` /
``host.anotify``: every implementation runs even when one raises, and async ones are awaited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

from host.markers import hookspec

if TYPE_CHECKING:
    from host.plugin_commands import Command
    from host.protocols import HostLike as Host


@hookspec(historic=True)
def host_addhooks(pm: pluggy.PluginManager) -> None:
    """Add a plugin's own hook specs: ``pm.add_hookspecs(my_hookspecs_module)``.

    Historic: a plugin registered after the host started still gets this call, at registration.
    """


@hookspec
def host_startup(host: Host) -> None:
    """The host has started (all plugins loaded): create per-host state, publish APIs.

    A notification: may be a coroutine function (awaited by ``host.start()``); an implementation
    that raises is reported with its plugin's name and the others still run.
    """


@hookspec
def host_shutdown(host: Host) -> None:
    """The host is stopping: flush and release what ``host_startup`` created (may be async)."""


@hookspec
def host_cli_commands(host: Host) -> list[Command] | None:
    """Return the `host.plugin_commands.Command` objects this plugin adds to ``memgraph-host``."""


@hookspec
def host_plugin_dispose(host: Host) -> object | None:
    """Hot reload: this version is about to be replaced; return state for the next version.

    Called on the old version only, before its hooks and published APIs are taken away.
    """


@hookspec
def host_plugin_adopt(host: Host, state: object | None) -> None:
    """Hot reload: the new version receives what its predecessor's ``host_plugin_dispose`` gave."""
