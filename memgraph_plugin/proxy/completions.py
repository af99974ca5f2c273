"""``POST /v1/chat/completions`` through memory, and every other ``/v1/*`` relayed unchanged.

Per request: read the conversation (a large body on a worker thread, so other chats go on),
find its chat (among the chats of the request key's namespace: `access.access_of`; a read-only
key's completion is a 403, since the turn is stored), take the chat's lock, reconcile the sent
history and recall for the last user message (within ``proxy_memory_timeout_s``; a failure or a
timeout forwards without memory and says so in ``X-Memgraph-Warning``), inject the block as a
system message, forward. The answer
(assembled from the stream) is stored and every new message extracted after the response, off
its path; the lock is released then. When the memory step failed or timed out, the turn is
still stored once the step has ended (reconciled again, as `ChatMemory.sync` does) and
extracted after it. A cut-off answer is not stored; a client that hangs up while the upstream
is still answering cancels the upstream call and frees the chat.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import quote

import attrs
import httpx
import orjson
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from host.chats.chat_ids import ChatIdError
from host.settings.setting_values import int_setting
from memgraph_plugin.settings_keys import RECALL

from .guard.access import READ_ONLY, access_of
from .guard.access_keys import Access
from .ledger.chat_identity import MATCH_HEADER, ChatIdentity, identify
from .ledger.chat_memory import ChatMemory, Synced
from .ledger.fork_header import ForkRefused, fork_on_first_request
from .relay import (
    StreamedAnswer,
    answer_text,
    client_headers,
    client_secrets,
    error_body,
    make_client,
    proxy_secrets,
    redacted_stream,
    relayed_error,
    upstream_failure,
    upstream_headers,
)
from .request.context_budget import Trimmed, context_header, requested_budget, trim
from .request.conversation import Conversation, RequestError, speaker
from .request.history_reader import HistoryReader
from .request.token_count import for_model
from .request.unencodable import unencodable_place
from .settings import BEFORE_LAST_USER, ProxySettings
from .streaming import RelayStream, disconnected

log = logging.getLogger(__name__)

#: Seconds the answer's storing waits for its response to be sent (a client gone before the
#: last byte never lets it know).
SENT_GRACE_S = 5.0
#: Bodies from this size on are decoded on a worker thread: a multi-MB body never holds the
#: event loop (other chats' requests) for its whole decoding.
OFF_LOOP_BYTES = 256 * 1024
#: The status a request gets when its client hung up first (nobody reads it; access logs do).
CLIENT_GONE = 499


@attrs.frozen
class Prepared:
    """The memory step's result: what reconciliation did and the block to inject."""

    synced: Synced
    block: str
    recall: Any = None  # RecallOutcome


