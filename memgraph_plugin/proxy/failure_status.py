"""HTTP answers for the failures a write can meet on the server: storage that cannot take it
and a chat another process holds. Used by the JSON memory API, the proxy and the explorer's edit
routes, so each says the same status and code.

- a full disk (``STORAGE_FULL``) or a data dir that cannot be written (``STORAGE_READ_ONLY``):
  507 Insufficient Storage;
- another writer committed the chat's graph first (``CONFLICT``): 409, retry;
- any other storage failure (``STORAGE_DAMAGED``, unreachable storage, ...): 503;
- a chat another process holds past ``chat_lock_timeout_s`` (``CHAT_BUSY``): 503 with
  ``Retry-After``.

The body is ``{"error": message, "code": CODE}`` (the proxy's routes wrap it in OpenAI's error
shape); the message is the storage error's one line, never a trace.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from host.chats.chat_lock import ChatBusy
from memgraph_plugin.storage.errors import StorageError
from memgraph_plugin.storage.failures import storage_failure

from .guard.access_keys import SCOPE_KEY

__all__ = [
    "busy_body", "busy_completion", "failure_of", "storage_answer", "storage_message",
    "storage_status",
]  # fmt: skip

#: status per storage error code (any other: 503)
STATUS = {"STORAGE_FULL": 507, "STORAGE_READ_ONLY": 507, "CONFLICT": 409}
#: seconds a client is told to wait before retrying a busy chat
RETRY_AFTER_S = 1


def failure_of(exc: BaseException) -> StorageError | None:
    """The `StorageError` `exc` is or stands for (a raw ``OSError`` of a full disk or a
    read-only folder, from a chat file), or None for any other exception."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, OSError):
        return storage_failure(exc)
    return None


def storage_status(error: StorageError) -> int:
    """The HTTP status of a storage error (see the module)."""
    return STATUS.get(str(getattr(error, "code", "")), 503)


def storage_message(error: StorageError) -> str:
    """The error's one-line message, without the code prefix `MemoryGraphError` adds."""
    message = getattr(error, "message", "") or str(error)
    return str(message).splitlines()[0] if message else type(error).__name__


def storage_answer(exc: BaseException) -> JSONResponse | None:
    """The JSON answer to a storage failure (`failure_of`), or None for any other exception
    (the caller raises it again)."""
    error = failure_of(exc)
    if error is None:
        return None
    answer = {"error": storage_message(error), "code": error.code}
    return JSONResponse(answer, status_code=storage_status(error))


def busy_body(exc: ChatBusy) -> tuple[dict[str, Any], dict[str, str]]:
    """The body and headers of a 503 for a busy chat."""
    body: dict[str, Any] = {"error": str(exc), "code": exc.code, "chat": exc.chat_id}
    if exc.holder is not None:
        body["holder_pid"] = exc.holder
    return body, {"retry-after": str(RETRY_AFTER_S)}


async def busy_completion(request: Request, exc: Exception) -> JSONResponse:
    """The app's answer to a `ChatBusy` a proxied completion raised: a 503 in OpenAI's error
    shape (the SDKs retry it after ``Retry-After``)."""
    assert isinstance(exc, ChatBusy)
    body, headers = busy_body(exc)
    access = request.scope.get(SCOPE_KEY)  # the chat named by its id in the key's namespace
    if access is not None and exc.chat_id:
        shown = access.scope.external(exc.chat_id)
        body.update(chat=shown, error=str(body["error"]).replace(exc.chat_id, shown))
    error = {"message": body.pop("error"), "type": "chat_busy", **body}
    return JSONResponse({"error": error}, status_code=503, headers=headers)
