"""The per-host worker every sample plugin builds: registry access, hook-started tasks, reports.

A worker receives the hooks that carry no host (``memgraph_commit``,
``memgraph_injection_changed``); work those hooks start runs as tasks that ``drain`` waits for,
and each run's report is kept per chat for the demo and the tests.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Generic, TypeVar

from sample_plugins._registry_access import MemoryAccess

Report = TypeVar("Report")


class Worker(Generic[Report]):
    """Base of the scout, curator and compactor workers of one host."""

    #: how many reports to keep per chat (``None``: all)
    keep: int | None = None

    def __init__(self, host: Any, plugin: str, log: logging.Logger) -> None:
        self.host = host
        self.memory = MemoryAccess(host, plugin, log)
        self._tasks: set[Any] = set()
        self._reports: dict[str | None, list[Report]] = {}

    def _keep(self, chat_id: str | None, report: Report) -> None:
        kept = self._reports.setdefault(chat_id, [])
        kept.append(report)
        if self.keep is not None and len(kept) > self.keep:
            del kept[: len(kept) - self.keep]

    def last_report(self, chat_id: str | None) -> Report | None:
        """The chat's latest kept report (``None`` before the first)."""
        reports = self._reports.get(chat_id)
        return reports[-1] if reports else None

    def reports(self, chat_id: str | None) -> tuple[Report, ...]:
        """Every kept report of the chat, oldest first."""
        return tuple(self._reports.get(chat_id, ()))

    async def drain(self) -> None:
        """Wait for the work that hooks started."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
            await asyncio.sleep(0)  # let the done callbacks forget the tasks