class Proxy:
    """The proxy of one host: its settings, upstream client and `ChatMemory`."""

    def __init__(self, host: Any, settings: ProxySettings, memory: ChatMemory) -> None:
        if not settings.upstream:
            raise ValueError("the proxy needs an upstream (proxy_upstream or --upstream)")
        self.host = host
        self.settings = settings
        self.memory = memory
        self.upstream: str = settings.upstream
        self.client = make_client(settings.timeout_s)
        self.secrets = proxy_secrets(host.settings, (settings.upstream_api_key, settings.api_key))
        self.history = HistoryReader()  # decodes only what is new in a chat's history

    def routes(self) -> list[Route]:
        methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        return [
            Route("/v1/chat/completions", self.chat_completions, methods=["POST"]),
            Route("/v1/{path:path}", self.relay, methods=methods),
        ]

    async def aclose(self) -> None:
        await self.memory.drain()
        await self.client.aclose()

    # ---------------------------------------------------------------- relay

    async def relay(self, request: Request) -> Any:
        """Any other /v1/* call, relayed as it is (model lists, embeddings, ...)."""
        url = self._url(request.url.path, request.url.query)
        headers = upstream_headers(
            request.headers,
            upstream_key=self.settings.upstream_api_key,
            consumed_auth=access_of(request).consumed_auth,
        )
        outgoing = self.client.build_request(
            request.method, url, headers=headers, content=await request.body()
        )
        try:
            answer = await self.client.send(outgoing, stream=True)
        except httpx.HTTPError as exc:
            status, body = upstream_failure(exc, self.upstream)
            return JSONResponse(body, status_code=status)

        async def chunks() -> AsyncGenerator[bytes, None]:
            try:
                async for chunk in answer.aiter_raw():
                    yield chunk
            except httpx.HTTPError:
                pass  # the upstream broke off: the client sees the body end early
            finally:
                await answer.aclose()

        secrets = self.secrets.with_secrets(client_secrets(request.headers))
        body = redacted_stream(chunks(), secrets, everything=answer.status_code >= 400)
        return RelayStream(body, answer.status_code, client_headers(answer.headers))

    def _url(self, path: str, query: str) -> str:
        tail = path[len("/v1") :] if path.startswith("/v1") else path
        return self.upstream + tail + (f"?{query}" if query else "")

    # ---------------------------------------------------------- completions

    async def chat_completions(self, request: Request) -> Any:
        access = access_of(request)
        if access.read_only:  # the proxy stores every turn
            body = error_body(f"{READ_ONLY}: a completion through memory stores the turn",
                              "permission_error", "read_only_key")  # fmt: skip
            return JSONResponse(body, status_code=403)
        raw = await request.body()
        try:
            if len(raw) >= OFF_LOOP_BYTES:
                body, conv = await asyncio.to_thread(self._read, raw)
            else:
                body, conv = self._read(raw)
            identity = identify(request.headers, body, conv)  # then in the key's namespace
            identity = attrs.evolve(identity, chat_id=access.scope.internal(identity.chat_id))
            budget = requested_budget(request.headers, self.settings.context_tokens)
        except (ValueError, ChatIdError) as exc:  # JSON, RequestError, ChatIdError, budget
            readable = isinstance(exc, RequestError | ChatIdError) or "Context-Tokens" in str(exc)
            problem = str(exc) if readable else "not JSON"
            return JSONResponse(
                error_body(f"bad request: {problem}", "invalid_request_error", "bad_request"),
                status_code=400,
            )
        identity = await self.memory.find(identity, conv, access.scope.owns)  # no id: its chat
        lock = self.memory.lock(identity.chat_id)
        await lock.acquire()
        try:
            try:  # X-Memgraph-Fork-From on a chat's first request: start with that chat's memory
                await fork_on_first_request(
                    self.host, self.memory.pipeline.service, request.headers, identity.chat_id,
                    access.scope,
                )  # fmt: skip
            except ForkRefused as exc:
                lock.release()
                return JSONResponse(
                    error_body(f"bad request: {exc}", "invalid_request_error", "bad_request"),
                    status_code=400,
                )
            trimmed = self._trim(body, budget) if budget else None
            return await self._forward(request, body, conv, identity, lock, access, trimmed)
        except BaseException:
            if lock.locked():
                lock.release()
            raise

    def _read(self, raw: bytes) -> tuple[dict[str, Any], Conversation]:
        """The body and its conversation (`HistoryReader.read`); `RequestError` for text that
        cannot be stored or forwarded (a lone surrogate), naming where it is."""
        body, conv = self.history.read(raw)
        place = unencodable_place(raw, body)
        if place is not None:
            raise RequestError(
                f"{place} holds a lone surrogate (an escaped \\ud800-\\udfff without its "
                "pair), which is not text: send it as valid Unicode"
            )
        return body, conv

    async def _forward(
        self,
        request: Request,
        body: dict[str, Any],
        conv: Conversation,
        identity: ChatIdentity,
        lock: asyncio.Lock,
        access: Access,
        trimmed: Trimmed | None = None,
    ) -> Any:
        chat_id = identity.chat_id
        step = asyncio.ensure_future(self._prepare(identity, conv, trimmed))
        await asyncio.wait({step}, timeout=self.settings.memory_timeout_s)
        prepared: Prepared | None = None
        headers = {"x-memgraph-chat": quote(access.scope.external(chat_id), safe="")}
        if identity.match:  # how a request without an id found its chat (docs/proxy.md)
            headers[MATCH_HEADER] = identity.match
        if step.done() and step.exception() is None:
            prepared = step.result()
        else:
            reason = _failure(step)
            self.memory.warn(chat_id, reason)
            headers["x-memgraph-warning"] = (
                f"memory unavailable, forwarded without it: {reason}; "
                "the turn is stored and will be extracted later"
            )
            log.warning("proxy: chat %r: %s", chat_id, reason)
        if prepared is not None and prepared.recall is not None:
            trace = prepared.recall.trace
            headers["x-memgraph-recall"] = (
                f"seq={trace.seq}; items={len(prepared.recall.injected)}; "
                f"chars={len(prepared.block)}; reused={str(trace.reused).lower()}"
            )
        if trimmed is not None:  # the budget holds with memory or without it
            headers["x-memgraph-context"] = context_header(trimmed)
            body = {**body, "messages": trimmed.messages}
        if prepared is not None and prepared.block:
            body = {**body, "messages": self._inject(body["messages"], prepared.block)}
        outgoing = self.client.build_request(
            "POST",
            self._url("/v1/chat/completions", request.url.query),
            headers=upstream_headers(
                request.headers,
                upstream_key=self.settings.upstream_api_key,
                consumed_auth=access.consumed_auth,
            ),
            content=_encoded(body),
        )

        def finish(answer: str | None, sent: asyncio.Event | None = None) -> None:
            self.memory.later(self._store(chat_id, step, conv, answer, lock, sent))

        streamed = bool(body.get("stream"))
        call = asyncio.ensure_future(self._call(outgoing, whole=not streamed))
        gone = asyncio.ensure_future(disconnected(request.receive))
        try:
            await asyncio.wait({call, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not call.done():  # the client hung up first: the upstream call goes too
                call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
        try:
            upstream, raw = await call
        except asyncio.CancelledError:
            if not gone.cancelled() and gone.done():
                finish(None)  # its user message stays stored, no answer
                log.info("proxy: chat %r: the client hung up before the answer", chat_id)
                return Response(b"", CLIENT_GONE)
            raise
        except httpx.HTTPError as exc:
            finish(None)
            status, error = upstream_failure(exc, self.upstream)
            return JSONResponse(error, status_code=status, headers=headers)
        out = {**client_headers(upstream.headers), **headers}
        if upstream.status_code >= 400:
            out["content-type"] = "application/json"
            sent = asyncio.Event()
            finish(None, sent)
            secrets = self.secrets.with_secrets(client_secrets(request.headers))
            error = relayed_error(upstream.status_code, raw or b"", secrets)
            return Response(error, upstream.status_code, out, background=_signal(sent))
        if not streamed:
            # stored once the response is sent: extraction runs on this loop, and started
            # before, it held the client's answer back by the time it took
            sent = asyncio.Event()
            finish(answer_text(raw or b""), sent)
            return Response(raw, upstream.status_code, out, background=_signal(sent))
        secrets = self.secrets.with_secrets(client_secrets(request.headers))
        events = redacted_stream(self._stream(upstream, finish), secrets)  # error events
        return RelayStream(events, upstream.status_code, out)

    async def _call(
        self, outgoing: httpx.Request, *, whole: bool
    ) -> tuple[httpx.Response, bytes | None]:
        """The upstream's response to `outgoing`, and its body read whole when `whole` or when
        it is an error (else None: a stream, read by `_stream`). `httpx.HTTPError` when the
        upstream fails before that; cancelled (a client gone), nothing is left open."""
        upstream = await self.client.send(outgoing, stream=True)
        if not whole and upstream.status_code < 400:
            return upstream, None
        try:
            raw = await upstream.aread()
        except httpx.HTTPError:
            if upstream.status_code < 400:
                raise
            raw = b""  # an error whose body broke off: relayed as the status alone
        finally:
            await upstream.aclose()
        return upstream, raw

    async def _stream(self, upstream: httpx.Response, finish: Any) -> AsyncGenerator[bytes, None]:
        """The upstream's events as they arrive; the answer is stored only when the upstream
        finished it (its ``[DONE]`` or a ``finish_reason`` was read), also when the client
        hung up as the last event went out (the stream is then closed at that event)."""
        answer = StreamedAnswer()
        try:
            async for chunk in upstream.aiter_raw():
                answer.feed(chunk)
                yield chunk
        except httpx.HTTPError as exc:
            _, error = upstream_failure(exc, self.upstream)
            yield f"data: {json.dumps(error)}\n\n".encode()
        finally:
            answer.close()
            finish(answer.text if answer.finished else None)
            await upstream.aclose()

    def _inject(self, messages: list[Any], block: str) -> list[Any]:
        """The messages with the memory block as a system message (`proxy_inject_position`)."""
        text = self.settings.inject_template.replace("{memory}", block)
        note = {"role": "system", "content": text}
        if self.settings.inject_position == BEFORE_LAST_USER:
            at = next(
                (i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"),
                len(messages),
            )
        else:  # after the system prompt: the leading system messages
            at = 0
            while at < len(messages) and messages[at].get("role") in ("system", "developer"):
                at += 1
        return [*messages[:at], note, *messages[at:]]

    # --------------------------------------------------------------- memory

    def _trim(self, body: dict[str, Any], budget: int) -> Trimmed | None:
        """The body's messages cut to `budget` tokens (`context_budget.trim`), or None."""
        return trim(
            body["messages"],
            budget,
            for_model(body.get("model")),
            recall_chars=int_setting(self.host.settings, RECALL.recall_budget_chars),
            memory_share=self.settings.context_memory_share,
        )

    async def _prepare(
        self, identity: ChatIdentity, conv: Conversation, trimmed: Trimmed | None = None
    ) -> Prepared:
        self.memory.note(identity)
        synced = await self.memory.sync(identity.chat_id, conv)
        if conv.last_user() < 0:
            return Prepared(synced, "")
        # the block leaves out the events of every message the forwarded request carries
        window = self.memory.window(identity.chat_id, conv, synced, trimmed)
        outcome = await self.memory.recall(identity.chat_id, window=window)
        block = outcome.prompt.strip() if outcome is not None else ""
        return Prepared(synced, block, outcome)

    async def _store(
        self,
        chat_id: str,
        step: asyncio.Future[Prepared],
        conv: Conversation,
        answer: str | None,
        lock: asyncio.Lock,
        sent: asyncio.Event | None = None,
    ) -> None:
        """After the response (`sent`, when given, is set once its last byte went; a client
        gone first leaves it unset, and the wait ends after `SENT_GRACE_S`) and after the memory
        step (`step`, which may have run past its timeout): add the answer, extract every new
        message, release the chat. A step that failed is reconciled again first, so the sent
        messages and the answer are stored whatever it did."""
        try:
            if sent is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(sent.wait(), SENT_GRACE_S)
            try:
                await step  # a step past the timeout is still running: it ends first
            except Exception:  # the memory step failed: the turn is stored all the same
                try:
                    await self.memory.sync(chat_id, conv)  # the sent messages not stored yet
                except Exception as exc:
                    log.warning("proxy: chat %r: storing the turn failed: %s", chat_id, exc)
                    await self.memory.extract_pending(chat_id)  # what it did add
                    return
            if answer is not None:
                name, text = _answer_speaker(conv, conv.prefill + answer)
                self.memory.add_answer(chat_id, text, name)
            await self.memory.extract_pending(chat_id)
        finally:
            lock.release()


def _encoded(body: dict[str, Any]) -> bytes:
    """The body for the upstream as UTF-8 JSON: orjson (a 10k-message history in ~0.5 ms,
    against ~6 ms for `json.dumps`); `json` for what orjson refuses (integers past 64 bits)."""
    try:
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _signal(sent: asyncio.Event) -> BackgroundTask:
    """Sets `sent` once the response is sent (Starlette runs a response's background task
    after its last byte)."""

    async def done() -> None:
        sent.set()

    return BackgroundTask(done)


def _answer_speaker(conv: Conversation, text: str) -> tuple[str, str]:
    """The answer's speaker and text as the front end will send it back: the last assistant's
    ``name``, or its ``Name: `` prefix put in front of the text (so the next request matches)."""
    for role, raw, sent in zip(
        reversed(conv.roles), reversed(conv.raw), reversed(conv.texts), strict=True
    ):
        if role != "assistant":
            continue
        name = speaker(raw, sent)
        if name and not raw.get("name") and not text.startswith(f"{name}: "):
            return name, f"{name}: {text.lstrip()}"
        return name, text
    return "", text


def _failure(step: asyncio.Future[Any]) -> str:
    """One line for a failed or slow memory step (the exception's type and first line; header-
    safe text)."""
    if not step.done():
        return "timed out (proxy_memory_timeout_s)"
    exc = step.exception()
    first = str(exc).splitlines()[0][:160] if str(exc) else ""
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return text.encode("ascii", "replace").decode("ascii")
