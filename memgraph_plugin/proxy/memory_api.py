"""The JSON memory API (``docs/http-api.md``) for front ends that call rather than proxy:

- ``GET /api/chats``: every chat with its message count, last activity and id source
- ``POST /api/chats/{id}/messages``: add one message or many (each extracted, in order)
- ``POST /api/chats/{id}/recall``: the block, the items and why each was chosen (the question is
  not stored)
- ``POST /api/chats/{id}/forget`` with ``{"from": index}``
- ``POST /api/chats/{id}/fork`` with ``{"from": SRC, "upto"?: seq}``: a new chat starts with chat
  SRC's memory (the proxy's ``X-Memgraph-Fork-From`` for front ends that call)
- ``GET /api/chats/{id}/history``

With keys, every route needs one (`access.AccessGuard`), and a key reaches its namespace's
chats only: the path's chat id is the namespace's (`host.chats.namespaces.ChatScope`), another
namespace's chat is a 404 ``unknown_chat`` as a chat that does not exist, and the list shows the
namespace's chats. The writes (messages, forget, fork) need a write credential
(`access.write_refusal`: a key that is not read-only, or with no keys the server's token; a
read-only key's write is a 403), and a read-only server mounts none of them. Origin, body size
and content type are checked before any route runs (``web/request_guard.py``).

Chat ids go through the one chat-id rule. Reads never make a chat: ``recall`` and ``history``
of a chat with neither messages nor commits answer 404 (``"code": "unknown_chat"``), as does
``forget``, and the chat is not listed afterwards. A chat's calls are serialised with its proxied
requests (the same lock, held across the processes on the data dir), so a read sees every answer
stored before it. A storage failure is a JSON answer with its code (`failure_status`: 507 for a
full disk or a read-only data dir), and a chat another process holds too long a 503
``CHAT_BUSY``; a failed add keeps no message it did not report as stored.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from host.chats.chat_ids import ChatIdError
from host.chats.chat_lock import ChatBusy
from host.chats.namespaces import ChatScope
from host.echoed import capped, shown
from host.settings.setting_values import int_setting
from memgraph_plugin.recall.prompt_window import PromptWindow
from memgraph_plugin.settings_keys import RECALL

from .failure_status import (
    busy_body,
    failure_of,
    storage_answer,
    storage_message,
    storage_status,
)
from .guard.access import access_of, write_refusal
from .ledger.chat_identity import ChatIdentity
from .ledger.chat_memory import ChatMemory, NotStored, read_sources
from .request.context_budget import trim
from .request.conversation import content_text
from .request.json_body import TooDeep, decoded_off_loop
from .request.token_count import for_model
from .settings import DEFAULT_MEMORY_SHARE

log = logging.getLogger(__name__)

API_SOURCE = "api"
HISTORY_LIMIT = 200  # messages one history call returns by default


class ApiError(Exception):
    """A request the API answers with 4xx: status, a message saying what was wrong, and a code
    for a front end to tell cases apart (optional)."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def graph_storage(service: Any) -> Any | None:
    """The memory graph's database handle (`LanceStorage`), or None when the graph is not
    running or keeps no storage (its URI is unusable: the reason was logged when it opened)."""
    try:
        return getattr(getattr(service, "persistence", None), "storage", None)
    except Exception as exc:  # noqa: BLE001 - a bad storage URI connects here
        log.warning("memory API: no storage: %s: %s", type(exc).__name__, exc)
        return None


def stored_versions(storage: Any) -> dict[str, int]:
    """chat id -> its newest commit version, for every chat with commits (the journal)."""
    if storage is None:
        return {}
    return {chat: int(storage.latest_version_sync(chat)) for chat in storage.chats_sync()}


def chat_rows(
    host: Any,
    versions: Callable[[], Mapping[str, int]] | None = None,
    scope: ChatScope | None = None,
) -> list[dict]:
    """Every chat of the data dir (of `scope`'s namespace only, by the ids it knows them by):
    its messages, or commits (an imported graph with no messages is a chat too): id, messages,
    last activity (Unix time of its file), where its id came from, and its graph's newest commit
    version (`versions`; chats with commits first)."""
    scope = scope or ChatScope.everything()
    sources = read_sources(Path(host.data_dir) / "proxy")
    committed = dict(versions()) if versions is not None else {}
    rows = []
    for chat_id in scope.visible(sorted(set(host.chat_ids()) | set(committed))):
        chat = host.chat(chat_id)
        try:
            stat = chat.path.stat()
            last = stat.st_mtime
        except OSError:
            last = None
        rows.append(
            {
                "id": scope.external(chat_id),
                "version": committed.get(chat_id, 0),
                "messages": _count_messages(chat),
                "last_activity": last,
                "source": sources.get(chat_id, {}).get("source", "host"),
            }
        )
    rows.sort(key=lambda r: (r["version"] == 0, r["id"]))
    return rows


