"""Who may call, and which chats they reach: `AccessGuard` in front of every ``/api`` and ``/v1``
route, and the write check of the write routes.

With keys (``proxy_api_key``, the admin key, and the keys of ``namespace_keys_file``,
`access_keys.AccessKeys`), every ``/api`` and ``/v1`` request presents one, as
``Authorization: Bearer KEY`` (then that header is not relayed) or as ``X-Memgraph-Key: KEY``
(then the client's Authorization goes on to the upstream); else a 401. The key's `Access`
(its namespace's chats, or all of them; read-only or not) is kept on the request for the routes
(`access_of`). Every write route (the JSON API's messages, forget and fork, the explorer's
edits, a proxied completion) needs a write credential: a key that is not read-only, or with no
keys the server's write token in ``X-Memgraph-Token`` (``serve_token``, or the random one
``serve`` and ``proxy`` print at start). A read-only key's write is a 403.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..relay import error_body
from .access_keys import KEY_HEADER, OPEN, SCOPE_KEY, Access, AccessKeys

TOKEN_HEADER = "x-memgraph-token"
READ_ONLY = "this key is read-only: it cannot write"

__all__ = ["KEY_HEADER", "TOKEN_HEADER", "AccessGuard", "access_of", "refused", "write_refusal"]


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def access_of(request: Request) -> Access:
    """The request's `Access` (`AccessGuard`'s; `OPEN` on an app built without keys)."""
    return request.scope.get(SCOPE_KEY, OPEN)


def write_refusal(
    headers: Mapping[str, str], token: str | None, access: Access
) -> tuple[int, str] | None:
    """None when the request may write (a key that is not read-only, or the server's token);
    else the status and message of the refusal (the value given is never echoed)."""
    if access.read_only:
        return 403, READ_ONLY
    if access.by_key:
        return None
    given = headers.get(TOKEN_HEADER)
    if given and token and _same(given, token):
        return None
    if given:
        return 401, "wrong token"
    return 401, f"writes need the server's token in the {TOKEN_HEADER} header"


def refused() -> JSONResponse:
    """401 in OpenAI's shape (the key given is never echoed)."""
    body = error_body(
        "this memgraph server needs a key: Authorization: Bearer <key> or X-Memgraph-Key",
        "invalid_request_error", "invalid_api_key",
    )  # fmt: skip
    return JSONResponse(body, status_code=401)


def _guarded(path: str) -> bool:
    return any(path == f"/{a}" or path.startswith(f"/{a}/") for a in ("api", "v1"))


class AccessGuard:
    """The ASGI middleware: a 401 for an ``/api`` or ``/v1`` request without a known key (when
    the server has keys), else the request goes on with its `Access` in ``scope[SCOPE_KEY]``.
    The page and its files need no key."""

    def __init__(self, app: ASGIApp, *, keys: AccessKeys | None = None) -> None:
        self.app = app
        self.keys = keys or AccessKeys([])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _guarded(scope["path"]):
            access = self.keys.resolve(Headers(scope=scope))
            if access is None:
                await refused()(scope, receive, send)
                return
            scope[SCOPE_KEY] = access
        await self.app(scope, receive, send)
