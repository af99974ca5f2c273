"""The front of ``--workers N``: the parent's server on the public port, sending each request to
the worker process that owns its chat.

A chat's requests all go to one worker (its slot: a stable hash of the chat id modulo N), so
its graph stays loaded in one process and is not read again by every process in turn. The chat
id comes from the request head alone: the path's ``/api/chats/<chat>/...`` (the JSON API and
the explorer), else the ``X-Memgraph-Chat`` header (the proxy). A request naming no chat there
(the chat list, the page, a proxied turn that names its chat in the body or not at all) goes to
the workers in turn; the per-chat cross-process lock keeps those correct wherever they land.

Each worker serves on its own Unix socket (the parent holds the listening socket, so
connections to a worker being restarted wait in its backlog for the new process). The front
reads a request's head, marks it ``Connection: close`` and copies the connection's bytes both
ways as they come: a streamed answer (server-sent events) passes through unbuffered, and a
client hanging up closes the worker's connection, which the worker sees as that client's
hang-up. One request per client connection: the worker closes it after its answer (its
``Connection: close`` header tells the client), and the client's next request, on a new
connection, is routed on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import socket
from collections.abc import Sequence
from urllib.parse import unquote_to_bytes

from memgraph_plugin.storage.shards import shard_of_key

#: The longest request head the front reads (request line and headers).
HEAD_LIMIT = 64 * 1024
#: Seconds a new connection gets to send its request head.
HEAD_TIMEOUT_S = 60.0
CHUNK = 64 * 1024

CHAT_HEADER = b"x-memgraph-chat"
#: ``/api/chats/<chat>/<route>``: the chat routes of the JSON API, the explorer and its edits
#: (a chat id may hold ``/``: the route is the known suffix, as the apps' routes match it).
CHAT_PATH = re.compile(
    rb"^/api/chats/(?P<chat>.+)/(?:graph|search|events|recalls/last|recall|history|messages"
    rb"|forget|fork|edges|undo|edits|nodes/[^/]+(?:/(?:edit|archive|restore|pin|merge))?)/?$"
)


class BadHead(ValueError):
    """A request head the front cannot route; the message says what is wrong with it."""


def chat_key(head: bytes) -> bytes | None:
    """The chat a request head names (the path's, else the header's), as bytes; None: none."""
    lines = head.removesuffix(b"\r\n\r\n").split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/"):
        raise BadHead("the request line is not 'METHOD TARGET HTTP/x.y'")
    path = unquote_to_bytes(parts[1].split(b"?", 1)[0])
    found = CHAT_PATH.match(path)
    if found:
        return found.group("chat")
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise BadHead("a header line has no ':'")
        if name.strip().lower() == CHAT_HEADER and value.strip():
            return value.strip()
    return None


def closing_head(head: bytes) -> bytes:
    """`head` (ending in a blank line) with ``Connection: close`` in place of any Connection
    header; an upgrade request stays as it is (its connection is the upgraded one)."""
    lines = head[:-4].split(b"\r\n")
    kept = [lines[0]]
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"connection":
            if b"upgrade" in value.lower():
                return head
            continue
        kept.append(line)
    kept.append(b"Connection: close")
    return b"\r\n".join(kept) + b"\r\n\r\n"


def error_bytes(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"error": message}).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


class Front:
    """Routes the public port's connections to the workers' Unix sockets (`paths`, by slot)."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = list(paths)
        self._turn = itertools.count()
        self.connections: set[asyncio.Task[None]] = set()

    def slot(self, key: bytes | None) -> int:
        """The worker of a chat (its shard, `storage.shards.shard_of_key`, so worker `i` writes
        shard `i`), or the next in turn for no chat."""
        if key is None:
            return next(self._turn) % len(self.paths)
        return shard_of_key(key, len(self.paths))

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One client connection: its request to its chat's worker, the answer back."""
        task = asyncio.current_task()
        if task is not None:
            self.connections.add(task)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away: nothing to answer
        finally:
            if task is not None:
                self.connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        except asyncio.LimitOverrunError:
            message = f"the request head is longer than {HEAD_LIMIT} bytes"
            writer.write(error_bytes(431, "Request Header Fields Too Large", message))
            return
        except (TimeoutError, asyncio.IncompleteReadError):
            return  # no request came
        try:
            key = chat_key(head)
        except BadHead as exc:
            writer.write(error_bytes(400, "Bad Request", f"bad request head: {exc}"))
            return
        path = self.paths[self.slot(key)]
        loop = asyncio.get_running_loop()
        worker = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        worker.setblocking(False)
        try:
            try:
                await loop.sock_connect(worker, path)
                await loop.sock_sendall(worker, closing_head(head))
            except OSError as exc:
                message = f"no worker process took the request ({exc.strerror or exc})"
                writer.write(error_bytes(503, "Service Unavailable", message))
                return
            await self._relay(reader, writer, worker)
        finally:
            worker.close()

    async def _relay(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, worker: socket.socket
    ) -> None:
        """Copy both ways until the worker ends its answer or the client hangs up. The worker
        socket is a plain one so that a refused write (a worker that answered before it read the
        whole body, then closed) leaves its answer readable. A worker that closes before
        answering (it was stopped or killed) gets the client a 503."""
        answered = [False]
        up = asyncio.ensure_future(_send(reader, worker))
        down = asyncio.ensure_future(_receive(worker, writer, answered))
        try:
            done, _ = await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
            if down not in done and not up.result():  # the worker refused the rest: answer?
                await down
        finally:
            for task in (up, down):
                task.cancel()
            await asyncio.gather(up, down, return_exceptions=True)
        if down.done() and not down.cancelled() and not answered[0]:
            message = "the worker process ended before it answered; send the request again"
            with contextlib.suppress(Exception):
                writer.write(error_bytes(503, "Service Unavailable", message))
                await writer.drain()


async def _send(reader: asyncio.StreamReader, worker: socket.socket) -> bool:
    """The client's bytes to the worker as they come: True when the client ends (a hang-up),
    False when the worker takes no more."""
    loop = asyncio.get_running_loop()
    while data := await reader.read(CHUNK):
        try:
            await loop.sock_sendall(worker, data)
        except OSError:
            return False
    return True


async def _receive(worker: socket.socket, writer: asyncio.StreamWriter, seen: list[bool]) -> None:
    """The worker's bytes to the client as they come, until the worker closes (`seen[0]`: any
    came); ends early when the client is gone."""
    loop = asyncio.get_running_loop()
    with contextlib.suppress(OSError):
        while data := await loop.sock_recv(worker, CHUNK):
            seen[0] = True
            writer.write(data)
            await writer.drain()
