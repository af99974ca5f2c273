"""What a host uses to share its chats with other hosts over one bucket: the chat leases
(`chat_lease.py`) and the chats' message files in the bucket (`chat_objects.py`), made from the
host's settings when ``chat_lease_table`` is set (`shared_chats_for`)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from memgraph_plugin.storage.errors import StorageError
from memgraph_plugin.storage.settings import StorageSettings

from .aws_clients import make_client
from .chat_lease import ChatLease, LeaseTable
from .chat_objects import ChatObjects
from .settings import (
    CHAT_LEASE_ENDPOINT,
    CHAT_LEASE_SECONDS,
    CHAT_LEASE_TABLE,
    DEFAULT_LEASE_SECONDS,
)

log = logging.getLogger(__name__)


class SharedChats:
    """One process's leases and message files of the chats of one database on S3."""

    def __init__(self, leases: LeaseTable, objects: ChatObjects) -> None:
        self.leases = leases
        self.objects = objects
        #: the memory graph's loaded chats, whose journal says where a chat's rows are
        self._persistence: Any = None

    def lease(self, chat_id: str, timeout_s: float) -> ChatLease:
        """The chat's lease; giving it back first publishes the chat's messages."""
        return ChatLease(self.leases, chat_id, timeout_s, self._publish)

    async def _publish(self, lease: ChatLease) -> str | None:
        assert lease.taken is not None
        return await asyncio.to_thread(self._push, lease)

    def _push(self, lease: ChatLease) -> str | None:
        assert lease.taken is not None
        hints = self._hints()
        if hints is not None:
            lease.hint = hints.of(lease.chat_id)
        return self.objects.push(lease.chat_id, lease.taken.etag)

    def _hints(self) -> Any:
        """Where the loaded chats' journal rows are (`Journal.hints`; None: no memory graph
        here); the storage is connected on first use, so not on the event loop."""
        storage = getattr(self._persistence, "storage", None)
        return getattr(getattr(storage, "journal", None), "hints", None)

    async def taken(self, lease: ChatLease, service: Any) -> None:
        """On taking `lease`: the chat's message file made the bucket's newest and, when another
        host wrote the chat since this one last did, its cached graph dropped (`service`: the
        memory graph's, whose cache the next open reloads, reading the journal fragments the
        last holder named unless that holder never gave the lease back)."""
        taken = lease.taken
        assert taken is not None
        await asyncio.to_thread(
            self.objects.pull, lease.chat_id, taken.etag, check=taken.took_over
        )
        persistence = getattr(service, "persistence", None)
        if persistence is None:
            return
        self._persistence = persistence
        if taken.took_over or (taken.writer is not None and taken.writer != self.leases.owner):
            persistence.forget(lease.chat_id)
            hints = await asyncio.to_thread(self._hints)
            if hints is not None:
                hints.received(lease.chat_id, None if taken.took_over else taken.hint)

def split_s3_uri(uri: str) -> tuple[str, str]:
    """(bucket, prefix) of an ``s3://bucket/prefix`` URI."""
    parts = urlsplit(uri)
    return parts.netloc, parts.path.strip("/")


def shared_chats_for(host: Any) -> SharedChats | None:
    """The host's `SharedChats` when ``chat_lease_table`` is set (None otherwise);
    `StorageError` ``BAD_SETTINGS`` when storage_uri is not on S3."""
    settings = host.settings
    table = settings.get(CHAT_LEASE_TABLE)
    if not table:
        return None
    storage = StorageSettings.from_settings(settings, data_dir=host.data_dir)
    if not storage.uri.startswith("s3://"):
        raise StorageError(
            f"setting {CHAT_LEASE_TABLE} = {table!r} shares chats over one bucket: storage_uri "
            f"must be an s3:// URI, got {storage.uri!r}",
            code="BAD_SETTINGS",
        )
    seconds = float(settings.get(CHAT_LEASE_SECONDS) or DEFAULT_LEASE_SECONDS)
    options = dict(storage.storage_options)
    bucket, prefix = split_s3_uri(storage.uri)
    leases = LeaseTable(
        make_client("dynamodb", options, settings.get(CHAT_LEASE_ENDPOINT)),
        str(table),
        storage.uri,
        seconds,
    )
    objects = ChatObjects(make_client("s3", options), bucket, prefix, Path(host.data_dir) / "chats")
    return SharedChats(leases, objects)
