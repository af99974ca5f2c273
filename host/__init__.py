"""host: a pluggy plugin host with one PluginManager per `Host`, discovery, chats and a CLI."""

from host.chats import Chat
from host.commands import Command
from host.context import ChatContext, Message
from host.core import Host
from host.errors import CommandError, PluginError, SettingsError
from host.markers import PROJECT_NAME, hookimpl, hookspec
from host.notify import HookFailure, HookResult
from host.records import PluginRecord
from host.reload import Reloader, ReloadReport
from host.version import __version__ as __version__

__all__ = [
    "PROJECT_NAME",
    "Chat",
    "ChatContext",
    "Command",
    "CommandError",
    "HookFailure",
    "HookResult",
    "Host",
    "Message",
    "PluginError",
    "PluginRecord",
    "ReloadReport",
    "Reloader",
    "SettingsError",
    "hookimpl",
    "hookspec",
]
