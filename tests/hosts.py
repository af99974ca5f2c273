"""Started hosts with the built-in plugins only, and memory-graph sessions on them, for tests
that start several hosts or pass settings (the `host` fixture in `tests/conftest.py` is one
plain started host)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from host import Host


async def started_host(data_dir: Path, **settings: Any) -> Host:
    """A started host over `data_dir` with `settings`; the caller stops it."""
    host = Host(data_dir=data_dir, settings=settings, entry_points=False)
    await host.start()
    return host


async def memory_session(host: Host, chat_id: str | None) -> Any:
    """The memory graph's session for `chat_id` (``None``: the host's default chat)."""
    return await host.registry.get("memory-graph").open_session(host.get_context(chat_id))
