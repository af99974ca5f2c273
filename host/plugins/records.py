"""What the host remembers about every plugin: name, source, origin, version, status, errors."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Literal

import attrs

Source = Literal["built-in", "entry point", "folder", "explicit"]
Status = Literal["loaded", "failed", "blocked"]

SOURCES: tuple[str, ...] = ("built-in", "entry point", "folder", "explicit")


@attrs.frozen
class PluginRecord:
    """One plugin as the host knows it. ``error`` is the last error (one line), ``traceback``
    its full text; both stay ``None`` while nothing went wrong."""

    name: str
    source: Source
    origin: str | None = None
    version: str | None = None
    status: Status = "loaded"
    error: str | None = None
    traceback: str | None = None
    plugin: object | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "loaded" and self.error is None


class PluginTable:
    """Records by name, in the order plugins were first seen; safe from several threads."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._records: dict[str, PluginRecord] = {}

    def put(self, record: PluginRecord) -> PluginRecord:
        with self._lock:
            self._records[record.name] = record
        return record

    def get(self, name: str) -> PluginRecord | None:
        with self._lock:
            return self._records.get(name)

    def update(self, name: str, **changes: object) -> PluginRecord | None:
        """Replace fields of ``name``'s record; ``None`` when there is no such record."""
        with self._lock:
            record = self._records.get(name)
            if record is None:
                return None
            record = attrs.evolve(record, **changes)
            self._records[name] = record
            return record

    def remove(self, name: str) -> PluginRecord | None:
        with self._lock:
            return self._records.pop(name, None)

    def all(self) -> tuple[PluginRecord, ...]:
        with self._lock:
            return tuple(self._records.values())

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._records

    def __iter__(self) -> Iterator[PluginRecord]:
        return iter(self.all())
