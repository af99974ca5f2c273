"""Talking to the upstream: one `httpx.AsyncClient`, the headers relayed each way, OpenAI-shaped
errors when the upstream gave no answer, and the assembly of a streamed answer's text.

Secrets: the Authorization header and keys pass through here only as header values; nothing in
this module logs a header, and errors name the upstream URL, never a key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

#: Request headers never relayed: hop-by-hop, recomputed, or the proxy's own.
_DROP_REQUEST = frozenset({
    "host", "content-length", "connection", "keep-alive", "proxy-authorization",
    "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "accept-encoding",
    "x-memgraph-chat", "x-memgraph-key", "cookie",
})  # fmt: skip
#: Response headers never relayed (the proxy's server frames the body itself).
_DROP_RESPONSE = frozenset({
    "content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding",
    "server", "date",
})  # fmt: skip


def make_client(timeout_s: float) -> httpx.AsyncClient:
    """The upstream client: a short connect timeout, `timeout_s` for reads between chunks."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        follow_redirects=False,
    )


def upstream_headers(
    headers: Mapping[str, str], *, upstream_key: str | None, consumed_auth: bool
) -> dict[str, str]:
    """The client's headers for the upstream: its own Authorization relayed unless the proxy's
    key was presented in it (`consumed_auth`) or an upstream key is configured (which wins)."""
    out = {k: v for k, v in headers.items() if k.lower() not in _DROP_REQUEST}
    if upstream_key:
        out = {k: v for k, v in out.items() if k.lower() != "authorization"}
        out["authorization"] = f"Bearer {upstream_key}"
    elif consumed_auth:
        out = {k: v for k, v in out.items() if k.lower() != "authorization"}
    out["accept-encoding"] = "identity"  # the answer is read as it streams
    return out


def client_headers(headers: httpx.Headers) -> dict[str, str]:
    """The upstream's response headers for the client."""
    return {k: v for k, v in headers.items() if k.lower() not in _DROP_RESPONSE}


def error_body(message: str, kind: str, code: str) -> dict[str, Any]:
    """OpenAI's error shape."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def upstream_failure(exc: httpx.HTTPError, upstream: str) -> tuple[int, dict[str, Any]]:
    """Status and body for an upstream that could not be reached or did not answer in time."""
    if isinstance(exc, httpx.TimeoutException):
        return 504, error_body(
            f"the upstream {upstream} did not answer in time ({type(exc).__name__})",
            "upstream_error", "upstream_timeout",
        )  # fmt: skip
    return 502, error_body(
        f"the upstream {upstream} could not be reached or broke off ({type(exc).__name__})",
        "upstream_error", "upstream_unreachable",
    )  # fmt: skip


def relayed_error(status: int, body: bytes) -> bytes:
    """An upstream error body as it came when it is JSON, else wrapped in OpenAI's shape."""
    try:
        json.loads(body)
    except ValueError:
        text = body.decode("utf-8", "replace").strip()[:2000] or f"upstream answered {status}"
        return json.dumps(error_body(text, "upstream_error", f"upstream_{status}")).encode()
    return body


class StreamedAnswer:
    """Reads the server-sent events of a streamed completion as they pass, keeping the text of
    choice 0 and whether the stream finished (``[DONE]`` or a ``finish_reason``)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.finished = False
        self._pending = b""

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def feed(self, chunk: bytes) -> None:
        data = self._pending + chunk
        lines = data.split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line.strip())

    def close(self) -> None:
        if self._pending:
            self._line(self._pending.strip())
            self._pending = b""

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if payload == b"[DONE]":
            self.finished = True
            return
        try:
            event = json.loads(payload)
        except ValueError:
            return
        if not isinstance(event, dict) or "error" in event:
            return
        for choice in event.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, str):
                self.parts.append(content)
            if choice.get("finish_reason"):
                self.finished = True


def answer_text(body: bytes) -> str | None:
    """Choice 0's text of a non-streamed completion, or None when the body has none."""
    try:
        data = json.loads(body)
        content = data["choices"][0]["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None
    return content if isinstance(content, str) else None
