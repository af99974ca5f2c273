"""The one app factory: the explorer, the JSON memory API and the OpenAI-compatible proxy as one
Starlette app (``memgraph-host serve [--proxy-upstream URL]`` and ``memgraph-host proxy``).

Every answer is JSON except the page, its files and the streams; an unexpected error is a 500
that names no exception (the log has it). The ``Host`` header must name the bound address
(DNS rebinding: a web page cannot reach a loopback server through a name it controls). Before
any route runs, `request_guard.RequestGuard` refuses cross-site calls to ``/api`` and ``/v1``,
bodies over ``http_max_body_bytes`` and non-JSON bodies; CORS answers only the origins
``http_cors_origins`` lists; `proxy.guard.access.AccessGuard` asks for a key when the server has
keys and notes which chats the key reaches.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from host.chats.chat_lock import ChatBusy
from memgraph_plugin.proxy.failure_status import busy_completion
from memgraph_plugin.proxy.guard.access import AccessGuard
from memgraph_plugin.proxy.settings import is_loopback

from .explorer import GraphExplorer, UnknownChat
from .request_guard import RequestGuard, cors_middleware
from .server import (
    POLL_SECONDS,
    ExplorerRoutes,
    ExplorerServer,
    bind,
    not_found,
    unknown_chat,
)
from .settings import HttpSettings

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "[::1]")


def allowed_hosts(bound_host: str) -> tuple[str, ...]:
    """The Host header names accepted for a server bound to `bound_host`: its own name, and
    the loopback names for a loopback bind; any for a wildcard bind (then a key guards)."""
    if bound_host in ("0.0.0.0", "::", ""):
        return ("*",)
    names = [bound_host]
    if is_loopback(bound_host):
        names.extend(n for n in LOOPBACK_NAMES if n != bound_host)
    return tuple(names)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return not_found(request.url.path)
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code)


async def _server_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "internal error (the server log has the details)"}, 500)


async def _read_only(request: Request) -> JSONResponse:
    """A read-only server's answer to the page's `GET /api/edit-access` (no write route)."""
    return JSONResponse({"writable": False})


def build_app(
    *,
    explorer: ExplorerRoutes | None = None,
    memory_api: Any = None,
    proxy: Any = None,
    edits: Any = None,
    bound_host: str = "127.0.0.1",
    http: HttpSettings | None = None,
    keys: Any = None,
) -> Starlette:
    """One app: `explorer` (`ExplorerRoutes`), `memory_api` (`proxy.memory_api.MemoryApi`),
    `proxy` (`proxy.completions.Proxy`) and `edits` (`edits.EditRoutes`: the explorer's write
    routes, absent when read-only), each optional; `http`: the body limit and the listed
    origins (default: 8 MiB, none); `keys` (`proxy.guard.access_keys.AccessKeys`): who may call
    ``/api`` and ``/v1``, and which namespace's chats each reaches (default: no key needed)."""
    http = http or HttpSettings()
    routes: list[Any] = []
    if edits is not None:  # before the explorer's GET routes (their paths overlap)
        routes.extend(edits.routes())
    elif explorer is not None:  # read-only: the page asks, and shows no edit controls
        routes.append(Route("/api/edit-access", _read_only, methods=["GET"]))
    if proxy is not None:
        routes.extend(proxy.routes())
    if memory_api is not None:
        routes.extend(memory_api.routes())
    if explorer is not None:
        routes.extend(explorer.routes(with_chat_list=memory_api is None))
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(RequestGuard, settings=http, allowed_hosts=allowed_hosts(bound_host)),
            *cors_middleware(http),
            Middleware(AccessGuard, keys=keys),  # inside CORS: a preflight needs no key
        ],
        exception_handlers={
            UnknownChat: unknown_chat,
            ChatBusy: busy_completion,  # a proxied chat another process holds too long
            HTTPException: _http_error,
            Exception: _server_error,
        },
    )


def start_server(
    explorer: GraphExplorer, *, host: str = "127.0.0.1", port: int = 0, poll: float = POLL_SECONDS
) -> tuple[ExplorerServer, threading.Thread]:
    """The explorer alone (``port=0``: a free port), served from a daemon thread."""
    holder: list[ExplorerServer] = []
    routes = ExplorerRoutes(
        explorer, poll=poll, stopping=lambda: bool(holder) and holder[0].server.should_exit
    )
    sock = bind(host, port)
    server = ExplorerServer(build_app(explorer=routes, bound_host=host), sock)
    holder.append(server)
    return server, server.thread
