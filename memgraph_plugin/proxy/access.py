"""The proxy's own key: with ``proxy_api_key`` set, a client presents it as
``Authorization: Bearer KEY`` (then that header is not relayed) or as ``X-Memgraph-Key: KEY``
(then the client's Authorization goes on to the upstream). Compared in constant time."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from starlette.responses import JSONResponse

from .relay import error_body

KEY_HEADER = "x-memgraph-key"


def check_key(headers: Mapping[str, str], api_key: str | None) -> tuple[bool, bool]:
    """(allowed, whether the Authorization header carried the proxy key)."""
    if not api_key:
        return True, False
    expected = api_key.encode("utf-8")
    given = headers.get(KEY_HEADER)
    if given is not None and hmac.compare_digest(given.encode("utf-8", "replace"), expected):
        return True, False
    auth = headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(
        token.strip().encode("utf-8", "replace"), expected
    ):
        return True, True
    return False, False


def refused() -> JSONResponse:
    """401 in OpenAI's shape (the key given is never echoed)."""
    body = error_body(
        "this memgraph proxy needs its key: Authorization: Bearer <proxy_api_key> or "
        "X-Memgraph-Key", "invalid_request_error", "invalid_api_key",
    )  # fmt: skip
    return JSONResponse(body, status_code=401)
