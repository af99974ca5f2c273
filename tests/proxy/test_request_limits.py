"""Bodies and headers the server refuses before any route reads them (web/request_guard.py,
proxy/request/json_body.py, web/server.py), over real HTTP to the one app on uvicorn: a body over
``http_max_body_bytes`` (by its Content-Length, or chunked) is a 413, JSON nested too deep a
400, a control character in a header a JSON 400; nothing is forwarded or stored."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from memgraph_plugin.proxy.request import json_body
from memgraph_plugin.web.server import (
    JsonH11Protocol,
    JsonHttpToolsProtocol,
    bind,
    url_of,
    uvicorn_server,
)

from .harness import RunningProxy
from .upstream import Upstream

LIMIT = 64 * 1024
USER = {"role": "user", "content": "Where is the harbour bell?"}


@pytest.fixture
def limited(tmp_path: Path, upstream: Upstream) -> Iterator[RunningProxy]:
    running = RunningProxy(tmp_path / "data", upstream.url, http_max_body_bytes=LIMIT)
    yield running
    running.stop()


def _big_body() -> bytes:
    filler = "the bell rings at noon " * (LIMIT // 10)
    return json.dumps({"model": "tiny", "messages": [{"role": "user", "content": filler}]}).encode()


def _chunks(body: bytes) -> Iterator[bytes]:
    for at in range(0, len(body), 8192):
        yield body[at : at + 8192]


def test_a_body_over_the_limit_is_refused_before_it_is_read(
    limited: RunningProxy, upstream: Upstream
) -> None:
    body = _big_body()
    assert len(body) > LIMIT
    json_type = {"content-type": "application/json", "x-memgraph-chat": "bell"}
    completions = limited.url + "/chat/completions"
    messages = limited.base + "api/chats/bell/messages"
    with httpx.Client(timeout=120) as client:
        for content in (body, _chunks(body)):  # a Content-Length, then chunked
            answer = client.post(completions, content=content, headers=json_type)
            assert answer.status_code == 413, answer.text
            error = answer.json()["error"]  # OpenAI's shape on /v1
            assert error["code"] == "body_too_large" and "http_max_body_bytes" in error["message"]
        for content in (body, _chunks(body)):
            answer = client.post(messages, content=content,
                                 headers={**json_type, **limited.writer})  # fmt: skip
            assert answer.status_code == 413, answer.text
            assert answer.json()["code"] == "body_too_large"
        # under the limit, chunked: read whole and answered as usual
        small = json.dumps({"model": "tiny", "messages": [USER]}).encode()
        answer = client.post(completions, content=_chunks(small), headers=json_type)
        assert answer.status_code == 200, answer.text
    assert len(upstream.completions_received()) == 1
    assert limited.messages("bell")[0] == ("user", USER["content"])
    assert len(limited.messages("bell")) == 2  # the question and its answer, nothing else


def test_json_nested_too_deep_is_a_400(proxy: RunningProxy, upstream: Upstream) -> None:
    deep = b'{"model": "tiny", "messages": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}"
    json_type = {"content-type": "application/json", "x-memgraph-chat": "deep"}
    answer = httpx.post(proxy.url + "/chat/completions", content=deep, headers=json_type,
                        timeout=120)  # fmt: skip
    assert answer.status_code == 400, answer.text
    assert "nested too deep" in answer.json()["error"]["message"]
    for route in ("messages", "forget", "recall"):
        answer = httpx.post(proxy.base + f"api/chats/deep/{route}", content=deep,
                            headers={**json_type, **proxy.writer}, timeout=120)  # fmt: skip
        assert answer.status_code == 400, (route, answer.text)
        assert "nested too deep" in answer.json()["error"]
    assert upstream.completions_received() == []
    assert not (proxy.data_dir / "chats").exists()


def _raw(url: str, header_value: bytes, path: bytes = b"/v1/chat/completions") -> bytes:
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    body = json.dumps({"model": "tiny", "messages": [USER]}).encode()
    request = (
        b"POST " + path + b" HTTP/1.1\r\nHost: " + host.encode() + b":" + port.encode() + b"\r\n"
        b"Content-Type: application/json\r\nX-Memgraph-Chat: " + header_value + b"\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
    )
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("character", [b"\x00", b"\x1b", b"\r"], ids=["NUL", "ESC", "CR"])
def test_a_control_character_in_a_header_is_a_json_400(
    proxy: RunningProxy, upstream: Upstream, character: bytes
) -> None:
    reply = _raw(proxy.base, b"bell" + character + b"tower")
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), reply[:200]
    assert b"content-type: application/json" in head.lower()
    error = json.loads(body)["error"]  # OpenAI's shape: the request line named /v1
    assert error["code"] == "bad_http_request" and "control character" in error["message"]
    assert upstream.completions_received() == []


@pytest.mark.parametrize("protocol", ["default", "h11"])
def test_both_http_parsers_answer_their_400_as_json(protocol: str) -> None:
    """The servers' parser (httptools) and uvicorn's other one (h11): what the parser refuses
    gets JSON; what it lets through reaches the app, which answers with JSON too."""
    seen: list[str] = []
    lock = threading.Lock()

    async def echo(request: object) -> JSONResponse:
        with lock:
            seen.append(request.headers.get("x-memgraph-chat", ""))  # type: ignore[attr-defined]
        return JSONResponse({"ok": True})

    app = Starlette(routes=[Route("/api/echo", echo, methods=["POST"])])
    sock = bind("127.0.0.1", 0)  # listening: connections queue until uvicorn takes them
    server = uvicorn_server(app, http=JsonH11Protocol if protocol == "h11" else None)
    if protocol == "default":
        assert server.config.http is JsonHttpToolsProtocol
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
    thread.start()
    try:
        for character in (b"\x00", b"\x1b", b"\r"):
            reply = _raw(url_of(sock), b"a" + character + b"b", path=b"/api/echo")
            head, _, body = reply.partition(b"\r\n\r\n")
            assert b"application/json" in head.lower(), reply[:200]
            if head.startswith(b"HTTP/1.1 400"):
                assert json.loads(body)["code"] == "bad_http_request"
            else:  # h11 takes ESC: the app sees it and answers (a chat id check refuses it)
                assert protocol == "h11" and character == b"\x1b" and seen == ["a\x1bb"]
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()


def test_a_large_body_is_decoded_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A body of 1 MB or more is decoded on a worker thread (the loop keeps serving others); a
    small one where it is."""
    threads: list[str] = []
    real = json_body.decoded

    def spy(raw: bytes) -> object:
        threads.append(threading.current_thread().name)
        return real(raw)

    monkeypatch.setattr(json_body, "decoded", spy)
    big = json.dumps({"text": "x" * json_body.OFF_LOOP_BYTES}).encode()

    async def both() -> tuple[object, object]:
        return await json_body.decoded_off_loop(big), await json_body.decoded_off_loop(b"[1]")

    loop_thread = threading.current_thread().name
    assert asyncio.run(both())[1] == [1]
    assert threads[0] != loop_thread and threads[1] == loop_thread
