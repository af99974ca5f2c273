"""The chats' message files kept in the bucket, so that every host serves a chat from its newest
messages: one object per chat, ``<database prefix>/chats/<chat file name>``, the same bytes as
the file under the data dir (`host.chats.chat_files`).

A host brings its file in line with the bucket when it takes the chat's lease (`pull`: a GET
only when the lease item names another ETag than the one it holds, or the last holder never
gave the lease back), and writes it back before giving the lease back (`push`: one PUT when the
file changed, conditional on the ETag it started from, so a host whose copy is not the newest
can never replace another host's messages). `pull_all` brings every chat a new host does not
hold yet (its listing then shows every chat).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from pathlib import Path
from typing import Any

from host.chats.chat_files import chat_file_name
from memgraph_plugin.storage.errors import StorageError

from .aws_clients import error_code

log = logging.getLogger(__name__)


class StaleCopy(StorageError):
    """The bucket holds a newer message file than the one this host started from."""


def _md5_etag(data: bytes) -> str:
    return '"' + hashlib.md5(data, usedforsecurity=False).hexdigest() + '"'


class ChatObjects:
    """The message files of one database's chats in its bucket, and what this host holds of
    them (`folder`: the host's chat files)."""

    def __init__(self, client: Any, bucket: str, prefix: str, folder: Path) -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.folder = Path(folder)
        #: chat file name -> the ETag of the bucket's object the local file holds
        self._etags: dict[str, str] = {}

    def key(self, name: str) -> str:
        return f"{self.prefix}/chats/{name}" if self.prefix else f"chats/{name}"

    def pull(self, chat_id: str, etag: str | None, *, check: bool = False) -> bool:
        """Make the local file the bucket's copy at `etag` (the lease item's). `check`: ask the
        bucket even when the local file is at `etag` (the last holder never gave the lease back,
        so it may have written after). True when the local file was replaced."""
        name = chat_file_name(chat_id)
        held = self._etags.get(name)
        if etag is None and not check:
            return False  # nothing published: the local file (if any) is the only copy
        if not check and etag == held:
            return False
        path = self.folder / name
        arguments: dict[str, Any] = {"Bucket": self.bucket, "Key": self.key(name)}
        if held is not None and path.is_file():
            arguments["IfNoneMatch"] = held
        try:
            answer = self.client.get_object(**arguments)
        except Exception as exc:
            code = error_code(exc)
            if code in ("304", "NotModified"):
                return False
            if code in ("NoSuchKey", "404"):
                if etag is None:
                    return False
                raise StorageError(
                    f"chat {chat_id!r}: its lease names message file {etag} but the bucket has "
                    f"no {self.key(name)!r}"
                ) from exc
            raise
        data = answer["Body"].read()
        self._write(path, data)
        self._etags[name] = str(answer["ETag"])
        return True

    def push(self, chat_id: str, expected: str | None) -> str | None:
        """Write the local file to the bucket when it changed since `expected` (the ETag this
        host started from); the new ETag (`expected` when unchanged). `StaleCopy` when the
        bucket moved on from `expected` (another host wrote: this copy must not replace it)."""
        name = chat_file_name(chat_id)
        try:
            data = (self.folder / name).read_bytes()
        except FileNotFoundError:
            return expected
        if expected is not None and self._etags.get(name) == expected == _md5_etag(data):
            return expected
        arguments: dict[str, Any] = {"Bucket": self.bucket, "Key": self.key(name), "Body": data}
        if expected is None:
            arguments["IfNoneMatch"] = "*"
        else:
            arguments["IfMatch"] = expected
        try:
            answer = self.client.put_object(**arguments)
        except Exception as exc:
            if error_code(exc) in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                self._etags.pop(name, None)
                raise StaleCopy(
                    f"chat {chat_id!r}: the bucket's message file moved on from {expected}; "
                    "this host's copy is not published"
                ) from exc
            raise
        etag = str(answer["ETag"])
        self._etags[name] = etag
        return etag

    def pull_all(self) -> int:
        """Bring every chat file of the bucket this host does not hold at its ETag; how many."""
        pulled = 0
        start = self.key("")
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=start
        )
        for page in pages:
            for row in page.get("Contents", ()):
                name = str(row["Key"])[len(start) :]
                if "/" in name or not name.endswith(".jsonl"):
                    continue
                if self._etags.get(name) == row["ETag"] and (self.folder / name).is_file():
                    continue
                answer = self.client.get_object(Bucket=self.bucket, Key=row["Key"])
                self._write(self.folder / name, answer["Body"].read())
                self._etags[name] = str(answer["ETag"])
                pulled += 1
        return pulled

    def _write(self, path: Path, data: bytes) -> None:
        """Replace `path` atomically (a temporary file, then a rename)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".pull")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