def _count_messages(chat: Any) -> int:
    """The chat's message count (the loaded chat's when no other process changed its file
    since, else the file's lines: no parse)."""
    if chat.read_yet and not chat.changed_elsewhere():
        return len(chat)
    try:
        data = chat.path.read_bytes()
    except OSError:
        return 0
    return max(0, data.count(b"\n") - 1)


def message_json(message: Any) -> dict[str, Any]:
    row = {"index": message.index, "seq": message.seq, "role": message.role, "text": message.text}
    if message.name:
        row["name"] = message.name
    return row


def recall_json(outcome: Any) -> dict[str, Any]:
    """A recall as the API answers it: the block, and each item with why it was chosen."""
    if outcome is None:
        return {"block": "", "items": [], "available": False}
    why = outcome.why
    by_person = set(getattr(outcome.trace, "pinned_ids", ()))
    items = []
    for view in outcome.injected:
        inclusion = why.get(view.id)
        pinned = view.id in outcome.always_inject_ids
        items.append(
            {
                "id": view.id,
                "type": view.type,
                "title": view.title,
                "pinned": pinned,
                "why": _why(inclusion, view.id in by_person),
                "score": None if inclusion is None else inclusion.score,
            }
        )
    return {"block": outcome.prompt, "items": items, "available": True, "query": outcome.query}


def _why(inclusion: Any, pinned_by_person: bool) -> str:
    """Why an item is injected: ``pinned`` (a person pinned it), ``always injected`` (the
    current scene), or the recall's reason."""
    if pinned_by_person:
        return "pinned"
    return "always injected" if inclusion is None else str(inclusion.describe())


def stored_window(
    host: Any, chat_id: str, query: str, budget: int, memory_share: float = DEFAULT_MEMORY_SHARE
) -> tuple[Any, dict[str, Any]] | None:
    """The chat's stored history plus `query`, cut to `budget` tokens: the recall window
    and what a front end would send (``messages``, oldest first, the question last)."""
    view = host.chat(chat_id).view()
    sent = [
        {"role": m.role, "content": m.text, **({"name": m.name} if m.name else {})}
        for m in view
        if m.role in ("user", "assistant")
    ]
    indices = [m.index for m in view if m.role in ("user", "assistant")]
    sent.append({"role": "user", "content": query})
    trimmed = trim(
        sent,
        budget,
        for_model(None),
        recall_chars=int_setting(host.settings, RECALL.recall_budget_chars),
        memory_share=memory_share,
    )
    if trimmed is None:
        return None
    kept_from = indices[trimmed.first_kept] if trimmed.first_kept < len(indices) else len(view)
    window = PromptWindow(trimmed.block_chars, kept_from, trimmed.dropped, trimmed.tokens_saved)
    return window, {
        "messages": trimmed.messages,
        "dropped": trimmed.dropped,
        "tokens": trimmed.tokens_kept,
        "tokens_saved": trimmed.tokens_saved,
        "counted": trimmed.counter,
    }


