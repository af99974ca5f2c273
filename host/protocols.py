"""`HostLike`: the host as the rest of the host package sees it (a Protocol, in a leaf module).

Hook specs, the chat context, commands and hot reload are typed against this Protocol rather than
`host.host.Host`, so no module that `core` imports needs `core` back, not even for type checking.
`host.host.Host` satisfies it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pluggy

    from extension_registry import ExtensionRegistry
    from host.plugins.records import PluginRecord


class HostLike(Protocol):
    """The public surface of a `host.Host` that plugins, hook specs and hot reload rely on."""

    pm: pluggy.PluginManager
    registry: ExtensionRegistry
    settings: Mapping[str, Any]
    data_dir: Path

    @property
    def started(self) -> bool: ...

    def register_plugin(
        self, obj: object, *, name: str | None = None, source: str = "explicit"
    ) -> PluginRecord: ...

    def unregister_plugin(self, name: str) -> None: ...

    def plugin_record(self, name: str) -> PluginRecord | None: ...

    def plugin_records(self) -> tuple[PluginRecord, ...]: ...

    def specs_of(self, name: str) -> tuple[str, ...]: ...

    def name_of(self, plugin: object) -> str | None: ...

    def on_unload(self, owner: str | object, callback: Callable[[], object]) -> None: ...

    def get_extension_api(self, name: str) -> object | None: ...

    def notify(self, hook_name: str, **kwargs: Any) -> list[Any]: ...

    async def anotify(self, hook_name: str, **kwargs: Any) -> list[Any]: ...

    def notify_soon(self, hook_name: str, **kwargs: Any) -> Any: ...

    def get_context(self, chat_id: str | None = None) -> Any: ...
