"""A real OpenAI-compatible upstream on loopback (Starlette on uvicorn in a thread) that records
every request it received and answers as the test tells it (`Behaviour`)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import attrs
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from memgraph_plugin.web.server import ExplorerServer, bind


@attrs.define
class Behaviour:
    """How the next completions are answered."""

    answer: str = "The lighthouse keeper is Mira."
    status: int = 200  # >= 400: an error with `error_body`
    error_body: bytes | None = None  # None: OpenAI's shape
    delay_s: float = 0.0  # before answering (a timeout test)
    cut_after: int | None = None  # stream: close the connection after N chunks
    chunk_pause_s: float = 0.0  # stream: pause between chunks
    echo: bool = False  # answer "echo: <last user message>"
    numbered: bool = False  # the answer ends with " #N": N counts the requests received
    hold: threading.Event | None = None  # answer only once this is set (`held` tells when)


class Upstream:
    """The server, what it received (`requests`), and `behaviour` for what it answers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.behaviour = Behaviour()
        self.lock = threading.Lock()
        self.streams_done = threading.Event()  # set when a stream generator ends (any way)
        self.stream_started = threading.Event()
        self.held = threading.Event()  # set when a completion waits on `behaviour.hold`
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.completions, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/v1/embeddings", self.embeddings, methods=["POST"]),
            ]
        )
        self.sock = bind("127.0.0.1", 0)
        self.server = ExplorerServer(app, self.sock)
        self.url = self.server.url + "v1"

    def stop(self) -> None:
        self.server.stop()

    def _record(self, request: Request, body: Any) -> None:
        with self.lock:
            self.requests.append(
                {"path": request.url.path, "headers": dict(request.headers), "body": body}
            )

    async def models(self, request: Request) -> Response:
        self._record(request, None)
        model = {"id": "tiny", "object": "model", "created": 0, "owned_by": "test"}
        return JSONResponse({"object": "list", "data": [model]})

    async def embeddings(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self._record(request, body)
        return JSONResponse({"object": "list", "model": "tiny", "data": [
            {"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
            "usage": {"prompt_tokens": 1, "total_tokens": 1}})  # fmt: skip

    async def completions(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self._record(request, body)
        b = self.behaviour
        with self.lock:
            number = len(self.requests)
        if b.hold is not None and not b.hold.is_set():
            self.held.set()
            await asyncio.to_thread(b.hold.wait)
        if b.delay_s:
            await asyncio.sleep(b.delay_s)
        if b.status >= 400:
            if b.error_body is not None:
                return Response(b.error_body, b.status, media_type="text/plain")
            return JSONResponse(
                {"error": {"message": "upstream says no", "type": "server_error", "code": None}},
                status_code=b.status,
            )
        created = int(time.time())
        answer = b.answer
        if b.echo:
            answer = "echo: " + next(
                m["content"] for m in reversed(body["messages"]) if m["role"] == "user"
            )
        if b.numbered:
            answer = f"{answer} #{number}"
        if not body.get("stream"):
            return JSONResponse({
                "id": "cmpl-1", "object": "chat.completion", "created": created,
                "model": body.get("model", "tiny"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": answer}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            })  # fmt: skip
        return StreamingResponse(self._chunks(answer, created), media_type="text/event-stream")

    async def _chunks(self, answer: str, created: int) -> Any:
        b = self.behaviour
        words = answer.split(" ")
        parts = [w if i == 0 else " " + w for i, w in enumerate(words)]
        try:
            self.stream_started.set()
            for i, part in enumerate(parts):
                if b.cut_after is not None and i >= b.cut_after:
                    raise ConnectionAbortedError("cut")  # uvicorn drops the connection
                event = {"id": "cmpl-1", "object": "chat.completion.chunk", "created": created,
                         "model": "tiny", "choices": [{"index": 0, "delta": {"content": part},
                                                       "finish_reason": None}]}  # fmt: skip
                yield f"data: {json.dumps(event)}\n\n"
                if b.chunk_pause_s:
                    await asyncio.sleep(b.chunk_pause_s)
            end = {"id": "cmpl-1", "object": "chat.completion.chunk", "created": created,
                   "model": "tiny", "choices": [{"index": 0, "delta": {},
                                                 "finish_reason": "stop"}]}  # fmt: skip
            yield f"data: {json.dumps(end)}\n\n"
            yield "data: [DONE]\n\n"
        finally:
            self.streams_done.set()

    def completions_received(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]
