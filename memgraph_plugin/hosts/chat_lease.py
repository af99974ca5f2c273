"""A chat lease kept in DynamoDB: the `ChatLock` of hosts sharing one bucket.

One item per chat (key ``chat``: the database URI, ``#``, the chat id) says who holds it
(``holder``) until when (``expires``, seconds since the epoch), with a fencing number
(``fence``, one more per take), the ETag of the chat's message file in the bucket as its last
holder left it (``etag``), which host that was (``writer``) and where that host said the
chat's journal rows are (``frags``, `storage.journal.fragment_hints`; absent: unknown).

- Take: one conditional UpdateItem: the item has no holder, or its lease expired. A host that
  died keeps its chats until then; another host then takes them over.
- Renew: while held, every third of the lease, an UpdateItem on condition that this host still
  holds this take (holder and fence). A refused renewal means the lease was lost.
- Give back: first `publish` (the caller's: the chat's messages to the bucket), then one
  UpdateItem that clears the holder and notes the new ETag and writer, on the same condition.
- Fencing: `valid()` is false once the lease may have expired (the last successful take or
  renewal plus the lease, less a safety margin, on this host's monotonic clock) or a renewal was
  refused; the holder checks it (`check`) before each write, and the bucket's conditional PUT of
  the message file (`chat_objects.py`) refuses a holder whose copy is not the newest.

`release` is synchronous (the `ChatLock` interface); its network work runs as a task that
the next `acquire` of the chat in this process waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs

from host.chats.chat_lock import ChatBusy, _LockContext

from .aws_clients import error_code

log = logging.getLogger(__name__)

#: the longest pause between two tries of a waiting host
MAX_PAUSE_S = 0.25


class LeaseBusy(ChatBusy):
    """Another host held the chat past the timeout."""

    def __init__(self, chat_id: str, timeout_s: float, holder: str | None) -> None:
        who = f"host {holder}" if holder else "another host"
        Exception.__init__(
            self,
            f"chat {chat_id!r} is being served by {who}; waited {timeout_s:g} s "
            "(chat_lock_timeout_s), retry later",
        )
        self.chat_id = chat_id
        self.timeout_s = timeout_s
        self.holder = None


class LeaseLost(Exception):
    """This host no longer holds the chat's lease (expired, or taken over): it must not write."""

    code = "LEASE_LOST"

    def __init__(self, chat_id: str, why: str) -> None:
        super().__init__(
            f"chat {chat_id!r}: this host's lease {why}; the change is not stored (another "
            "host may serve the chat now)"
        )
        self.chat_id = chat_id


@attrs.frozen
class Taken:
    """What a take learnt: the fencing number, the message file's ETag and its writer as the
    last holder left them, and whether that holder's lease had expired (it never gave back)."""

    fence: int
    etag: str | None
    writer: str | None
    took_over: bool
    hint: str | None = None


