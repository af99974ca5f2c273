"""The front of ``--workers N`` in this process: which chat a request head names, the head it
sends on, and what a client gets when a worker answers before reading the whole body, ends
without answering, or when the head is malformed or too long. The "workers" here are asyncio
servers on real Unix sockets; the client is httpx over real loopback TCP."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from memgraph_plugin.web.worker_front import (
    HEAD_LIMIT,
    BadHead,
    Front,
    chat_key,
    closing_head,
)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def head(target: str, *headers: str) -> bytes:
    return "\r\n".join([f"GET {target} HTTP/1.1", "Host: x", *headers]).encode() + b"\r\n\r\n"


def test_the_chat_comes_from_the_path_then_the_header() -> None:
    assert chat_key(head("/api/chats/crew%201/history?limit=5")) == b"crew 1"
    assert chat_key(head("/api/chats/a/b/nodes/n1/edit")) == b"a/b"
    assert chat_key(head("/api/chats/c/recalls/last", "X-Memgraph-Chat: other")) == b"c"
    assert chat_key(head("/v1/chat/completions", "x-memgraph-chat:  crew 2 ")) == b"crew 2"
    assert chat_key(head("/api/chats")) is None
    assert chat_key(head("/v1/chat/completions", "X-Memgraph-Chat: ")) is None
    with pytest.raises(BadHead, match="request line"):
        chat_key(b"GET /\r\n\r\n")
    with pytest.raises(BadHead, match="no ':'"):
        chat_key(head("/", "broken header"))


def test_the_head_sent_on_closes_the_connection() -> None:
    sent = closing_head(head("/v1/models", "Connection: keep-alive", "Accept: */*"))
    assert sent.endswith(b"Accept: */*\r\nConnection: close\r\n\r\n")
    assert b"keep-alive" not in sent
    upgrade = head("/ws", "Connection: Upgrade", "Upgrade: websocket")
    assert closing_head(upgrade) == upgrade


def test_a_chat_always_has_the_same_slot_and_others_go_in_turn() -> None:
    front = Front(["a", "b", "c"])
    assert len({front.slot(b"crew 7") for _ in range(10)}) == 1
    assert [front.slot(None) for _ in range(4)] == [0, 1, 2, 0]


@contextlib.asynccontextmanager
async def fronted(tmp_path: Path, worker: Handler) -> AsyncIterator[str]:
    """The front on loopback before one worker (`worker` on a Unix socket); its base URL."""
    path = str(tmp_path / "worker.sock")
    backend = await asyncio.start_unix_server(worker, path)
    front = Front([path])
    server = await asyncio.start_server(front.handle, "127.0.0.1", 0, limit=HEAD_LIMIT)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        backend.close()


async def answer_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A worker refusing a request from its head alone, then closing (body unread)."""
    await reader.readuntil(b"\r\n\r\n")
    body = b'{"error":"wrong token"}'
    writer.write(
        b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()
    writer.close()


async def end_without_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.close()


async def test_an_answer_sent_before_the_body_is_read_reaches_the_client(tmp_path: Path) -> None:
    async with fronted(tmp_path, answer_at_once) as url, httpx.AsyncClient() as client:
        for _ in range(20):
            sent = await client.post(url + "/api/chats/c/messages", content=b"x" * 64_000)
            assert sent.status_code == 401 and sent.json() == {"error": "wrong token"}


async def test_a_worker_ending_without_an_answer_is_a_json_503(tmp_path: Path) -> None:
    async with fronted(tmp_path, end_without_answer) as url, httpx.AsyncClient() as client:
        answer = await client.get(url + "/api/chats")
    assert answer.status_code == 503
    assert "ended before it answered" in answer.json()["error"]


async def test_a_bad_or_too_long_head_is_refused_in_json(tmp_path: Path) -> None:
    async with fronted(tmp_path, answer_at_once) as url:
        port = int(url.rsplit(":", 1)[1])
        for raw, status in ((b"NONSENSE\r\n\r\n", b"400"),
                            (head("/", "X-Big: " + "y" * HEAD_LIMIT), b"431")):  # fmt: skip
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(raw)
            await writer.drain()
            reply = await reader.read()
            writer.close()
            assert reply.startswith(b"HTTP/1.1 " + status), reply
            assert reply.split(b"\r\n\r\n", 1)[1].startswith(b'{"error": ')
