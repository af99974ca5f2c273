"""Who may call ``/api/*`` and ``/v1/*``, and with what body: one policy, applied by
`app.build_app` in front of every route, before any route reads or decodes anything.

- **Host** (every path): the ``Host`` header must name the bound address (`app.allowed_hosts`),
  else 400: a web page cannot reach a loopback server through a name it controls (DNS rebinding).
- **Cross-site refusal** (reads included): a request whose ``Origin`` is neither the server's own
  (``scheme://Host``) nor listed in ``http_cors_origins``, ``Origin: null``, or a browser's
  ``Sec-Fetch-Site: cross-site`` / ``same-site`` without a listed ``Origin`` is a 403 naming the
  origin and the setting. A browser always sends one of them on a request another page makes
  (a ``no-cors`` form-like POST included), and a non-browser client sends neither. The page
  itself (``/``, ``/static``, the icon) stays reachable from anywhere.
- **Body limit** (``http_max_body_bytes``, every route): a ``Content-Length`` over it, or a
  chunked body that grows past it, is a 413 before the route runs; a chunked body is read here,
  up to the limit, and handed on whole.
- **JSON bodies only**: a POST/PUT/PATCH/DELETE with a body to ``/api/*`` or
  ``POST /v1/chat/completions`` must say ``Content-Type: application/json`` (parameters allowed),
  else 415: a form or ``text/plain`` POST, which a page may send without asking, never reaches a
  route. Other relayed ``/v1/*`` calls keep any content type (an upstream may take audio).

Errors are JSON: OpenAI's shape on ``/v1/*``, ``{"error", "code"}`` elsewhere. CORS headers for
the listed origins come from Starlette's `CORSMiddleware` inside this guard (`cors_middleware`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memgraph_plugin.proxy.relay import error_body

from .settings import HttpSettings, normal_origin

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
JSON_ONLY_V1 = "/v1/chat/completions"
#: Request headers a listed origin's page may send, and response headers it may read.
CORS_REQUEST_HEADERS = (
    "authorization", "content-type", "x-memgraph-chat", "x-memgraph-fork-from",
    "x-memgraph-key", "x-memgraph-token", "x-memgraph-context-tokens",
)  # fmt: skip
CORS_EXPOSED_HEADERS = (
    "x-memgraph-chat", "x-memgraph-recall", "x-memgraph-warning", "x-memgraph-context",
    "x-memgraph-chat-match",
)  # fmt: skip
CORS_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
ECHO_CHARS = 200  # the most of a refused header value an error repeats


def cors_middleware(settings: HttpSettings) -> list[Middleware]:
    """Starlette's CORS answers for the listed origins (none listed: no CORS at all)."""
    if not settings.cors_origins:
        return []
    return [
        Middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=list(CORS_METHODS),
            allow_headers=list(CORS_REQUEST_HEADERS),
            expose_headers=list(CORS_EXPOSED_HEADERS),
        )
    ]


