"""Storage errors: each carries a `.code` like every `MemoryGraphError`."""

from __future__ import annotations

try:  # the engine's error base, when the engine package is present
    from memgraph_plugin.errors import MemoryGraphError as _Base
except ImportError:  # pragma: no cover - only while the engine is being built

    class _Base(Exception):  # type: ignore[no-redef]
        def __init__(self, code: str, message: str = "") -> None:
            super().__init__(f"{code}: {message}" if message else code)
            self.code = code
            self.message = message


class StorageError(_Base):
    """Persistence failed (a corrupt row, an unreachable database, bad arguments)."""

    def __init__(self, message: str, *, code: str = "STORAGE_ERROR") -> None:
        super().__init__(code, message)


class ConflictError(StorageError):
    """Another writer committed this chat first: refresh the chat and retry the write."""

    def __init__(self, chat_id: str, base_version: int, latest_version: int) -> None:
        super().__init__(
            f"chat {chat_id!r} moved on: this write was based on version {base_version}, "
            f"the journal already has version {latest_version}; refresh and retry",
            code="CONFLICT",
        )
        self.chat_id = chat_id
        self.base_version = base_version
        self.latest_version = latest_version
