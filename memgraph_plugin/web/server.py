"""The explorer's HTTP side on Starlette: the page, its JSON endpoints and a server-sent event
stream; and `ExplorerServer`, the app on uvicorn in a thread (tests, embedding).

``/api/chats/<chat>/events`` streams ``commit`` events when the chat's journal version moves, so
the page redraws whoever wrote (this process, the CLI, another host on the same data dir).
A request's chat is its key's namespace's (`proxy.guard.access.access_of`): another namespace's chat
is a 404 as a chat that does not exist, and the list holds the namespace's chats only.
Storage reads are synchronous: Starlette runs those endpoints on its worker threads; uvicorn
owns connections (idle and slow clients cost no thread, keep-alive and shutdown are its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import mimetypes
import signal
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import h11
import uvicorn
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from host.chats.chat_ids import ChatIdError
from memgraph_plugin.proxy.guard.access import access_of

from .explorer import GraphExplorer, UnknownChat

STATIC = Path(__file__).resolve().parent / "static"
POLL_SECONDS = 0.5  # how often an open event stream looks for a new journal version
KEEPALIVE_SECONDS = 15.0

log = logging.getLogger(__name__)


def not_found(path: str) -> JSONResponse:
    return JSONResponse({"error": f"not found: {path}"}, status_code=404)


def static_file(relative: str) -> Response:
    """A file under static/, or 404 for anything else (``..``, NUL bytes, folders)."""
    if "\x00" in relative or "\\" in relative:
        return not_found("/static/" + relative.replace("\x00", "%00"))
    try:
        path = STATIC.joinpath(relative).resolve()
    except (OSError, ValueError):
        return not_found("/static/")
    if not path.is_relative_to(STATIC) or not path.is_file():
        return not_found("/static/" + relative)
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if kind.startswith("text/") or kind.endswith("javascript"):
        kind += "; charset=utf-8"
    return FileResponse(path, media_type=kind, headers={"cache-control": "no-store"})


class ExplorerRoutes:
    """The explorer's endpoints over one `GraphExplorer`; `stopping()` ends event streams."""

    def __init__(
        self,
        explorer: GraphExplorer,
        *,
        poll: float = POLL_SECONDS,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.explorer = explorer
        self.poll = poll
        self.stopping = stopping

    def routes(self, *, with_chat_list: bool = True) -> list[Route]:
        routes = [
            Route("/", self.index, methods=["GET"]),
            Route("/static/{path:path}", self.static, methods=["GET"]),
            Route("/favicon.ico", self.favicon, methods=["GET"]),
            Route("/api/chats/{chat:path}/graph", self.graph, methods=["GET"]),
            Route("/api/chats/{chat:path}/search", self.search, methods=["GET"]),
            Route("/api/chats/{chat:path}/events", self.events, methods=["GET"]),
            Route("/api/chats/{chat:path}/nodes/{node}", self.node, methods=["GET"]),
            Route("/api/chats/{chat:path}/recalls/last", self.last_recall, methods=["GET"]),
        ]
        if with_chat_list:  # else the memory API's list (it has the versions too)
            routes.append(Route("/api/chats", self.chats, methods=["GET"]))
        return routes

    def index(self, request: Request) -> Response:
        return static_file("index.html")

    def favicon(self, request: Request) -> Response:
        """The page's icon (an SVG; index.html links it too), so no browser meets a 404."""
        return static_file("favicon.svg")

    def static(self, request: Request) -> Response:
        return static_file(request.path_params["path"])

    def chats(self, request: Request) -> JSONResponse:
        scope = access_of(request).scope
        rows = [r for r in self.explorer.chats() if scope.owns(r["id"])]
        return JSONResponse({"chats": [{**r, "id": scope.external(r["id"])} for r in rows]})

    def versions(self) -> dict[str, int]:
        """chat id -> newest journal version, for every chat with commits."""
        return {c["id"]: c["version"] for c in self.explorer.chats()}

    def graph(self, request: Request) -> JSONResponse:
        include = [i for i in request.query_params.get("include", "").split(",") if i]
        shown, chat = _chat_of(request)
        return JSONResponse({**self.explorer.graph(chat, include=include), "chat": shown})

    def search(self, request: Request) -> JSONResponse:
        _, chat = _chat_of(request)
        found = self.explorer.search(chat, request.query_params.get("q", ""))
        return JSONResponse({"results": found})

    def node(self, request: Request) -> JSONResponse:
        node_id = request.path_params["node"]
        detail = self.explorer.node(_chat_of(request)[1], node_id)
        if detail is None:
            return JSONResponse({"error": f"no node {node_id!r}"}, status_code=404)
        return JSONResponse(detail)

    def last_recall(self, request: Request) -> JSONResponse:
        """The chat's newest recall: its query and each injected item with why."""
        shown, chat = _chat_of(request)
        return JSONResponse({**self.explorer.last_recall(chat), "chat": shown})

    async def events(self, request: Request) -> Response:
        """A server-sent event stream: ``commit`` with the new version whenever one lands."""
        shown, chat = _chat_of(request)
        last = await asyncio.to_thread(self.explorer.version, chat)
        return StreamingResponse(
            self._events(chat, last, shown),
            media_type="text/event-stream",
            headers={"cache-control": "no-store"},
        )

    async def _events(self, chat: str, last: int, shown: str) -> AsyncIterator[bytes]:
        yield _event("hello", {"chat": shown, "version": last})
        quiet = 0.0
        while not self.stopping():
            await asyncio.sleep(self.poll)
            version = await asyncio.to_thread(self.explorer.version, chat)
            if version != last:
                last = version
                quiet = 0.0
                yield _event("commit", {"chat": shown, "version": version})
            else:
                quiet += self.poll
                if quiet > KEEPALIVE_SECONDS:
                    quiet = 0.0
                    yield b": keepalive\n\n"


def _chat_of(request: Request) -> tuple[str, str]:
    """The path's chat: the id the caller gave, and the stored id in its key's namespace (an id
    another namespace's chats are stored by is only a chat of this one). A chat that is not
    there raises `UnknownChat` with the id given."""
    given = request.path_params["chat"]
    try:
        return given, access_of(request).scope.internal(given)
    except ChatIdError:
        raise UnknownChat(given) from None


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


async def unknown_chat(request: Request, exc: Exception) -> JSONResponse:
    """404 naming the chat (the page shows the message; it never falls back to another chat)."""
    chat = request.path_params.get("chat", exc.args[0])  # as the caller named it
    message = f"unknown chat {chat!r}: this data dir has no commits for it"
    return JSONResponse({"error": message, "code": "unknown_chat", "chat": chat}, status_code=404)


# ------------------------------------------------------------------ uvicorn


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (``port=0``: a free port); connections queue from here on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


#: What a request the HTTP parser refuses is told (it never reaches the app).
BAD_HTTP = (
    "bad HTTP request: the request line or a header is malformed or holds a character HTTP "
    "does not allow (a control character such as NUL, ESC or CR in a header value)"
)


def bad_http_body(url: bytes) -> bytes:
    """The JSON of a parser's 400: OpenAI's error shape for ``/v1`` (when the request line was
    read), ``{"error", "code"}`` otherwise."""
    if url == b"/v1" or url.startswith((b"/v1/", b"/v1?")):
        error: Any = {"message": BAD_HTTP, "type": "invalid_request_error", "param": None,
                      "code": "bad_http_request"}  # fmt: skip
        return json.dumps({"error": error}).encode()
    return json.dumps({"error": BAD_HTTP, "code": "bad_http_request"}).encode()


class JsonH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with its 400 for an unreadable request as JSON."""

    def send_400_response(self, msg: str) -> None:
        body = bad_http_body(b"")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


class JsonHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (httptools is a dependency: the servers' parser) with its 400
    for an unreadable request as JSON."""

    def send_400_response(self, msg: str) -> None:
        body = bad_http_body(bytes(getattr(self, "url", b"") or b""))
        head = [b"HTTP/1.1 400 Bad Request\r\n"]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.extend(
            [
                b"content-type: application/json\r\n",
                b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                b"connection: close\r\n\r\n",
            ]
        )
        self.transport.write(b"".join(head) + body)
        self.transport.close()


def uvicorn_server(
    app: Any, *, keep_alive: float = 5.0, http: type[asyncio.Protocol] | None = None
) -> uvicorn.Server:
    """uvicorn for one app: no access log (it would show query strings), a bounded graceful
    shutdown (open event streams do not hold it), idle keep-alive connections closed, a JSON
    400 for a request the HTTP parser refuses (`http`: the protocol; httptools by default)."""
    config = uvicorn.Config(
        app,
        http=http or JsonHttpToolsProtocol,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=keep_alive,
        timeout_graceful_shutdown=3,
        server_header=False,
    )
    return uvicorn.Server(config)


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


class ExplorerServer:
    """An app on uvicorn in a daemon thread with its own event loop; ``stop()`` ends it."""

    def __init__(self, app: Any, sock: socket.socket, *, keep_alive: float = 5.0) -> None:
        self.server = uvicorn_server(app, keep_alive=keep_alive)
        self.sock = sock
        self.url = url_of(sock)
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[sock])),
            name="memgraph-explorer",
            daemon=True,
        )
        self.thread.start()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()


class SignalStoppedServer(uvicorn.Server):
    """uvicorn that stops on SIGINT/SIGTERM and returns (the command then drains and the host
    stops) instead of raising the signal again after shutdown."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.handle_exit, sig, None)
                installed.append(sig)
        try:
            yield
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
