"""Talking to the upstream: one `httpx.AsyncClient`, the headers relayed each way, OpenAI-shaped
errors when the upstream gave no answer, and the assembly of a streamed answer's text.

Secrets: the Authorization header and keys pass through here only as header values; nothing in
this module logs a header. What the client gets back never holds a secret: the proxy's errors
name the upstream URL without its password, and an upstream's error body (JSON or not, and the
error events of a stream) has every configured key (the upstream key, the proxy key, every
secret setting such as ``serve_token``), the client's own key as it sent it, and every URL
password replaced by ``***`` (`proxy_secrets`, `client_secrets`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import httpx

from host.settings.redaction import Redactor, redactor_for, without_password

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


#: Credentials a front end sends when it has no key (SillyTavern's ``Bearer undefined``):
#: never a key, so never relayed.
_NO_KEY = frozenset({"", "undefined", "null", "none"})


def no_credential(value: str) -> bool:
    """Whether an Authorization value carries no key: empty, a scheme alone (``Bearer``), or a
    bearer of `_NO_KEY` (``Bearer undefined``, ``Bearer null``). One word that is not a scheme
    is a bare key, and is one."""
    scheme, _, credential = value.strip().partition(" ")
    if not credential.strip():
        return scheme.lower() in _NO_KEY or scheme.lower() in ("bearer", "basic")
    return scheme.lower() == "bearer" and credential.strip().lower() in _NO_KEY


def upstream_headers(
    headers: Mapping[str, str], *, upstream_key: str | None, consumed_auth: bool
) -> dict[str, bytes]:
    """The client's headers for the upstream: its own Authorization relayed unless the proxy's
    key was presented in it (`consumed_auth`), an upstream key is configured (which wins), or it
    carries no key (`no_credential`: then the upstream gets no Authorization at all). Values go
    as the bytes the client sent (HTTP headers arrive decoded as Latin-1): a UTF-8 value from a
    client passes unchanged instead of failing the request."""
    out = {k.lower(): v for k, v in headers.items() if k.lower() not in _DROP_REQUEST}
    auth = out.pop("authorization", None)
    if upstream_key:
        out["authorization"] = f"Bearer {upstream_key}"
    elif auth is not None and not consumed_auth and not no_credential(auth):
        out["authorization"] = auth
    out["accept-encoding"] = "identity"  # the answer is read as it streams
    return {k: _raw(v) for k, v in out.items()}


def _raw(value: str) -> bytes:
    """A header value as its bytes (Latin-1 is how they were decoded; a configured key that is
    not Latin-1 goes as UTF-8)."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")


def client_headers(headers: httpx.Headers) -> dict[str, str]:
    """The upstream's response headers for the client."""
    return {k: v for k, v in headers.items() if k.lower() not in _DROP_RESPONSE}


def error_body(message: str, kind: str, code: str) -> dict[str, Any]:
    """OpenAI's error shape."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def upstream_failure(exc: httpx.HTTPError, upstream: str) -> tuple[int, dict[str, Any]]:
    """Status and body for an upstream that could not be reached or did not answer in time (the
    URL shown without its password)."""
    upstream = without_password(upstream)
    if isinstance(exc, httpx.TimeoutException):
        return 504, error_body(
            f"the upstream {upstream} did not answer in time ({type(exc).__name__})",
            "upstream_error", "upstream_timeout",
        )  # fmt: skip
    return 502, error_body(
        f"the upstream {upstream} could not be reached or broke off ({type(exc).__name__})",
        "upstream_error", "upstream_unreachable",
    )  # fmt: skip


def proxy_secrets(host_settings: Mapping[str, Any], keys: tuple[str | None, ...]) -> Redactor:
    """The redactor of what the proxy relays: every secret of the host's settings (and the
    environment variables they name) and `keys` (the upstream key and the proxy key as read)."""
    return redactor_for(host_settings).with_secrets(k for k in keys if k)


def client_secrets(headers: Mapping[str, str]) -> list[str]:
    """The keys a client sent (its Authorization credential, X-Memgraph-Key): an upstream that
    quotes them back does not get them shown."""
    out = []
    auth = headers.get("authorization") or ""
    scheme, _, credential = auth.strip().partition(" ")
    if not no_credential(auth):  # "Bearer undefined" is no secret
        out.append(credential.strip() if credential else scheme)
    out.append((headers.get("x-memgraph-key") or "").strip())
    return [v for v in out if v]


def relayed_error(status: int, body: bytes, secrets: Redactor) -> bytes:
    """An upstream error body as it came when it is JSON, else wrapped in OpenAI's shape; every
    secret in it replaced by ``***`` (`secrets`)."""
    body = secrets.bytes(body)
    try:
        json.loads(body)
    except ValueError:
        text = body.decode("utf-8", "replace").strip()[:2000] or f"upstream answered {status}"
        return json.dumps(error_body(text, "upstream_error", f"upstream_{status}")).encode()
    return body


#: A stream's partial line held back at most this long before it is passed on regardless.
_LINE_HOLD = 64 * 1024


async def redacted_stream(
    chunks: AsyncGenerator[bytes, None], secrets: Redactor, *, everything: bool = False
) -> AsyncGenerator[bytes, None]:
    """`chunks` with secrets replaced, line by line: every line (`everything`: an error body),
    or only the lines that carry an error (a stream's ``data: {"error": ...}`` event; the
    answer's own text passes as it came). A partial line waits for its end (server-sent events
    end each event with a line break, so nothing waits in practice); past `_LINE_HOLD` bytes it
    goes on but for the longest secret's length, so no secret is cut in two unredacted. Closing
    this stream closes `chunks` (its clean-up runs then, not when it is collected)."""
    pending = b""
    try:
        async for chunk in chunks:
            data = pending + chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0 and len(data) > _LINE_HOLD:
                cut = len(data) - max(secrets.longest, 256)
            pending = data[cut:]
            if cut:
                yield _redacted_lines(data[:cut], secrets, everything)
        if pending:
            yield _redacted_lines(pending, secrets, everything)
    finally:
        await chunks.aclose()


def _redacted_lines(data: bytes, secrets: Redactor, everything: bool) -> bytes:
    if everything:
        return secrets.bytes(data)
    if b"error" not in data:
        return data
    return b"".join(
        secrets.bytes(line) if b"error" in line else line for line in data.splitlines(True)
    )


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
