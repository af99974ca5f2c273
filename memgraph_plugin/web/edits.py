"""The explorer's write routes: a person corrects the memory.

Each edit is ONE commit of kind ``edit`` made through the service (the chat's write lock, the
one batch pipeline, persisted, ``memgraph_commit`` fired), so ``history`` lists it and the
page's live view redraws on it; ``POST .../undo`` rolls the chat back to the version before an
edit. Who may write:

- every write needs the server's token in the ``X-Memgraph-Token`` header (``serve`` prints it
  at start, or takes the ``serve_token`` setting), or, on a server with keys, a key that is not
  read-only (`proxy.guard.access.write_refusal`; a read-only key's write is a 403); a key reaches
  its namespace's chats only (another's is a 404 as a chat that does not exist); there is no cookie
  authority, so a foreign page cannot ride on a browser's session (no cross-site request
  forgery);
- a cross-site request (its ``Origin`` or ``Sec-Fetch-Site``), a body that is not JSON and a
  body over the size limit are refused before any route runs (`request_guard`);
- the ``Host`` header is checked by the app (`app.allowed_hosts`: DNS rebinding);
- ``serve --read-only`` mounts none of these routes.

A storage failure is a JSON answer with its code: 507 for a full disk or a read-only data dir,
409 when another writer committed the chat first, 503 otherwise (`proxy.failure_status`); the
edit's commit is not made then.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from host.chats.chat_ids import ChatIdError
from memgraph_plugin.proxy.failure_status import storage_answer
from memgraph_plugin.proxy.guard.access import TOKEN_HEADER, access_of, write_refusal
from memgraph_plugin.proxy.request.json_body import TooDeep, decoded_off_loop
from memgraph_plugin.settings_keys import HTTP

TOKEN_SETTING = HTTP.serve_token
RECENT_EDITS = 20

__all__ = ["TOKEN_HEADER", "TOKEN_SETTING", "EditRoutes", "new_token"]


def new_token() -> str:
    """A random write token (printed by ``serve`` when ``serve_token`` is unset)."""
    return secrets.token_urlsafe(24)


class EditError(Exception):
    """A refused edit: HTTP status, message and (for a bad value) the field it is about."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field


async def _body_of(raw: bytes) -> dict[str, Any]:
    try:
        body = await decoded_off_loop(raw or b"{}")
    except TooDeep as exc:
        raise EditError(400, f"the body is not usable: {exc}") from None
    except ValueError:
        raise EditError(400, "the body must be JSON") from None
    if not isinstance(body, dict):
        raise EditError(400, "the body must be a JSON object")
    return body


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise EditError(400, f"{key}: a non-empty string is required", field=key)
    return value