def owner_name() -> str:
    """This process's name in lease items: host name, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LeaseTable:
    """The lease items of one database in one DynamoDB table, as seen by one process."""

    def __init__(self, client: Any, table: str, scope: str, seconds: float) -> None:
        self.client = client
        self.table = table
        self.scope = scope
        self.seconds = seconds
        self.owner = owner_name()
        #: the lease calls' own threads: a renewal never queues behind the storage's work on
        #: the event loop's default executor
        self.threads = ThreadPoolExecutor(max_workers=4, thread_name_prefix="chat-lease")

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """`function(*args)` on the lease threads."""
        return await asyncio.get_running_loop().run_in_executor(self.threads, function, *args)

    def _key(self, chat_id: str) -> dict[str, Any]:
        return {"chat": {"S": f"{self.scope}#{chat_id}"}}

    def take(self, chat_id: str) -> Taken | str | None:
        """Take the chat's lease: `Taken`, or the holder's name (or None) when another holds
        it."""
        now = time.time()
        try:
            answer = self.client.update_item(
                TableName=self.table,
                Key=self._key(chat_id),
                UpdateExpression="SET holder = :me, expires = :exp ADD fence :one",
                ConditionExpression="attribute_not_exists(holder) OR expires < :now",
                ExpressionAttributeValues={
                    ":me": {"S": self.owner},
                    ":exp": {"N": repr(now + self.seconds)},
                    ":now": {"N": repr(now)},
                    ":one": {"N": "1"},
                },
                ReturnValues="ALL_OLD",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except Exception as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise
            item = getattr(exc, "response", {}).get("Item") or {}
            return str(item.get("holder", {}).get("S", "")) or None
        old = answer.get("Attributes") or {}
        return Taken(
            fence=int(old.get("fence", {}).get("N", "0")) + 1,
            etag=old.get("etag", {}).get("S"),
            writer=old.get("writer", {}).get("S"),
            took_over="holder" in old,
            hint=old.get("frags", {}).get("S"),
        )

    def renew(self, chat_id: str, fence: int) -> bool:
        """Push the expiry on; False when this take no longer holds the lease."""
        return self._held_update(
            chat_id, fence, "SET expires = :exp", {":exp": {"N": repr(time.time() + self.seconds)}}
        )

    def give_back(
        self, chat_id: str, fence: int, etag: str | None, hint: str | None = None
    ) -> bool:
        """Clear the holder, noting the message file's ETag, this host as the writer and the
        journal rows' fragments (`hint`; None removes the last holder's, stale now)."""
        values: dict[str, Any] = {}
        sets = ["writer = :me"]
        if etag is not None:
            sets.append("etag = :etag")
            values[":etag"] = {"S": etag}
        removes = ["holder"]
        if hint is not None:
            sets.append("frags = :frags")
            values[":frags"] = {"S": hint}
        else:
            removes.append("frags")
        update = f"SET {', '.join(sets)} REMOVE {', '.join(removes)}"
        return self._held_update(chat_id, fence, update, values)

    def _held_update(self, chat_id: str, fence: int, update: str, values: dict[str, Any]) -> bool:
        try:
            self.client.update_item(
                TableName=self.table,
                Key=self._key(chat_id),
                UpdateExpression=update,
                ConditionExpression="holder = :me AND fence = :fence",
                ExpressionAttributeValues={
                    **values,
                    ":me": {"S": self.owner},
                    ":fence": {"N": str(fence)},
                },
            )
        except Exception as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise
            return False
        return True


def create_table(client: Any, table: str) -> None:
    """Create the lease table (key ``chat``, a string; billed per request) and wait for it;
    a table that exists already is left as it is."""
    try:
        client.create_table(
            TableName=table,
            KeySchema=[{"AttributeName": "chat", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "chat", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    except Exception as exc:
        if error_code(exc) != "ResourceInUseException":
            raise
    client.get_waiter("table_exists").wait(TableName=table)


Publish = Callable[["ChatLease"], Awaitable[str | None]]


class ChatLease(_LockContext):
    """One chat's lease for this process (see the module). `publish` runs before the lease is
    given back and returns the message file's new ETag (None: unchanged)."""

    def __init__(
        self, table: LeaseTable, chat_id: str, timeout_s: float, publish: Publish | None = None
    ) -> None:
        self.table = table
        self.chat_id = chat_id
        self.timeout_s = timeout_s
        self.publish = publish
        #: where the chat's journal rows are, left in the item on giving back (set by publish)
        self.hint: str | None = None
        self.taken: Taken | None = None
        self._held = False
        self._lost = False
        self._deadline = 0.0
        self._renewer: asyncio.Task[None] | None = None
        self._finishing: asyncio.Task[None] | None = None

    @property
    def margin(self) -> float:
        """How long before the lease's expiry this host stops writing."""
        return min(self.table.seconds * 0.25, 5.0)

    def locked(self) -> bool:
        return self._held

    def valid(self) -> bool:
        """Whether this host may still write the chat (see the module's fencing)."""
        return self._held and not self._lost and time.monotonic() < self._deadline

    def check(self) -> None:
        """`LeaseLost` unless `valid`, saying why."""
        if self.valid():
            return
        if not self._held:
            raise LeaseLost(self.chat_id, "is not held")
        if self._lost:
            raise LeaseLost(self.chat_id, "was taken over")
        late = time.monotonic() - self._deadline
        raise LeaseLost(self.chat_id, f"was not renewed in time ({late:.1f} s past its margin)")

    async def finished(self) -> None:
        """Wait for the last give-back of this process (publish and release)."""
        finishing = self._finishing
        if finishing is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(finishing)

    async def acquire(self) -> None:
        """Take the lease, trying again with growing pauses up to ``timeout_s``; `LeaseBusy`
        then."""
        await self.finished()
        if self._held:
            raise RuntimeError(f"chat {self.chat_id!r}: the lease is already held")
        deadline = time.monotonic() + self.timeout_s
        pause = 0.01
        while True:
            started = time.monotonic()
            got = await self.table.call(self.table.take, self.chat_id)
            if isinstance(got, Taken):
                self.taken, self._held, self._lost, self.hint = got, True, False, None
                self._deadline = started + self.table.seconds - self.margin
                self._renewer = asyncio.ensure_future(self._renew())
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise LeaseBusy(self.chat_id, self.timeout_s, got)
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, MAX_PAUSE_S)

    async def _renew(self) -> None:
        assert self.taken is not None
        fence = self.taken.fence
        while self._held:
            await asyncio.sleep(self.table.seconds / 3)
            if not self._held:
                return
            started = time.monotonic()
            try:
                kept = await self.table.call(self.table.renew, self.chat_id, fence)
            except Exception as exc:  # noqa: BLE001 - the next renewal tries again
                log.warning("chat %s: renewing its lease failed: %s", self.chat_id, exc)
                continue
            if not kept:
                self._lost = True
                log.warning("chat %s: the lease was taken over; this host stops writing it",
                            self.chat_id)  # fmt: skip
                return
            self._deadline = started + self.table.seconds - self.margin

    def release(self) -> None:
        """Let the lease go: publish, then give it back, on a task (see the module)."""
        if not self._held:
            raise RuntimeError(f"chat {self.chat_id!r}: release of a lease not held")
        if self._renewer is not None:
            self._renewer.cancel()
            self._renewer = None
        self._finishing = asyncio.ensure_future(self._finish())

    async def _finish(self) -> None:
        taken = self.taken
        assert taken is not None
        etag = taken.etag
        try:
            if self.publish is not None and self.valid():
                etag = await self.publish(self) or etag
        except Exception as exc:  # noqa: BLE001 - given back all the same: the last copy stays
            log.error("chat %s: its messages were not published: %s", self.chat_id, exc)
        finally:
            self._held = False
            try:
                if not await self.table.call(
                    self.table.give_back, self.chat_id, taken.fence, etag, self.hint
                ):
                    log.warning("chat %s: the lease had been taken over before it was given "
                                "back", self.chat_id)  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - it expires by itself
                log.warning("chat %s: giving back the lease failed: %s", self.chat_id, exc)