class Refusal(Exception):
    """A request the guard answers itself: status, code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _area(path: str) -> str | None:
    """``"v1"`` or ``"api"`` for the guarded paths, None for the page and its files."""
    for area in ("v1", "api"):
        if path == f"/{area}" or path.startswith(f"/{area}/"):
            return area
    return None


def _host_name(host: str) -> str | None:
    """The name in a Host header (``[::1]:8765`` -> ``::1``), lower-cased; None when unreadable."""
    try:
        return urlsplit("//" + host.strip()).hostname
    except ValueError:
        return None


def _shown(value: str) -> str:
    return repr(value if len(value) <= ECHO_CHARS else value[:ECHO_CHARS] + "...")


class RequestGuard:
    """The ASGI middleware (see the module note)."""

    def __init__(
        self, app: ASGIApp, *, settings: HttpSettings, allowed_hosts: tuple[str, ...] = ("*",)
    ) -> None:
        """`allowed_hosts`: the Host names accepted (``"*"``: any)."""
        self.app = app
        self.limit = settings.max_body_bytes
        self.listed = frozenset(settings.cors_origins)
        self.hosts = None if "*" in allowed_hosts else {_host_name(h) for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        area = _area(scope["path"])
        try:
            self._known_host(headers)
            if area is not None:
                self._same_origin(scope, headers)
            receive = await self._limited(scope, headers, receive)
            if area is not None:
                self._json_only(scope, headers)
        except Refusal as refusal:
            await self._answer(refusal, area, headers)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    # ------------------------------------------------------------------ checks

    def _known_host(self, headers: Headers) -> None:
        if self.hosts is None:
            return
        given = headers.get("host", "")
        if _host_name(given) not in self.hosts:
            raise Refusal(
                400,
                "bad_host",
                f"the Host header {_shown(given)} does not name this server (a page reaching it "
                "through another name is refused)",
            )

    def _same_origin(self, scope: Scope, headers: Headers) -> None:
        origin = headers.get("origin")
        if origin is not None:
            normal = normal_origin(origin) if origin != "null" else None
            if normal is not None and normal in self.listed:
                return
            own = normal_origin(f"{scope.get('scheme', 'http')}://{headers.get('host', '')}")
            if normal is None or normal != own:
                raise Refusal(
                    403,
                    "cross_site_refused",
                    f"cross-origin request refused: Origin {_shown(origin)} is not this server's "
                    f"({own}) and not listed in the setting http_cors_origins",
                )
        site = headers.get("sec-fetch-site", "").lower()
        if site in ("cross-site", "same-site"):
            raise Refusal(
                403,
                "cross_site_refused",
                f"cross-site request refused (Sec-Fetch-Site: {site}): a page on another site "
                "may call this server only when its origin is listed in the setting "
                "http_cors_origins",
            )

    async def _limited(self, scope: Scope, headers: Headers, receive: Receive) -> Receive:
        """`receive` when the body's length is known and within the limit; a chunked body is
        read here (up to the limit) and replayed whole."""
        length = headers.get("content-length")
        if length is not None:
            if not length.strip().isdigit():
                raise Refusal(400, "bad_request", f"Content-Length {_shown(length)} is no size")
            if int(length) > self.limit:
                raise self._too_large(f"Content-Length {int(length)}")
            scope["memgraph.has_body"] = int(length) > 0
            return receive
        if "chunked" not in headers.get("transfer-encoding", "").lower():
            scope["memgraph.has_body"] = False
            return receive
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: hand that on
                return _replay(b"".join(chunks), receive, first=message)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                raise self._too_large(f"the chunked body (more than {size} bytes so far)")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        scope["memgraph.has_body"] = size > 0
        return _replay(b"".join(chunks), receive)

    def _too_large(self, what: str) -> Refusal:
        return Refusal(
            413,
            "body_too_large",
            f"request body too large: {what} is over the limit of {self.limit} bytes "
            "(setting http_max_body_bytes)",
        )

    def _json_only(self, scope: Scope, headers: Headers) -> None:
        path, method = scope["path"], scope["method"]
        if method not in BODY_METHODS or not scope.get("memgraph.has_body"):
            return
        if path.startswith("/v1") and not (path == JSON_ONLY_V1 and method == "POST"):
            return  # relayed as it is: the upstream may take other bodies
        given = headers.get("content-type", "")
        if given.split(";", 1)[0].strip().lower() != "application/json":
            raise Refusal(
                415,
                "unsupported_media_type",
                f"the body must be JSON sent as Content-Type: application/json "
                f"(got {_shown(given) if given else 'no Content-Type'})",
            )

    # ------------------------------------------------------------------ answers

    def _answer(self, refusal: Refusal, area: str | None, headers: Headers) -> JSONResponse:
        if area == "v1":
            kind = "invalid_request_error"
            body: dict[str, Any] = error_body(str(refusal), kind, refusal.code)
        else:
            body = {"error": str(refusal), "code": refusal.code}
        answer = JSONResponse(body, status_code=refusal.status)
        origin = normal_origin(headers.get("origin", "") or "")
        if origin is not None and origin in self.listed:  # a listed page may read why
            answer.headers["access-control-allow-origin"] = origin
            answer.headers["vary"] = "Origin"
        return answer


def _replay(body: bytes, receive: Receive, first: Message | None = None) -> Receive:
    """A `receive` that gives `body` whole (or `first`, a disconnect), then the client's own
    messages (a later disconnect)."""
    pending: list[Message] = [first or {"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replayed
