"""Who may call: the proxy's own key and the server's write token, compared in constant time.

With ``proxy_api_key`` set, a client presents the key as ``Authorization: Bearer KEY`` (then that
header is not relayed) or as ``X-Memgraph-Key: KEY`` (then the client's Authorization goes on to
the upstream). Every write route (the JSON API's messages and forget, the explorer's edits)
needs a credential: the server's write token in ``X-Memgraph-Token`` (``serve_token``, or the
random one ``serve`` and ``proxy`` print at start), or the proxy key when one is set.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from starlette.responses import JSONResponse

from .relay import error_body

KEY_HEADER = "x-memgraph-key"
TOKEN_HEADER = "x-memgraph-token"


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def check_key(headers: Mapping[str, str], api_key: str | None) -> tuple[bool, bool]:
    """(allowed, whether the Authorization header carried the proxy key)."""
    if not api_key:
        return True, False
    given = headers.get(KEY_HEADER)
    if given is not None and _same(given, api_key):
        return True, False
    auth = headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() == "bearer" and _same(token.strip(), api_key):
        return True, True
    return False, False


def write_refusal(headers: Mapping[str, str], token: str | None, api_key: str | None) -> str | None:
    """None when the request carries a write credential (the token, or the key when one is
    set); else the message of the 401 (the value given is never echoed)."""
    given = headers.get(TOKEN_HEADER)
    if given and token and _same(given, token):
        return None
    if api_key and check_key(headers, api_key)[0]:
        return None
    if given:
        return "wrong token"
    also = " (or the proxy key)" if api_key else ""
    return f"writes need the server's token in the {TOKEN_HEADER} header{also}"


def refused() -> JSONResponse:
    """401 in OpenAI's shape (the key given is never echoed)."""
    body = error_body(
        "this memgraph proxy needs its key: Authorization: Bearer <proxy_api_key> or "
        "X-Memgraph-Key", "invalid_request_error", "invalid_api_key",
    )  # fmt: skip
    return JSONResponse(body, status_code=401)
