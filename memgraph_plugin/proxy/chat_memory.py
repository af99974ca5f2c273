"""The proxy's side of the memory: one `ChatMemory` per host keeps, per chat, the reconciliation
ledger and a lock, and drives the host's turn pipeline (`turn/pipeline.py`) so a proxied chat
builds the same memory as a live one: messages go into the host's chat, each is extracted by
`TurnPipeline.extract`, a forget goes through `TurnPipeline.forget_messages_from`, recall is
`TurnPipeline.recall`. It also keeps where each chat id came from and the memory failures.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from host.chats.jsonl import read_objects
from memgraph_plugin.recall.prompt_window import PromptWindow
from memgraph_plugin.recall.status import PROXY_WARNINGS
from memgraph_plugin.turn.message_extraction import already_extracted
from memgraph_plugin.turn.pipeline import pipeline_for

from .chat_identity import OPENING_SOURCE, ChatIdentity
from .context_budget import Trimmed
from .conversation import Conversation, speaker
from .reconcile import Ledger, Plan, plan

log = logging.getLogger(__name__)

FOLDER = str(PROXY_WARNINGS.parent)
#: More new messages than this in one request (a front end's existing chat seen for the first
#: time): extracted in blocks of `BLOCK`, one commit each, like a transcript ingest.
BULK = 8
BLOCK = 256
SOURCES_FILE = "chat_sources.jsonl"
WARNINGS_FILE = PROXY_WARNINGS.name


@attrs.frozen
class Synced:
    """What reconciling one request did: the plan, how many stored messages it forgot, and the
    messages it added to the chat (extracted later, off the response path)."""

    plan: Plan
    forgotten: int
    added: tuple[Any, ...]


class ChatMemory:
    """Per-host proxy state; every method that changes a chat expects its `lock` held."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.pipeline = pipeline_for(host)
        self.folder = Path(host.data_dir) / FOLDER
        self._ledgers: dict[str, Ledger] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._sources: dict[str, dict[str, Any]] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._pending: dict[str, list[Any]] = {}  # added to the chat, not extracted yet
        self._recovered: set[str] = set()  # chats whose unextracted tail was looked for
        self.warnings = 0

    # ------------------------------------------------------------------ chats

    def lock(self, chat_id: str) -> asyncio.Lock:
        """Serialises the requests of one chat (different chats run in parallel)."""
        lock = self._locks.get(chat_id)
        if lock is None:
            lock = self._locks[chat_id] = asyncio.Lock()
        return lock

    def ledger(self, chat_id: str) -> Ledger:
        ledger = self._ledgers.get(chat_id)
        if ledger is None:
            ledger = self._ledgers[chat_id] = Ledger(self.host.chat(chat_id).view())
        return ledger

    def sources(self) -> dict[str, dict[str, Any]]:
        """chat id -> {"source", "opening", "time"} for every chat the proxy or API has seen."""
        if self._sources is None:
            self._sources = read_sources(self.folder)
        return self._sources

    def note(self, identity: ChatIdentity) -> None:
        """Remember where a chat's id came from (one line the first time, or when it changes)."""
        known = self.sources().get(identity.chat_id)
        if known is not None and known.get("source") == identity.source:
            return
        row = {"chat_id": identity.chat_id, "source": identity.source,
               "opening": identity.opening, "time": time.time()}  # fmt: skip
        self.sources()[identity.chat_id] = row
        _append_line(self.folder / SOURCES_FILE, row)

    def continued_chat(self, identity: ChatIdentity, conv: Conversation) -> ChatIdentity:
        """A derived id the host has never stored, whose messages are the exact continuation of
        a chat derived from the same system prompt: the front end trimmed the opening out of
        its context window, and the conversation is that chat (else `identity` as it is)."""
        if identity.source != OPENING_SOURCE or len(self.ledger(identity.chat_id)):
            return identity
        best: tuple[float, str] | None = None
        for chat_id, row in self.sources().items():
            if row.get("source") != OPENING_SOURCE or row.get("opening") != identity.opening:
                continue
            ledger = self.ledger(chat_id)
            found = plan(conv.roles, conv.texts, ledger)
            if found.offset > 0 and found.forget_from is None and found.add_from > 0:
                mtime = _mtime(self.host.chat(chat_id).path)
                if best is None or mtime > best[0]:
                    best = (mtime, chat_id)
        if best is None:
            return identity
        return attrs.evolve(identity, chat_id=best[1])

    # --------------------------------------------------------------- messages

    async def sync(self, chat_id: str, conv: Conversation) -> Synced:
        """Bring the chat in line with the sent conversation (`reconcile.plan`): forget from the
        first differing message (one rollback), then append the new messages to the chat."""
        await self.recover(chat_id)
        ledger = self.ledger(chat_id)
        found = plan(conv.roles, conv.texts, ledger)
        forgotten = 0
        if found.forget_from is not None:
            forgotten = await self.forget(chat_id, ledger.indices[found.forget_from])
        chat = self.host.chat(chat_id)
        added = []
        with chat.batched_writes():
            for i in range(found.add_from, len(conv)):
                added.append(self._append(chat_id, conv.roles[i], conv.texts[i], conv.raw[i]))
        return Synced(found, forgotten, tuple(added))

    def _append(self, chat_id: str, role: str, text: str, raw: Mapping[str, Any]) -> Any:
        chat = self.host.chat(chat_id)
        message = chat.add_message(role, text, name=speaker(raw, text))  # type: ignore[arg-type]
        self.ledger(chat_id).append(role, text, message.index)
        self._pending.setdefault(chat_id, []).append(message)
        return message

    def add_answer(self, chat_id: str, text: str, name: str = "") -> Any | None:
        """Append the assistant's complete answer (not extracted yet); None when it is empty."""
        text = text.strip()
        if not text:
            return None
        return self._append(chat_id, "assistant", text, {"name": name})

    async def add_messages(self, chat_id: str, items: Iterable[Mapping[str, Any]]) -> list[Any]:
        """Append messages (role, text, name) and extract each, in order (the JSON API)."""
        await self.recover(chat_id)
        chat = self.host.chat(chat_id)
        with chat.batched_writes():
            added = [self._append(chat_id, i["role"], i["text"], i) for i in items]
        await self.extract_pending(chat_id)
        return added

    async def recover(self, chat_id: str) -> int:
        """Once per chat and process: put back on the pending list the chat's newest messages
        the graph never learnt from (a previous process stored them and stopped before their
        extraction, which runs after the response); returns how many. It walks back from the
        newest message only as far as the first one already extracted."""
        if chat_id in self._recovered:
            return 0
        self._recovered.add(chat_id)
        messages = self.host.chat(chat_id).view()
        if not len(messages):
            return 0
        session = await self.pipeline.open_session(chat_id)
        if session is None:
            return 0
        left: list[Any] = []
        for at in range(len(messages) - 1, -1, -1):
            message = messages[at]
            if message.role not in ("user", "assistant"):
                continue
            if already_extracted(session.store, message):
                break
            left.append(message)
        if left:
            left.reverse()
            pending = self._pending.setdefault(chat_id, [])
            known = {m.index for m in pending}
            pending[:0] = [m for m in left if m.index not in known]
            log.info("proxy: chat %s: %d stored messages not extracted yet", chat_id, len(left))
        return len(left)

    async def extract_pending(self, chat_id: str) -> int:
        """Extract the messages added and not extracted yet, in order, through the turn pipeline
        (as a live chat does); returns how many."""
        pending = self._pending.get(chat_id)
        if not pending:
            return 0
        count = 0
        try:
            if len(pending) <= BULK:
                for message in list(pending):
                    await self.pipeline.extract(chat_id, message)
                    count += 1
                return count
            service = self.pipeline.service  # the service the plugin handed the pipeline
            for start in range(0, len(pending), BLOCK):  # one commit per block, as an ingest
                block = pending[start : start + BLOCK]
                async with service.deferred_commits(chat_id):
                    session = await self.pipeline.open_session(chat_id)
                    for message in block:
                        await self.pipeline.extract(chat_id, message, session=session)
                count += len(block)
        finally:
            del pending[:count]
        return count

    async def forget(self, chat_id: str, index: int) -> int:
        """Forget the chat's messages from chat index `index` on, and what the graph learnt
        from them (`TurnPipeline.forget_messages_from`: one rollback commit)."""
        removed = await self.pipeline.forget_messages_from(chat_id, index)
        pending = self._pending.get(chat_id)
        if pending:
            pending[:] = [m for m in pending if m.index < index]
        ledger = self.ledger(chat_id)
        keep = next((i for i, at in enumerate(ledger.indices) if at >= index), len(ledger))
        ledger.truncate(keep)
        return removed

    async def recall(self, chat_id: str, *, window: PromptWindow | None = None) -> Any:
        """Recall for the chat's last user message (`TurnPipeline.recall`; its trace is kept),
        inside `window` when the request's history was cut to a context budget."""
        return await self.pipeline.recall(chat_id, window=window)

    def window(
        self, chat_id: str, conv: Conversation, synced: Synced, trimmed: Trimmed
    ) -> PromptWindow:
        """The recall window of a request cut to a budget (after `sync`): the chat index of the
        oldest message the forwarded request keeps (sent message i is stored at the ledger's
        ``offset + i``) and the block's budget."""
        first = bisect_left(conv.positions, trimmed.first_kept)
        ledger = self.ledger(chat_id)
        at = synced.plan.offset + first
        kept_from = ledger.indices[at] if first < len(conv) and at < len(ledger) else None
        if kept_from is None:
            kept_from = len(self.host.chat(chat_id))
        return PromptWindow(
            trimmed.block_chars, kept_from, trimmed.dropped, trimmed.tokens_saved
        )

    # ------------------------------------------------------- off the response path

    def later(self, work: Any) -> asyncio.Task[Any]:
        """Run a coroutine after the response (kept until done, failures logged)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log.warning("proxy: storing a turn failed: %s: %s", type(exc).__name__, exc)

    async def drain(self) -> None:
        """Wait for the answers still being stored (shutdown, tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # ---------------------------------------------------------------- failures

    def warn(self, chat_id: str, reason: str) -> None:
        """Count a request forwarded without memory (shown by `memgraph-host status`)."""
        self.warnings += 1
        _append_line(
            self.folder / WARNINGS_FILE, {"chat_id": chat_id, "reason": reason, "time": time.time()}
        )


def read_sources(folder: Path) -> dict[str, dict[str, Any]]:
    """The chat-source lines of a data dir's proxy folder (the newest line per chat wins)."""
    rows: dict[str, dict[str, Any]] = {}
    for row in _read_lines(folder / SOURCES_FILE):
        if isinstance(row.get("chat_id"), str):
            rows[row["chat_id"]] = row
    return rows


def _read_lines(path: Path) -> list[dict[str, Any]]:
    return read_objects(path)


def _append_line(path: Path, row: Mapping[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:  # bookkeeping only: never fails a request
        log.warning("proxy: cannot write %s: %s", path, exc)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
