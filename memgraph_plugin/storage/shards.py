"""Chats split over several LanceDB databases (shards) of one local folder.

Worker processes (``--workers N``) that append to the same tables each reload the table versions
the others wrote before their next read or commit, and their compactions of those tables
conflict: two processes spent about twice the CPU of one on the same turns. With one database
per shard, and the front routing a chat to the worker of the same number
(`web.worker_front.Front`: a hash of the chat id), each worker writes its own tables.

Layout: shard 0 is the database at `storage_uri` itself (so a data dir made without shards
reads as before), shard `i` > 0 the database at ``<storage_uri>.shard<i>``, and the count is
recorded in ``<storage_uri>.shards`` (JSON). A chat lives in shard `shard_of` (a hash of its id
modulo the count). The count is fixed when the database is made (`plan_shards`, by the parent
of worker processes, before any table holds a row) and read by every process that opens it
(`open_storage`): one process, the CLI, any count of workers. A database on an object store is
never split (hosts over one bucket share it as one).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from memgraph_plugin.storage.database.connect import local_folder
from memgraph_plugin.storage.errors import StorageError
from memgraph_plugin.storage.journal.restored_values import RestoredValues
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.settings import StorageSettings

__all__ = [
    "ShardedStorage",
    "open_storage",
    "plan_shards",
    "shard_count",
    "shard_of",
    "shard_of_key",
    "shard_uris",
]

#: The sync methods whose first argument is a chat id: run by that chat's shard.
PER_CHAT = (
    "load_sync",
    "load_with_vectors_sync",
    "open_sync",
    "rows_at_sync",
    "load_vectors_sync",
    "latest_version_sync",
    "has_changed_sync",
    "history_sync",
    "marks_sync",
    "version_for_seq_sync",
    "state_at_sync",
    "note_checkpoint",
    "checkpointed_version",
    "checkpoint_known",
    "snapshot_chain",
    "snapshot_due",
    "snapshot_sync",
    "checkpoint_sync",
    "commit_sync",
    "commit_many_sync",
    "rollback_sync",
    "import_sync",
    "_journal",
)


def _record(uri: str) -> Path | None:
    folder = local_folder(uri)
    return None if folder is None else folder.with_name(folder.name + ".shards")


def shard_uri(uri: str, shard: int) -> str:
    """The database of shard `shard` of the database at `uri` (shard 0: `uri` itself)."""
    return uri if shard == 0 else f"{uri.rstrip('/')}.shard{shard}"


def shard_uris(uri: str) -> list[str]:
    """The databases of every shard of the database at `uri` (itself alone: no shards)."""
    return [shard_uri(uri, i) for i in range(shard_count(uri))]


def shard_of(chat_id: str, count: int) -> int:
    """The shard of a chat: `shard_of_key` of its id, so worker `i` writes shard `i`."""
    return shard_of_key(chat_id.encode("utf-8"), count)


def shard_of_key(key: bytes, count: int) -> int:
    """The shard (and worker, `web.worker_front.Front.slot`) of a chat id as bytes: blake2b,
    whose every bit depends on every byte, so ids differing in one digit spread. A namespace's
    chat (stored as ``ns/<namespace>/<chat>``) is hashed by ``<chat>``, the id its requests
    name."""
    if count <= 1:
        return 0
    if key.startswith(b"ns/") and key.count(b"/") >= 2:
        key = key.split(b"/", 2)[2]
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") % count


def shard_count(uri: str) -> int:
    """The shards recorded for the database at `uri` (1: none recorded, or not local)."""
    record = _record(uri)
    if record is None or not record.is_file():
        return 1
    try:
        count = json.loads(record.read_text(encoding="utf-8"))["shards"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StorageError(f"{record}: not a shard record ({exc})", code="BAD_SETTINGS") from None
    if not isinstance(count, int) or count < 1:
        raise StorageError(
            f"{record}: shards must be a whole number >= 1, got {count!r}", code="BAD_SETTINGS"
        )
    return count


def plan_shards(uri: str, count: int) -> int:
    """Record `count` shards for the database at `uri` when it is local and has no table yet;
    returns the shards it has (what was recorded before, else 1 for a database that exists)."""
    record = _record(uri)
    folder = local_folder(uri)
    if record is None or folder is None or count <= 1:
        return shard_count(uri)
    if record.is_file():
        return shard_count(uri)
    if _has_rows(folder):
        return 1  # made without shards: its chats stay where they are
    record.parent.mkdir(parents=True, exist_ok=True)
    partial = record.with_name(f"{record.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps({"shards": count}) + "\n", encoding="utf-8")
    os.replace(partial, record)
    return count


def _has_rows(folder: Path) -> bool:
    """Whether a table of the local database in `folder` holds a row (tables made empty by a
    process's first open do not count)."""
    if not folder.is_dir():
        return False
    import lance

    for path in folder.glob("*.lance"):
        try:
            if lance.dataset(str(path)).count_rows() > 0:
                return True
        except Exception:  # noqa: BLE001 - a table that cannot be read counts as data
            return True
    return False


def open_storage(settings: StorageSettings | str, **options: Any) -> LanceStorage:
    """The storage of `settings`: a `ShardedStorage` when shards are recorded for its database,
    else a `LanceStorage` (`options`: `LanceStorage`'s keyword arguments)."""
    if isinstance(settings, str):
        settings = StorageSettings(uri=settings)
    count = shard_count(settings.uri)
    if count > 1:
        return ShardedStorage(settings, count, **options)
    return LanceStorage(settings, **options)


def _per_chat(name: str) -> Callable[..., Any]:
    own = getattr(LanceStorage, name)

    def method(self: ShardedStorage, chat_id: str, *args: Any, **kwargs: Any) -> Any:
        shard = self.shard_for(chat_id)
        if shard is self:
            return own(self, chat_id, *args, **kwargs)
        return getattr(shard, name)(chat_id, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = own.__doc__
    return method


class ShardedStorage(LanceStorage):
    """A `LanceStorage` of shard 0 that hands each chat's calls to the chat's shard (itself, or
    the `LanceStorage` of another shard, opened on first use). What names no chat (the chat
    list, maintenance, stats, closing) covers every shard; the table attributes (`journal`,
    `vectors`, ...) are shard 0's (`shard_for` gives a chat's)."""

    def __init__(self, settings: StorageSettings, count: int, **options: Any) -> None:
        self.count = count
        self._shard_options = options
        self._others: dict[int, LanceStorage] = {}
        self._open_lock = threading.Lock()
        super().__init__(settings, **options)

    def shard_for(self, chat_id: str) -> LanceStorage:
        """The storage of the chat's shard."""
        return self.shard_numbered(shard_of(str(chat_id), self.count))

    def shard_numbered(self, shard: int) -> LanceStorage:
        """The storage of shard `shard` (opened now if it was not)."""
        if shard == 0:
            return self
        with self._open_lock:
            storage = self._others.get(shard)
            if storage is None:
                settings = attrs.evolve(self.settings, uri=shard_uri(self.settings.uri, shard))
                storage = LanceStorage(
                    settings, **{**self._shard_options, "embedder": self.embedder}
                )
                self._others[shard] = storage
            return storage

    def shards(self) -> list[LanceStorage]:
        """Every shard's storage (all opened)."""
        return [self.shard_numbered(i) for i in range(self.count)]

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "embedder":  # set after opening by the chat cache: every shard embeds
            for storage in getattr(self, "_others", {}).values():
                storage.embedder = value

    def _nodes_table_for(self, chat_id: str, dim: int) -> Any:
        shard = self.shard_for(chat_id)
        return LanceStorage._nodes_table(shard, dim)

    async def restored_values(
        self, chat_id: str, target: int, latest: int
    ) -> RestoredValues | None:
        return await LanceStorage.restored_values(self.shard_for(chat_id), chat_id, target, latest)

    def chats_sync(self) -> tuple[str, ...]:
        chats: set[str] = set(LanceStorage.chats_sync(self))
        for storage in self.shards()[1:]:
            chats.update(storage.chats_sync())
        return tuple(sorted(chats))

    def maintain_sync(self, *, optimize: bool = True) -> None:
        LanceStorage.maintain_sync(self, optimize=optimize)
        for storage in list(self._others.values()):
            storage.maintain_sync(optimize=optimize)

    def optimize_sync(self, *, force: bool = True) -> list[str]:
        names = LanceStorage.optimize_sync(self, force=force)
        for storage in list(self._others.values()):
            names += storage.optimize_sync(force=force)
        return names

    def stats_sync(self) -> dict[str, Any]:
        """Every table's rows, fragments and versions, summed over the shards."""
        out = LanceStorage.stats_sync(self)
        for storage in self.shards()[1:]:
            for table, stats in storage.stats_sync().items():
                mine = out.setdefault(table, dict.fromkeys(stats, 0))
                for key, value in stats.items():
                    mine[key] = mine.get(key, 0) + value
        return out

    def close(self) -> None:
        for storage in list(self._others.values()):
            storage.close()
        LanceStorage.close(self)


for _name in PER_CHAT:
    setattr(ShardedStorage, _name, _per_chat(_name))
