"""A real HTTP server on loopback speaking the chat-completions protocol (pytest-httpserver),
answering from a script, and hosts whose settings point the LLM at it."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from host import Host
from memgraph_plugin.llm import JsonSchema

MODEL = "test-model"
PATH = "/v1/chat/completions"
#: settings that keep every wait tiny (the backoff is real, just short)
FAST = {"llm_backoff_s": 0.001, "llm_backoff_max_s": 0.01, "llm_timeout_s": 5.0}

Reply = Callable[[dict[str, Any]], Response]

SCHEMA = JsonSchema("probe", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
HELLO = [{"role": "user", "content": "say hi"}]


class Waits:
    """Records the waits the provider asks for (and waits none of them)."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


def completion(content: str, model: str = MODEL) -> dict[str, Any]:
    """A chat-completions response body with one choice."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def answer(content: str | dict) -> Reply:
    """Reply with ``content`` (a dict is sent as its JSON text)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return lambda _body: Response(
        json.dumps(completion(text)), 200, content_type="application/json"
    )


def status(code: int, message: str = "boom", headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "server_error"}})
    return lambda _body: Response(body, code, headers=headers, content_type="application/json")


def slow(seconds: float, then: Reply) -> Reply:
    def reply(body: dict[str, Any]) -> Response:
        time.sleep(seconds)
        return then(body)

    return reply


class ChatServer:
    """The scripted server: each request takes the next reply of the script (the last one
    repeats); its JSON body and headers are kept in ``requests`` / ``headers``."""

    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.script: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server.expect_request(PATH, method="POST").respond_with_handler(self._handle)

    @property
    def base_url(self) -> str:
        return self.server.url_for("/v1")

    def reply(self, *replies: Reply) -> ChatServer:
        """Answer the next requests with ``replies`` in turn (the last one repeats)."""
        self.script = list(replies)
        return self

    def _handle(self, request: Request) -> Response:
        body = json.loads(request.get_data(as_text=True))
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if not self.script:
            return Response("no reply scripted", 500)
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        return step(body)

    def settings(self, **extra: Any) -> dict[str, Any]:
        return {"llm_base_url": self.base_url, "llm_model": MODEL, **FAST, **extra}


@pytest.fixture(scope="module")
def _loopback() -> Iterator[HTTPServer]:
    """One threaded server per test module (stopping one takes half a second)."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def chat_server(_loopback: HTTPServer) -> Iterator[ChatServer]:
    """A fresh script and request log on the module's server."""
    _loopback.clear()
    yield ChatServer(_loopback)
    _loopback.clear()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def started_host(tmp_path: Path, **settings: Any) -> Host:
    host = Host(data_dir=tmp_path / "data", settings=settings, entry_points=False)
    await host.start()
    return host