class MemoryApi:
    """The API's endpoints over one host's `ChatMemory`."""

    def __init__(
        self,
        host: Any,
        memory: ChatMemory,
        *,
        token: str | None = None,
        read_only: bool = False,
        versions: Callable[[], Mapping[str, int]] | None = None,
        memory_share: float = DEFAULT_MEMORY_SHARE,
    ) -> None:
        """`token`: the server's write token (`access.write_refusal`); `read_only`: mount no
        write route."""
        self.host = host
        self.memory = memory
        self.token = token
        self.read_only = read_only
        self.versions = versions or self._stored_versions
        self.memory_share = memory_share  # proxy_context_memory_share, for a recall's window

    def routes(self) -> list[Route]:
        base = "/api/chats/{chat:path}"
        routes = [
            Route("/api/chats", self._guard(self.list_chats), methods=["GET"]),
            Route(f"{base}/recall", self._guard(self.recall), methods=["POST"]),
            Route(f"{base}/history", self._guard(self.history), methods=["GET"]),
        ]
        if not self.read_only:
            routes += [
                Route(f"{base}/messages", self._guard(self.add, write=True), methods=["POST"]),
                Route(f"{base}/forget", self._guard(self.forget, write=True), methods=["POST"]),
                Route(f"{base}/fork", self._guard(self.fork, write=True), methods=["POST"]),
            ]
        return routes

    def _guard(
        self, endpoint: Callable[[Request], Any], *, write: bool = False
    ) -> Callable[[Request], Any]:
        async def guarded(request: Request) -> Any:
            access = access_of(request)
            if write and (refusal := write_refusal(request.headers, self.token, access)):
                status, problem = refusal
                code = "read_only_key" if status == 403 else "unauthorized"
                return JSONResponse({"error": problem, "code": code}, status_code=status)
            try:
                return JSONResponse(await endpoint(request))
            except ApiError as exc:  # a client's value it repeats is cut short (`host/echoed.py`)
                answer = {"error": capped(str(exc)), **({"code": exc.code} if exc.code else {})}
                return JSONResponse(answer, status_code=exc.status)
            except ChatIdError as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
            except ChatBusy as exc:
                body, headers = busy_body(exc)
                return JSONResponse(_as_given(body, request), status_code=503, headers=headers)
            except NotStored as exc:
                answer = _not_stored(exc)
                return JSONResponse(_as_given(answer[0], request), status_code=answer[1])
            except Exception as exc:
                if (answer := storage_answer(exc)) is None:
                    raise
                return answer

        return guarded

    def _stored_versions(self) -> dict[str, int]:
        return stored_versions(graph_storage(self.memory.pipeline.service))

    async def _require_chat(self, chat_id: str, shown_id: str) -> None:
        """`ApiError` 404 for a chat with neither messages nor commits (asking makes none);
        `shown_id`: the id the caller gave (another namespace's chat is answered the same)."""
        if self.host.has_chat(chat_id):
            return
        storage = graph_storage(self.memory.pipeline.service)
        if storage is not None and await asyncio.to_thread(storage.latest_version_sync, chat_id):
            return
        raise ApiError(
            404,
            f"unknown chat {shown_id!r}: it has no messages and no commits in this data dir",
            "unknown_chat",
        )

    # ---------------------------------------------------------------- endpoints

    async def list_chats(self, request: Request) -> dict[str, Any]:
        scope = access_of(request).scope
        return {"chats": await asyncio.to_thread(chat_rows, self.host, self.versions, scope)}

    async def add(self, request: Request) -> dict[str, Any]:
        shown_id, chat_id = _chat_of(request)
        body = await _json(request)
        raw = body.get("messages", [body]) if isinstance(body, dict) else body
        if not isinstance(raw, list) or not raw:
            raise ApiError(400, "send a message object or {'messages': [...]} with at least one")
        items = [_message_item(m, i) for i, m in enumerate(raw)]
        self.memory.note(ChatIdentity(chat_id, API_SOURCE))
        async with self.memory.lock(chat_id):
            added = await self.memory.add_messages(chat_id, items)
            total = len(self.host.chat(chat_id))
        return {"chat": shown_id, "added": [message_json(m) for m in added], "messages": total}

    async def recall(self, request: Request) -> dict[str, Any]:
        shown_id, chat_id = _chat_of(request)
        body = await _json(request)
        query = body.get("query") if isinstance(body, dict) else None
        if not isinstance(query, str) or not query.strip():
            raise ApiError(400, "'query' must be a non-empty string")
        budget = body.get("context_tokens", 0) if isinstance(body, dict) else 0
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
            raise ApiError(400, "'context_tokens' must be a whole number of tokens >= 0")
        await self._require_chat(chat_id, shown_id)
        started = time.perf_counter()
        async with self.memory.lock(chat_id):
            window = (
                stored_window(self.host, chat_id, query, budget, self.memory_share)
                if budget
                else None
            )
            outcome = await self.memory.pipeline.preview(
                chat_id, query, window=window[0] if window else None
            )
        answer = recall_json(outcome)
        if window is not None:
            answer["context"] = window[1]
        answer.update(chat=shown_id, ms=round((time.perf_counter() - started) * 1000, 2))
        return answer

    async def forget(self, request: Request) -> dict[str, Any]:
        shown_id, chat_id = _chat_of(request)
        body = await _json(request)
        index = body.get("from") if isinstance(body, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise ApiError(
                400, f"'from' must be a message index (an integer >= 0), got {shown(index)}"
            )
        await self._require_chat(chat_id, shown_id)
        async with self.memory.lock(chat_id):
            removed = await self.memory.forget(chat_id, index)
            total = len(self.host.chat(chat_id))
        return {"chat": shown_id, "removed": removed, "messages": total}

    async def fork(self, request: Request) -> dict[str, Any]:
        """Start the path's chat with chat ``from``'s graph (as of seq ``upto``): 409 when the
        chat already has messages or a graph, 400 for a source that cannot be forked."""
        from memgraph_plugin.errors import MemoryGraphError

        shown_id, chat_id = _chat_of(request)
        body = await _json(request)
        src = body.get("from") if isinstance(body, dict) else None
        if not isinstance(src, str) or not src.strip():
            raise ApiError(400, "'from' must be the id of the chat to fork")
        shown_src, src = src.strip(), access_of(request).scope.internal(src.strip())
        upto = body.get("upto")
        if upto is not None and (not isinstance(upto, int) or isinstance(upto, bool) or upto < 0):
            raise ApiError(400, "'upto' must be a message seq (an integer >= 0)")
        service = self.memory.pipeline.service
        if service is None:
            raise ApiError(503, "the memory graph is not running")
        self.memory.note(ChatIdentity(chat_id, API_SOURCE))
        async with self.memory.lock(chat_id):
            if self.host.chat(chat_id).messages or await service.has_graph(chat_id):
                raise ApiError(409, f"chat {shown_id!r} already has memory: fork into a new chat")
            try:
                commit = await service.fork(src, chat_id, upto)
            except MemoryGraphError as exc:
                if exc.code != "BAD_ARGS":
                    raise  # a storage failure: the guard answers with its code
                said = str(exc.message or exc).replace(repr(src), repr(shown_src))
                raise ApiError(400, f"'from': {said}") from None
        return {"chat": shown_id, "forked_from": shown_src, "version": commit.version}

    async def history(self, request: Request) -> dict[str, Any]:
        shown_id, chat_id = _chat_of(request)
        since = _int_param(request, "since", 0)
        limit = _int_param(request, "limit", HISTORY_LIMIT)
        await self._require_chat(chat_id, shown_id)
        async with self.memory.lock(chat_id):  # after the answers still being stored
            view = self.host.chat(chat_id).view()
            rows = [message_json(m) for m in view[since : since + limit]]
            total = len(view)
        return {"chat": shown_id, "messages": rows, "total": total, "since": since}


def _chat_of(request: Request) -> tuple[str, str]:
    """The path's chat: the id the caller gave, and the stored id in the caller's namespace."""
    given = request.path_params["chat"]
    return given, access_of(request).scope.internal(given)


def _as_given(body: dict[str, Any], request: Request) -> dict[str, Any]:
    """`body` naming its chat as the request did (not by its stored id in a namespace)."""
    stored, given = body.get("chat"), request.path_params.get("chat")
    if isinstance(stored, str) and given is not None and stored != given:
        body = {**body, "chat": given, "error": str(body["error"]).replace(stored, given)}
    return body


def _not_stored(exc: NotStored) -> tuple[dict[str, Any], int]:
    """A failed add: the storage failure's status and code, and the messages kept."""
    error = failure_of(exc.cause)
    if error is None:
        log.error("chat %r: adding messages failed", exc.chat_id, exc_info=exc.cause)
    status = storage_status(error) if error is not None else 500
    answer: dict[str, Any] = {
        "error": storage_message(error) if error is not None else "the messages were not stored",
        "code": error.code if error is not None else "NOT_STORED",
        "chat": exc.chat_id,
        "stored": [message_json(m) for m in exc.stored],
        "messages": exc.total,
    }
    return answer, status


def _message_item(raw: Any, position: int) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ApiError(400, f"messages[{position}] must be an object")
    role = raw.get("role")
    if role not in ("user", "assistant"):
        raise ApiError(
            400, f"messages[{position}].role must be 'user' or 'assistant', got {shown(role)}"
        )
    text = raw.get("text", raw.get("content"))
    text = content_text(text).strip() if text is not None else ""
    if not text:
        raise ApiError(400, f"messages[{position}] needs a non-empty 'text' (or 'content')")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise ApiError(400, f"messages[{position}].name must be a string")
    return {"role": role, "text": text, "name": name}


async def _json(request: Request) -> Any:
    try:
        return await decoded_off_loop(await request.body() or b"{}")
    except TooDeep as exc:
        raise ApiError(400, f"the body is not usable: {capped(str(exc))}") from None
    except ValueError as exc:
        raise ApiError(400, f"the body is not JSON: {capped(str(exc))}") from None


def _int_param(request: Request, name: str, default: int) -> int:
    value = request.query_params.get(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ApiError(400, f"?{name} must be an integer, got {shown(value)}") from None
    if number < 0:
        raise ApiError(400, f"?{name} must be >= 0, got {number}")
    return number
