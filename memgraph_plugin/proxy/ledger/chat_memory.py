"""The proxy's side of the memory: one `ChatMemory` per host keeps, per chat, the reconciliation
ledger and a lock, and drives the host's turn pipeline (`turn/pipeline.py`) so a proxied chat
builds the same memory as a live one: messages go into the host's chat, each is extracted by
`TurnPipeline.extract`, a forget goes through `TurnPipeline.forget_messages_from`, recall is
`TurnPipeline.recall`. It also keeps where each chat id came from, the index that finds the
chat of a request sent without an id (`resolve`, `chat_matching`), and the memory failures.

Several processes may serve one data dir: a chat's `lock` is held across them
(`host.chats.chat_lock`), and on taking it the process drops what it cached of the chat when
another process changed the chat file meanwhile (the chat's messages, its ledger, the pending
list), so the next step reads the file again and recovers the messages the graph did not learn
yet. A change that fails leaves the chat file, the cached chat and the ledger as they were before
it (`NotStored` says which messages were kept).
With hosts sharing a bucket (`memgraph_plugin.hosts`) the lock is a lease, checked per change.

Why one module over 500 lines: the ledger, the pending list, the matching index and the chat's
lock are one chat's proxy state, changed together under that lock (a refresh drops the first
two and marks the index stale; an append feeds all three); split, each part would reach into
the others' dicts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from host.chats.chat_lock import (
    CHAT_LOCK_TIMEOUT,
    DEFAULT_TIMEOUT_S,
    ChatLock,
    CombinedChatLock,
    FileChatLock,
    lock_folder,
)
from host.settings.setting_values import int_setting
from memgraph_plugin.hosts.chat_lease import ChatLease
from memgraph_plugin.hosts.shared_chats import SharedChats, shared_chats_for
from memgraph_plugin.recall.prompt_window import PromptWindow
from memgraph_plugin.recall.status import PROXY_WARNINGS
from memgraph_plugin.settings_keys import RECALL
from memgraph_plugin.turn.message_extraction import already_extracted
from memgraph_plugin.turn.pipeline import pipeline_for

from ..request.context_budget import Trimmed
from ..request.conversation import Conversation, speaker
from .chat_identity import OPENING_SOURCE, ChatIdentity
from .chat_matching import NEW, MessageIndex, choose, fit, read_tail
from .extract_blocks import extract_block
from .proxy_files import (
    SOURCES_FILE,
    append_line,
    file_mtime,
    file_size,
    file_stat,
    read_sources,
)
from .reconcile import Ledger, Plan, plan

log = logging.getLogger(__name__)

FOLDER = str(PROXY_WARNINGS.parent)
#: More new messages than this in one request (a front end's existing chat seen for the first
#: time): extracted through one session per block of `BLOCK` (each block one append).
BULK = 8
BLOCK = 256
WARNINGS_FILE = PROXY_WARNINGS.name


@attrs.frozen
class Synced:
    """What reconciling one request did: the plan, how many stored messages it forgot, and the
    messages it added to the chat (extracted later, off the response path)."""

    plan: Plan
    forgotten: int
    added: tuple[Any, ...]


class NotStored(Exception):
    """Adding messages failed part way: `stored` are the messages the chat kept (each one
    extracted), the others left the chat again; `cause` is why."""

    def __init__(self, chat_id: str, stored: Sequence[Any], total: int, cause: Exception) -> None:
        super().__init__(
            f"chat {chat_id!r}: {len(stored)} message(s) stored, the others not: "
            f"{type(cause).__name__}: {cause}"
        )
        self.chat_id = chat_id
        self.stored = tuple(stored)
        self.total = total
        self.cause = cause


class ChatMemory:
    """Per-host proxy state; every method that changes a chat expects its `lock` held.

    `shared_lock`: the cross-process lock of a chat (default: with ``chat_lease_table`` set,
    its lease shared by every host on the bucket, else its lock file under the data dir, waited
    on up to ``chat_lock_timeout_s``)."""

    def __init__(self, host: Any, shared_lock: Callable[[str], ChatLock] | None = None) -> None:
        self.host = host
        self.pipeline = pipeline_for(host)
        self.folder = Path(host.data_dir) / FOLDER
        self._ledgers: dict[str, Ledger] = {}
        self._locks: dict[str, CombinedChatLock] = {}
        self.shared: SharedChats | None = None if shared_lock else shared_chats_for(host)
        if self.shared is not None:
            pulled = self.shared.objects.pull_all()  # a new host lists every chat
            log.info("proxy: %d chat message file(s) brought from the bucket", pulled)
        self._shared_lock = shared_lock or (self._lease if self.shared else self._file_lock)
        self._sources: dict[str, dict[str, Any]] | None = None
        self._sources_size = -1  # the sources file's size when it was read
        #: derived chats by the messages they hold (`resolve`); `_stale`: chats to index again
        self._index = MessageIndex()
        self._stale: set[str] = set()
        self._indexed: dict[str, tuple[int, int, int] | None] = {}  # chat file stat when indexed
        self._tasks: set[asyncio.Task[Any]] = set()
        self._extracting = asyncio.Lock()  # one chat's extraction at a time (`extract_pending`)
        self.pipeline.catch_up.use_lock(self.lock)  # background compaction: one writer too
        self._pending: dict[str, list[Any]] = {}  # added to the chat, not extracted yet
        self._recovered: set[str] = set()  # chats whose unextracted tail was looked for
        self.warnings = 0

    # ------------------------------------------------------------------ chats

    def lock(self, chat_id: str) -> CombinedChatLock:
        """Serialises the requests of one chat, in this process and across the processes on
        the data dir (different chats run in parallel); ``acquire`` raises
        `host.chats.chat_lock.ChatBusy` when another process holds the chat too long."""
        lock = self._locks.get(chat_id)
        if lock is None:
            shared = self._shared_lock(chat_id)

            async def refresh() -> None:
                await self._taken(chat_id, shared)

            lock = self._locks[chat_id] = CombinedChatLock(shared, refresh)
        return lock

    def _file_lock(self, chat_id: str) -> ChatLock:
        timeout = self.host.settings.get(CHAT_LOCK_TIMEOUT, DEFAULT_TIMEOUT_S)
        return FileChatLock(lock_folder(self.host.data_dir), chat_id, float(timeout))

    def _lease(self, chat_id: str) -> ChatLock:
        timeout = self.host.settings.get(CHAT_LOCK_TIMEOUT, DEFAULT_TIMEOUT_S)
        return self.shared.lease(chat_id, float(timeout))  # type: ignore[union-attr]

    async def _taken(self, chat_id: str, shared: ChatLock) -> None:
        """On taking the chat: `SharedChats.taken` (with a lease), then `refresh`."""
        if self.shared is not None and isinstance(shared, ChatLease):
            await self.shared.taken(shared, getattr(self.pipeline, "service", None))
        self.refresh(chat_id)

    def check_lease(self, chat_id: str) -> None:
        """`LeaseLost` when the chat's lease is no longer this host's (it must not write)."""
        lock = self._locks.get(chat_id)
        if lock is not None and isinstance(lock.shared, ChatLease):
            lock.shared.check()

    def refresh(self, chat_id: str) -> bool:
        """On taking the chat's lock: its graph is checked against storage on the next open
        (another process may have committed, however recently this one looked), and when
        another process changed the chat's file (`Chat.refresh`) this process drops what it
        cached of the chat: the ledger, the pending list, the last recall (reused for a
        regenerate); the unextracted tail is looked for again (`recover`). True when it did."""
        persistence = getattr(self.pipeline.service, "persistence", None)
        recheck = getattr(persistence, "recheck", None)
        if recheck is not None:
            recheck(chat_id)
        if not self.host.chat(chat_id).refresh():
            return False
        self._ledgers.pop(chat_id, None)
        self._pending.pop(chat_id, None)
        self._recovered.discard(chat_id)
        self._stale.add(chat_id)
        self.pipeline.forget_last_recall(chat_id)
        return True

    def _resync(self, chat_id: str) -> None:
        """After a failed change: the ledger is built again from the chat as it is (file and
        memory agree), and the pending list keeps only messages still in the chat."""
        self._ledgers.pop(chat_id, None)
        self._stale.add(chat_id)
        count = len(self.host.chat(chat_id))
        pending = self._pending.get(chat_id)
        if pending:
            pending[:] = [m for m in pending if m.index < count]

    def ledger(self, chat_id: str) -> Ledger:
        ledger = self._ledgers.get(chat_id)
        if ledger is None:
            ledger = self._ledgers[chat_id] = Ledger(self.host.chat(chat_id).view())
        return ledger

    def sources(self) -> dict[str, dict[str, Any]]:
        """chat id -> {"source", "opening", "time"} for every chat the proxy or API has seen
        (read again when the file changed size: another process noted a chat)."""
        size = file_size(self.folder / SOURCES_FILE)
        if self._sources is None or size != self._sources_size:
            fresh = read_sources(self.folder)
            known = self._sources or {}
            self._stale.update(
                chat_id
                for chat_id, row in fresh.items()
                if known.get(chat_id, {}).get("source") != row.get("source")
            )
            self._sources, self._sources_size = fresh, size
        return self._sources

    def note(self, identity: ChatIdentity) -> None:
        """Remember where a chat's id came from (one line the first time, or when it changes)."""
        known = self.sources().get(identity.chat_id)
        if known is not None and known.get("source") == identity.source:
            return
        row = {"chat_id": identity.chat_id, "source": identity.source,
               "opening": identity.opening, "time": time.time()}  # fmt: skip
        self.sources()[identity.chat_id] = row
        self._stale.add(identity.chat_id)
        append_line(self.folder / SOURCES_FILE, row)

    async def find(
        self, identity: ChatIdentity, conv: Conversation, within: Callable[[str], bool] = bool
    ) -> ChatIdentity:
        """`resolve`, after the candidate chats another process changed since this one read
        them are read again (each under its lock for a moment: `refresh`), so the request is
        compared with what they hold now."""
        if identity.source != OPENING_SOURCE:
            return identity
        self._refresh_index()
        for chat_id in self._candidates(identity, conv, within):
            if self.host.chat(chat_id).changed_elsewhere():
                async with self.lock(chat_id):
                    pass
        return self.resolve(identity, conv, within)

    def _candidates(
        self, identity: ChatIdentity, conv: Conversation, within: Callable[[str], bool]
    ) -> list[str]:
        """The chats a request without an id may belong to (those `within` takes): those of the
        index sharing its messages, and the chat of its derived id when that exists."""
        derived = identity.chat_id
        names = self._index.candidates(conv.roles, conv.texts, within)
        if derived not in names and self.host.has_chat(derived):
            names.append(derived)
        return names

    def resolve(
        self, identity: ChatIdentity, conv: Conversation, within: Callable[[str], bool] = bool
    ) -> ChatIdentity:
        """The chat of a request sent without an id (`identity` from its opening): the stored
        chat `within` takes (the key's namespace's; any: `bool`) its messages fit best (`fit`),
        else a new chat: the derived id, or that id with ``-2``, ``-3``, ... when a chat of that
        id exists and the request does not fit it (`match` says which). Nothing is created."""
        if identity.source != OPENING_SOURCE:
            return identity
        self._refresh_index()
        derived = identity.chat_id
        names = self._candidates(identity, conv, within)
        fits = []
        for chat_id in names:
            found = fit(conv.roles, conv.texts, self.ledger(chat_id))
            if found is not None:
                fits.append((chat_id, found))
        choice = choose(fits, lambda chat_id: self._preference(chat_id, identity.opening))
        if choice.chat_id is not None:
            return attrs.evolve(identity, chat_id=choice.chat_id, match=choice.match)
        chat_id, number = derived, 1
        while chat_id in names or self.host.has_chat(chat_id):
            number += 1
            chat_id = f"{derived}-{number}"
        log.info("proxy: no stored chat holds the request's messages: new chat %s", chat_id)
        return attrs.evolve(identity, chat_id=chat_id, match=NEW)

    def _preference(self, chat_id: str, opening: str) -> tuple[int, float]:
        """Among chats a request fits equally well: one of the same system prompt, then the
        most recently active."""
        same = int(self.sources().get(chat_id, {}).get("opening") == opening)
        return same, file_mtime(self.host.chat(chat_id).path)

    def _refresh_index(self) -> None:
        """Index again the derived chats changed since the last request (this process's
        changes, chats another process noted, chat files another process wrote since they
        were indexed: a ``stat`` each): from the ledger when this process holds one in step
        with the file, else from the end of the chat file (`chat_matching.read_tail`)."""
        sources = self.sources()
        for chat_id, row in sources.items():
            if (
                row.get("source") == OPENING_SOURCE
                and chat_id not in self._stale
                and file_stat(self.host.chat(chat_id).path) != self._indexed.get(chat_id)
            ):
                self._stale.add(chat_id)
        for chat_id in self._stale:
            row = sources.get(chat_id)
            chat = self.host.chat(chat_id)
            self._indexed[chat_id] = file_stat(chat.path)
            if row is None or row.get("source") != OPENING_SOURCE:
                self._index.drop(chat_id)
                continue
            ledger = self._ledgers.get(chat_id)
            if ledger is not None and not chat.changed_elsewhere():
                self._index.put(chat_id, ledger.roles, ledger.texts)
            elif self.host.has_chat(chat_id):
                self._index.put(chat_id, *read_tail(chat.path))
            else:
                self._index.drop(chat_id)
        self._stale.clear()

    # --------------------------------------------------------------- messages

    async def sync(self, chat_id: str, conv: Conversation) -> Synced:
        """Bring the chat in line with the sent conversation (`reconcile.plan`): forget from the
        first differing message (one rollback), then append the new messages to the chat."""
        self.check_lease(chat_id)
        await self.recover(chat_id)
        ledger = self.ledger(chat_id)
        found = plan(conv.roles, conv.texts, ledger)
        forgotten = 0
        if found.forget_from is not None:
            forgotten = await self.forget(chat_id, ledger.indices[found.forget_from])
        chat = self.host.chat(chat_id)
        added = []
        try:
            with chat.batched_writes():
                for i in range(found.add_from, len(conv)):
                    added.append(self._append(chat_id, conv.roles[i], conv.texts[i], conv.raw[i]))
        except BaseException:  # the file took none of them, nor did the chat
            self._resync(chat_id)
            raise
        return Synced(found, forgotten, tuple(added))

    def _append(self, chat_id: str, role: str, text: str, raw: Mapping[str, Any]) -> Any:
        chat = self.host.chat(chat_id)
        ledger = self.ledger(chat_id)  # built before the append, so it never holds it twice
        message = chat.add_message(role, text, name=speaker(raw, text))  # type: ignore[arg-type]
        ledger.append(role, text, message.index)
        self._stale.add(chat_id)
        self._pending.setdefault(chat_id, []).append(message)
        return message

    def add_answer(self, chat_id: str, text: str, name: str = "") -> Any | None:
        """Append the assistant's complete answer (not extracted yet); None when it is empty."""
        text = text.strip()
        if not text:
            return None
        self.check_lease(chat_id)
        return self._append(chat_id, "assistant", text, {"name": name})

    async def add_messages(self, chat_id: str, items: Iterable[Mapping[str, Any]]) -> list[Any]:
        """Append messages (role, text, name) and extract each, in order (the JSON API). When
        the append fails nothing is kept; when an extraction fails (its commit: a full disk)
        the messages from the first one the graph did not take leave the chat again, and
        `NotStored` says which were kept."""
        self.check_lease(chat_id)
        await self.recover(chat_id)
        chat = self.host.chat(chat_id)
        try:
            with chat.batched_writes():
                added = [self._append(chat_id, i["role"], i["text"], i) for i in items]
        except BaseException:
            self._resync(chat_id)
            raise
        try:
            await self.extract_pending(chat_id)
        except Exception as exc:
            kept = await self._drop_unextracted(chat_id, added)
            raise NotStored(chat_id, kept, len(chat), exc) from exc
        return added

    async def _drop_unextracted(self, chat_id: str, added: list[Any]) -> list[Any]:
        """Cut the chat before the first of `added` the graph did not take; the ones kept."""
        left = {m.index for m in self._pending.get(chat_id, ())}
        session = None
        try:
            session = await self.pipeline.open_session(chat_id)
        except Exception:  # noqa: BLE001 - then every pending message counts as not taken
            log.warning("proxy: chat %s: cannot open its graph after a failed extraction", chat_id)
        first = next(
            (
                m
                for m in added
                if m.index in left and (session is None or not already_extracted(session.store, m))
            ),
            None,
        )
        if first is not None:
            try:
                self.host.chat(chat_id).truncate(first.index - 1)
            except OSError as exc:  # the file could not be cut: they stay, to be extracted
                log.error("proxy: chat %s: cannot remove unstored messages: %s", chat_id, exc)
        self._resync(chat_id)
        return [m for m in added if first is None or m.index < first.index]

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
        (as a live chat does); returns how many. Each block of up to `BLOCK` (a turn's
        messages) is one journal append, retried on a conflict (`extract_blocks`); a failed
        message ends it, those before it are stored. Extraction runs on the event loop (the
        graph is the loop's); between two messages it lets the loop serve the other chats'
        requests, and the chats' extractions take turns (first come, first done): interleaved,
        each would end only when all of them do."""
        if not self._pending.get(chat_id):
            return 0
        async with self._extracting:
            return await self._extract_pending(chat_id)

    async def _extract_pending(self, chat_id: str) -> int:
        pending = self._pending.get(chat_id)
        if not pending:
            return 0
        count = 0
        try:
            for start in range(0, len(pending), BLOCK):
                done, failure = await extract_block(
                    self.pipeline, chat_id, pending[start : start + BLOCK],
                    one_session_from=BULK, check=lambda: self.check_lease(chat_id),
                )  # fmt: skip
                count += done
                if failure is not None:
                    raise failure
        finally:
            del pending[:count]
        return count

    async def forget(self, chat_id: str, index: int) -> int:
        """Forget the chat's messages from chat index `index` on, and what the graph learnt
        from them (`TurnPipeline.forget_messages_from`: one rollback commit). When it fails after
        the chat was cut (the rollback's commit: a full disk) the messages are put back, so
        the chat is as the client was told."""
        self.check_lease(chat_id)
        chat = self.host.chat(chat_id)
        before = tuple(chat.view()[index:])
        try:
            removed = await self.pipeline.forget_messages_from(chat_id, index)
        except BaseException:
            self._put_back(chat_id, before)
            raise
        pending = self._pending.get(chat_id)
        if pending:
            pending[:] = [m for m in pending if m.index < index]
        ledger = self.ledger(chat_id)
        keep = next((i for i, at in enumerate(ledger.indices) if at >= index), len(ledger))
        ledger.truncate(keep)
        self._stale.add(chat_id)
        return removed

    def _put_back(self, chat_id: str, messages: Sequence[Any]) -> None:
        """Append again those of `messages` (the chat's tail from some index) the chat lost."""
        chat = self.host.chat(chat_id)
        lost = [m for m in messages if m.index >= len(chat)]
        try:
            if lost:
                with chat.batched_writes():
                    for m in lost:
                        chat.add_message(m.role, m.text, name=m.name, time=m.time)
                log.warning("proxy: chat %s: a failed forget put back %d", chat_id, len(lost))
        except OSError as exc:
            log.error("proxy: chat %s: cannot put back %d messages: %s", chat_id, len(lost), exc)
        finally:
            self._resync(chat_id)
            self._recovered.discard(chat_id)  # what the graph no longer holds is found again

    async def recall(self, chat_id: str, *, window: PromptWindow | None = None) -> Any:
        """Recall for the chat's last user message (`TurnPipeline.recall`; its trace is kept),
        inside `window` when the request's history was cut to a context budget."""
        return await self.pipeline.recall(chat_id, window=window)

    def window(
        self, chat_id: str, conv: Conversation, synced: Synced, trimmed: Trimmed | None = None
    ) -> PromptWindow:
        """The recall window of a request (after `sync`): the chat index of the oldest message
        the forwarded request carries (sent message i is stored at the ledger's ``offset + i``),
        whose events and those of every later message the block leaves out, and the block's
        budget: `trimmed`'s for a request cut to a context budget, else
        ``recall_budget_chars`` (the request is forwarded with every message it sent)."""
        first = bisect_left(conv.positions, trimmed.first_kept) if trimmed is not None else 0
        ledger = self.ledger(chat_id)
        at = synced.plan.offset + first
        kept_from = ledger.indices[at] if first < len(conv) and at < len(ledger) else None
        if kept_from is None:
            kept_from = len(self.host.chat(chat_id))
        if trimmed is None:
            budget = int_setting(self.host.settings, RECALL.recall_budget_chars)
            return PromptWindow(budget, kept_from)
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
        for lock in list(self._locks.values()):  # leases still being given back
            if isinstance(lock.shared, ChatLease):
                await lock.shared.finished()

    # ---------------------------------------------------------------- failures

    def warn(self, chat_id: str, reason: str) -> None:
        """Count a request forwarded without memory (shown by `memgraph-host status`)."""
        self.warnings += 1
        append_line(
            self.folder / WARNINGS_FILE, {"chat_id": chat_id, "reason": reason, "time": time.time()}
        )
