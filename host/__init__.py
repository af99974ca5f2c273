"""host: a pluggy plugin host with one PluginManager per `Host`, discovery, chats and a CLI.

The public names load on first use (PEP 562), so ``import host`` and ``memgraph-host --help`` stay
cheap and a module deep in the host imports only what it needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.lazy_exports import lazy_exports
from host.version import __version__ as __version__

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "PROJECT_NAME": "host.markers",
    "Chat": "host.chats.chat_files",
    "ChatContext": "host.chats.context",
    "Command": "host.plugin_commands",
    "CommandError": "host.errors",
    "HookFailure": "host.plugins.notify",
    "HookResult": "host.plugins.notify",
    "Host": "host.host",
    "Message": "host.chats.context",
    "PluginError": "host.errors",
    "PluginRecord": "host.plugins.records",
    "ReloadReport": "host.reload.reload",
    "Reloader": "host.reload.reload",
    "SettingsError": "host.errors",
    "hookimpl": "host.markers",
    "hookspec": "host.markers",
}

__all__ = [
    "Chat",
    "ChatContext",
    "Command",
    "CommandError",
    "HookFailure",
    "HookResult",
    "Host",
    "Message",
    "PROJECT_NAME",
    "PluginError",
    "PluginRecord",
    "ReloadReport",
    "Reloader",
    "SettingsError",
    "hookimpl",
    "hookspec",
]

if TYPE_CHECKING:
    from host.chats.chat_files import Chat
    from host.chats.context import ChatContext, Message
    from host.errors import CommandError, PluginError, SettingsError
    from host.host import Host
    from host.markers import PROJECT_NAME, hookimpl, hookspec
    from host.plugin_commands import Command
    from host.plugins.notify import HookFailure, HookResult
    from host.plugins.records import PluginRecord
    from host.reload.reload import Reloader, ReloadReport


__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