class EditRoutes:
    """The write routes over the host's `MemoryGraph` (`service`), guarded by `token` (or, on
    a server with keys, a key that may write)."""

    def __init__(self, service: Any, token: str) -> None:
        if not token:
            raise ValueError("the explorer's write routes need a token")
        self.service = service
        self.token = token

    def routes(self) -> list[Route]:
        base = "/api/chats/{chat:path}"
        return [
            Route(f"{base}/nodes/{{node}}/edit", self.edit, methods=["POST"]),
            Route(f"{base}/nodes/{{node}}/archive", self.archive, methods=["POST"]),
            Route(f"{base}/nodes/{{node}}/restore", self.restore, methods=["POST"]),
            Route(f"{base}/nodes/{{node}}/pin", self.pin, methods=["POST", "DELETE"]),
            Route(f"{base}/nodes/{{node}}/merge", self.merge, methods=["POST"]),
            Route(f"{base}/edges", self.edges, methods=["POST", "DELETE"]),
            Route(f"{base}/undo", self.undo, methods=["POST"]),
            Route(f"{base}/edits", self.recent, methods=["GET"]),
            Route("/api/edit-access", self.access, methods=["GET"]),
        ]

    async def access(self, request: Request) -> JSONResponse:
        """What the page asks to know whether to show its edit controls (a read-only server
        answers ``{"writable": false}``, `app.build_app`). Never the token."""
        return JSONResponse({"writable": True, "header": TOKEN_HEADER})

    # ------------------------------------------------------------------ guard

    def _check(self, request: Request) -> None:
        """401 without the right token (or key), 403 for a read-only key."""
        refusal = write_refusal(request.headers, self.token, access_of(request))
        if refusal is not None:
            raise EditError(*refusal)

    async def _guarded(self, request: Request, run: Any) -> JSONResponse:
        try:
            self._check(request)
            body = await _body_of(await request.body())
            return JSONResponse(await run(_chat_of(request), body))
        except UnknownEditedChat:
            return _unknown_answer(request)
        except EditError as exc:
            out: dict[str, Any] = {"error": str(exc)}
            if exc.field is not None:
                out["field"] = exc.field
            return JSONResponse(out, status_code=exc.status)
        except Exception as exc:
            if (answer := storage_answer(exc)) is None:
                raise
            return answer

    async def _apply(self, chat: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
        """The ops as one batch and one ``edit`` commit (fired); 422 naming the field when the
        batch rejects an op, 404 for an unknown chat; nothing is written then."""
        from memgraph_plugin.engine.write.batch import apply_batch

        def change(store: Any, limits: Any) -> Any:
            return apply_batch(
                store, ops, schema=store.schema, limits=limits, keep_node_seq=True
            )

        return await self._change(chat, change)

    async def _change(self, chat: str, change: Callable[[Any, Any], Any]) -> dict[str, Any]:
        """`change(store, limits)` (a `BatchResult`) under the chat's write lock, as one
        ``edit`` commit (fired); a rejection is a 422 and writes nothing."""
        from memgraph_plugin.engine.model.values import Limits
        from memgraph_plugin.errors import MemoryGraphError
        from memgraph_plugin.versions.chat_versions import checked_chat_id

        service = self.service
        try:
            checked_chat_id(chat)
        except MemoryGraphError as exc:
            raise EditError(400, str(exc)) from None
        if not await service.has_graph(chat):
            raise UnknownEditedChat()
        async with service.lock(chat):
            store = await service.store_for(chat)
            limits = Limits.from_settings(service.settings)
            result = change(store, limits)
            if result.rejected and not result.applied:  # one op each: nothing changed
                store_error = result.rejected[0].error
                raise _rejected(store_error.code, store_error.message)
            commit = await service.commit(chat, store, result, "edit", journal_kind="edit")
        if commit is None:
            return {"ok": True, "changed": False}
        await service.fire_commit(chat, commit)
        return {"ok": True, "changed": True, "version": commit.version}

    # ------------------------------------------------------------------ routes

    async def edit(self, request: Request) -> JSONResponse:
        """``{"title"?: str, "fields"?: {name: value}, "clear"?: [name]}``."""
        node = request.path_params["node"]

        async def run(chat: str, body: dict[str, Any]) -> dict[str, Any]:
            op: dict[str, Any] = {"op": "edit", "node_id": node}
            if "title" in body:
                if not isinstance(body["title"], str) or not body["title"].strip():
                    raise EditError(422, "title: a non-empty string is required", field="title")
                op["title"] = body["title"]
            fields = body.get("fields")
            if fields is not None:
                if not isinstance(fields, dict):
                    raise EditError(422, "fields: an object is required", field="fields")
                op["set_fields"] = fields
            clear = body.get("clear")
            if clear is not None:
                if not isinstance(clear, list) or not all(isinstance(c, str) for c in clear):
                    raise EditError(422, "clear: a list of field names", field="clear")
                op["clear_fields"] = clear
            if len(op) == 2:
                raise EditError(400, "nothing to edit: give title, fields or clear")
            return await self._apply(chat, [op])

        return await self._guarded(request, run)

    async def archive(self, request: Request) -> JSONResponse:
        """Archive (forget) a node; it leaves recall and the drawn graph, undo restores it."""
        node = request.path_params["node"]

        async def run(chat: str, body: dict[str, Any]) -> dict[str, Any]:
            return await self._apply(chat, [{"op": "delete", "node_id": node}])

        return await self._guarded(request, run)

    async def restore(self, request: Request) -> JSONResponse:
        """Restore an archived node (it comes back to recall and the graph)."""
        from memgraph_plugin.engine.write.curation import restore_node

        node = request.path_params["node"]

        async def run(chat: str, body: dict[str, Any]) -> dict[str, Any]:
            return await self._change(chat, lambda store, _: restore_node(store, node))

        return await self._guarded(request, run)

    async def pin(self, request: Request) -> JSONResponse:
        """POST pins (recall injects the node every turn), DELETE unpins."""
        from memgraph_plugin.engine.write.curation import set_pinned

        node = request.path_params["node"]
        pinned = request.method == "POST"

        async def run(chat: str, body: dict[str, Any]) -> dict[str, Any]:
            return await self._change(chat, lambda store, _: set_pinned(store, node, pinned))

        return await self._guarded(request, run)

    async def merge(self, request: Request) -> JSONResponse:
        """``{"absorb": id}``: that node merges into this one (edges follow, its names become
        aliases, it is archived)."""
        from memgraph_plugin.engine.write.curation import merge_nodes

        node = request.path_params["node"]

        async def run(chat: str, body: dict[str, Any]) -> dict[str, Any]:
            absorb = _text(body, "absorb")
            return await self._change(
                chat, lambda store, limits: merge_nodes(store, node, absorb, limits=limits)
            )

        return await self._guarded(request, run)

    async def edges(self, request: Request) -> JSONResponse:
        """POST adds, DELETE removes ``{"source", "target", "relation"}`` (source to target)."""
        adding = request.method == "POST"

        async def run(chat: str, body: dict[str, Any]) -> dict[str, Any]:
            source, target = _text(body, "source"), _text(body, "target")
            relation = _text(body, "relation")
            if adding:
                link = {"target_node_id": target, "relation": relation, "direction": "outgoing"}
                op = {"op": "link_upsert", "source_node_id": source, "links": [link]}
            else:
                op = {
                    "op": "link_delete",
                    "source_node_id": source,
                    "target_node_id": target,
                    "relation": relation,
                    "direction": "outgoing",
                }
            return await self._apply(chat, [op])

        return await self._guarded(request, run)

    async def undo(self, request: Request) -> JSONResponse:
        """``{"version": V}``: V must be an ``edit`` commit; the chat goes back to V - 1 (as a
        new ``rollback`` commit; later commits are undone with it)."""

        async def run(chat: str, body: dict[str, Any]) -> dict[str, Any]:
            version = body.get("version")
            if isinstance(version, bool) or not isinstance(version, int):
                raise EditError(422, "version: a whole number is required", field="version")
            kinds = {r.version: r.kind for r in await self.service.history(chat)}
            if kinds.get(version) != "edit":
                raise EditError(422, f"version {version} is not an edit", field="version")
            commit = await self.service.rollback(chat, version=version - 1)
            return {"ok": True, "version": None if commit is None else commit.version}

        return await self._guarded(request, run)

    async def recent(self, request: Request) -> JSONResponse:
        """The chat's newest edits (and the rollbacks that undid them), newest first."""
        try:
            records = await self.service.history(_chat_of(request))
        except EditError as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        rows = [
            {"version": r.version, "kind": r.kind, "nodes": list(r.node_ids), "at": r.created_at}
            for r in records
            if r.kind in ("edit", "rollback")
        ]
        return JSONResponse({"edits": rows[::-1][:RECENT_EDITS]})


def _chat_of(request: Request) -> str:
    """The stored id of the path's chat in the key's namespace (`EditError` 400 for an id that
    cannot be one)."""
    try:
        return access_of(request).scope.internal(request.path_params["chat"])
    except ChatIdError as exc:
        raise EditError(400, str(exc)) from None


class UnknownEditedChat(EditError):
    """The chat has no graph (answered naming the chat as the path does)."""

    def __init__(self) -> None:
        super().__init__(404, "unknown chat")


def _unknown_answer(request: Request) -> JSONResponse:
    """404 ``unknown_chat`` naming the chat as the caller did: another namespace's chat is
    answered as a chat that does not exist."""
    chat = request.path_params["chat"]
    return JSONResponse({"error": f"unknown chat {chat!r}", "code": "unknown_chat"}, 404)


def _rejected(code: str, message: str) -> EditError:
    """A batch rejection as a 422, naming the field when the message starts with one."""
    field = None
    head = re.sub(r"^op \d+: ", "", message).split(":", 1)[0].strip()
    if head and " " not in head:
        field = head.removeprefix("fields.").removeprefix("set_fields.")
    return EditError(422, f"{code}: {message}", field=field)
