"""`NextVersionProbe`: whether a local LanceDB table has a version after a known one, by one
file lookup.

Asking LanceDB for a table's version (`table.version` with strong read consistency) lists the
table's whole `_versions` folder, so its cost grows with the versions kept (thousands after a
burst of commits, until the retention window lets compaction delete them). A version exists
once its manifest file does (the manifest is the commit point), so "nothing after version `v`"
is one `stat` of the manifest `v + 1` would have. Lance names manifests one of two ways (V2:
`u64::MAX - v`, zero-padded to 20 digits; V1: `v`); which one a table uses is read off the
manifest of a version it has. Tables on an object store get `None` (the caller asks LanceDB).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_U64_MAX = (1 << 64) - 1


def _v2_name(version: int) -> str:
    return f"{_U64_MAX - version:020d}.manifest"


def _v1_name(version: int) -> str:
    return f"{version}.manifest"


class NextVersionProbe:
    """Answers "does `table` have a version after `v`?" from its local `_versions` folder."""

    def __init__(self, table: Any) -> None:
        self._folder = _local_versions_folder(table)
        self._name = None if self._folder is None else _v2_name  # checked on first use

    def newer_than(self, version: int) -> bool | None:
        """True/False when the folder tells; None when it cannot (not local, unknown naming:
        ask LanceDB)."""
        folder, name = self._folder, self._name
        if folder is None or name is None:
            return None
        if not (folder / name(version)).exists():  # the naming guess is wrong (or v is gone)
            other = _v1_name if name is _v2_name else _v2_name
            if not (folder / other(version)).exists():
                return None
            self._name = name = other
        return (folder / name(version + 1)).exists()

    def newest_from(self, version: int, limit: int = 8) -> int | None:
        """The newest version, found by walking the manifests after `version` (which must
        exist) one `stat` each; None when the folder cannot tell or more than `limit` versions
        came after it (ask LanceDB). A manifest deleted under the walk (version cleanup) can
        only make the answer too old, never newer than a version that exists."""
        for newer in range(limit + 1):
            answer = self.newer_than(version + newer)
            if answer is None:
                return None
            if answer is False:
                return version + newer
        return None


def _local_versions_folder(table: Any) -> Path | None:
    path = getattr(table, "_dataset_path", None)
    if not isinstance(path, str):
        return None
    if path.startswith("file://"):
        path = path[len("file://") :]
    elif "://" in path:
        return None
    folder = Path(path) / "_versions"
    return folder if os.path.isdir(folder) else None
