"""Chats the host keeps: messages per chat, persisted as JSONL under ``<data_dir>/chats/``.

Each file starts with a header line ``{"chat_id": ...}`` followed by one ``{"role", "text"}``
line per message (plus ``name`` and ``time`` when the message has them). File names are a
readable slug plus a hash of the chat id, so any chat id is safe (no path separators, no case
clashes). Chats are read from disk on first use.

File and memory never disagree: a change is written to the file first and reaches the cached
messages only when the write succeeded (an append cut short by a full disk is cut off the file
again). Several processes may share a data dir: each change is made under the chat's lock
(`host.chats.chat_lock`), and `Chat.refresh`, called on taking it, drops the cached messages when
another process changed the file since this one last read or wrote it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

import orjson

from host.chats.chat_ids import check_chat_id
from host.chats.context import ROLES, Message, Role
from host.chats.file_signature import Signature, signature, signature_of
from host.chats.jsonl import append_lines, split_lines
from host.chats.message_rows import COLUMNS_FROM, MessageRows, message_columns, message_rows
from host.collector_pause import gc_paused

log = logging.getLogger("host.chats.chat_files")

FORMAT = 1

#: a chat's messages in memory: as read from its file (`MessageRows`), or a list of its own
Messages = list[Message] | MessageRows


def chat_file_name(chat_id: str) -> str:
    """A file name for ``chat_id`` that is safe on every file system and unique per id."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", chat_id).strip("_")[:40] or "chat"
    digest = hashlib.sha256(chat_id.encode("utf-8")).hexdigest()[:16]
    return f"{slug}-{digest}.jsonl"


class Chat:
    """The messages of one chat; ``add_message`` appends, ``truncate`` cuts (regenerate/swipe)."""

    def __init__(self, chat_id: str, path: Path) -> None:
        """`chat_id`: checked by `ChatStore.chat`, the one place chats are made."""
        self.chat_id = chat_id
        self.path = path
        self._lock = threading.RLock()
        self._messages: Messages | None = None
        self._frozen: tuple[Message, ...] | None = None  # `messages` until the next change
        self._unwritten: list[Message] | None = None  # added inside `batched_writes`, not on disk
        #: the list the file was read into and its length then: what a snapshot taken before the
        #: read holds (every change reads the file first, and only appends to that list in place)
        self._as_read: tuple[Messages, int] | None = None
        #: the file as this process last read or wrote it (`signature`): `refresh` compares
        self._disk: Signature | None = None

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message, oldest first (one tuple kept until the chat changes: a turn asks for
        the context several times, and a long chat's copy per call grew with the chat)."""
        with self._lock:
            if self._frozen is None:
                self._frozen = tuple(self._loaded())
            return self._frozen

    def snapshot(self) -> Callable[[], tuple[Message, ...]]:
        """The messages as they are now, made into a tuple only when called (cheap to take:
        the list only ever grows in place, `truncate` replaces it). A chat whose file was not
        read yet is read by the first call, not here: the messages then are the file's as read,
        since any change reads the file first (a long chat's context costs nothing to take,
        and the memory graph reads its file while it loads the chat's store)."""
        with self._lock:
            frozen = self._frozen
            if frozen is not None:
                return lambda: frozen
            if self._messages is None:
                return self._as_read_then
            messages = self._loaded()
            count = len(messages)

        def load() -> tuple[Message, ...]:
            with self._lock:
                if self._messages is messages and len(messages) == count:
                    return self.messages
            return tuple(messages[:count])

        return load

    @property
    def read_yet(self) -> bool:
        """Whether the chat's file was read (or the chat began in this process)."""
        return self._messages is not None

    def read_ahead(self) -> None:
        """Read the chat's file now if it was not read yet (a no-op after that), so that a later
        reader finds the messages ready (the memory graph reads them on a thread of their own
        while it loads the chat's store)."""
        with self._lock:
            self._loaded()

    def _as_read_then(self) -> tuple[Message, ...]:
        """The messages the file held when it was first read (`snapshot` of an unread chat)."""
        with self._lock:
            self._loaded()
            assert self._as_read is not None
            messages, count = self._as_read
            if self._messages is messages and len(messages) == count:
                return self.messages
        return tuple(messages[:count])

    def view(self) -> Sequence[Message]:
        """The messages as they are now, read in place (no copy; a slice copies its range)."""
        with self._lock:
            messages = self._loaded()
            return MessagesView(messages, len(messages))

    def newest(self, role: Role | None = None) -> Message | None:
        """The newest message (of `role`, when given), without copying the chat."""
        with self._lock:
            for message in reversed(self._loaded()):
                if role is None or message.role == role:
                    return message
        return None

    def add_message(self, role: Role, text: str, *, name: str = "", time: str = "") -> Message:
        """Append a message and persist it; returns it with its ``seq`` and ``index``.

        ``name`` (the speaker) and ``time`` are kept when given (transcript ingest)."""
        if role not in ROLES:
            raise ValueError(f"message role must be one of {', '.join(ROLES)}; got {role!r}")
        if not isinstance(text, str):
            raise TypeError(f"message text must be a str, got {type(text).__name__}")
        if not isinstance(name, str) or not isinstance(time, str):
            raise TypeError("message name and time must be strings")
        with self._lock:
            messages = self._loaded()
            message = _next_message(messages, role, text, name, time)
            if self._unwritten is not None:
                self._unwritten.append(message)
            elif not self.path.exists():
                self._write(messages + [message])
            else:
                self._append([message])
            messages.append(message)
            self._frozen = None
            return message

    @contextlib.contextmanager
    def batched_writes(self) -> Iterator[None]:
        """Messages added inside the block are in the chat at once and reach its file together
        when the block ends, in one append (a transcript ingest: one file write per block, not
        per message). The block's messages are written even when it raises."""
        with self._lock:
            outer = self._unwritten is None  # nested: the outer block writes
            if outer:
                self._unwritten = []
        try:
            yield
        finally:
            if outer:
                with self._lock:
                    self._flush()

    def _flush(self) -> None:
        """Write the messages `batched_writes` held back (call holding the lock). When the write
        fails they leave the chat again (the file holds none of them) and the error propagates."""
        unwritten, self._unwritten = self._unwritten or [], None
        if not unwritten:
            return
        try:
            if not self.path.exists():
                self._write(self._loaded())
            else:
                self._append(unwritten)
        except BaseException:
            messages = self._loaded()
            kept = len(messages) - len(unwritten)
            self._messages = _first(messages, kept)  # a new list: snapshots keep theirs
            self._frozen = None
            raise

    def truncate(self, after_index: int) -> int:
        """Delete every message whose index is greater than ``after_index``; returns how many.

        ``truncate(-1)`` empties the chat. Used when a reply is regenerated or swiped.
        """
        if not isinstance(after_index, int) or after_index < -1:
            raise ValueError(f"truncate: after_index must be an int >= -1, got {after_index!r}")
        with self._lock:
            if self._unwritten is not None:  # the file first holds what was added so far
                self._flush()
                self._unwritten = []
            messages = self._loaded()
            removed = max(0, len(messages) - (after_index + 1))
            if removed:  # a new list: snapshots taken before keep the old one
                cut = _first(messages, after_index + 1)
                # the file first: when it cannot be cut, the chat stays as it is on disk
                if _cut_file(self.path, len(messages), removed):
                    self._disk = signature(self.path)
                else:
                    self._write(cut)
                self._messages = cut
                self._frozen = None
            return removed

    def changed_elsewhere(self) -> bool:
        """Whether another process changed the file since this one last read or wrote it."""
        with self._lock:
            read = self._messages is not None and self._unwritten is None
            return read and signature(self.path) != self._disk

    def refresh(self) -> bool:
        """Drop the cached messages when another process changed the file (`changed_elsewhere`):
        the next read reads it again. True when dropped. Called holding the chat's lock."""
        with self._lock:
            if not self.changed_elsewhere():
                return False
            log.info("%s: changed by another process; read again", self.path)
            self._messages = self._frozen = self._as_read = self._disk = None
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._loaded())

    # ------------------------------------------------------------------ storage

    def _loaded(self) -> Messages:
        if self._messages is None:
            self._messages = self._read()
            self._as_read = (self._messages, len(self._messages))
        return self._messages

    def _read(self) -> Messages:
        """The file's messages. A line cut short by a crash (the last one, or one an append
        was glued onto before appends began on a new line) is set aside into ``<file>.torn``
        with a warning, and the file is rewritten without it, so the chat goes on."""
        try:
            with self.path.open("rb") as handle:
                stat = os.fstat(handle.fileno())
                data = handle.read()
        except FileNotFoundError:
            self._disk = None
            return []
        self._disk = signature_of(stat, data)
        if len(data) >= COLUMNS_FROM:  # a long chat: parsed off the GIL
            columns = message_columns(data)
            if columns is not None:
                return columns
        # as text mode reads it: "\r\n" and a lone "\r" end a line
        lines = split_lines(data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
        with gc_paused():  # a message object per line, none in a cycle (see collector_pause)
            whole = _read_whole(lines[1:])
        if whole is not None:
            return whole
        messages: list[Message] = []
        torn: list[str] = []
        for number, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                role, text, name, when = _parse_line(line)
            except (ValueError, KeyError, TypeError) as exc:
                if number == len(lines) or _cut_short(line):  # a write a crash never finished
                    torn.append(line)
                    continue
                glued = _glued_message(line)
                if glued is None:
                    raise ValueError(f"{self.path}:{number}: malformed chat line: {exc}") from exc
                cut, (role, text, name, when) = glued
                torn.append(line[:cut])
            messages.append(_next_message(messages, role, text, name, when))
        if torn:
            self._set_aside(torn, messages)
        return messages

    def _set_aside(self, torn: list[str], messages: list[Message]) -> None:
        """Keep the torn pieces in ``<file>.torn`` and rewrite the chat without them."""
        aside = self.path.with_name(self.path.name + ".torn")
        try:
            with aside.open("a", encoding="utf-8") as handle:
                handle.writelines(piece + "\n" for piece in torn)
            self._write(messages)
        except OSError as exc:  # a read-only folder: read on, appends still begin a new line
            log.warning("%s: a line cut short by a crash is skipped (%s)", self.path, exc)
            return
        log.warning(
            "%s: %d line(s) cut short by a crash set aside into %s; the chat goes on with %d "
            "message(s)",
            self.path,
            len(torn),
            aside,
            len(messages),
        )

    def _write(self, messages: Iterable[Message]) -> None:
        """Rewrite the whole file atomically (write a temporary file, then rename); when that
        fails (a full disk) the file is as it was and the temporary file is removed."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        try:
            with tmp.open("w", encoding="utf-8") as handle:
                handle.write(json.dumps({"chat_id": self.chat_id, "format": FORMAT}) + "\n")
                handle.writelines(_line(message) for message in messages)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        self._disk = signature(self.path)

    def _append(self, messages: Sequence[Message]) -> None:
        """Append the messages' lines; when the append fails (a full disk) the file is cut back
        to its size before, so no part of them stays."""
        size = self.path.stat().st_size
        try:
            append_lines(self.path, (_line(message) for message in messages))
        except BaseException:
            with contextlib.suppress(OSError):
                os.truncate(self.path, size)
            raise
        self._disk = signature(self.path)


class MessagesView(Sequence[Message]):
    """The first `count` messages of a chat's list, read in place: the list only grows in
    place (`Chat.truncate` replaces it), so the view never changes."""

    __slots__ = ("_messages", "_count")

    def __init__(self, messages: Messages, count: int) -> None:
        self._messages = messages
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._count)
            return tuple(self._messages[start:stop:step])
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("message index out of range")
        return self._messages[index]


def _first(messages: Messages, count: int) -> Messages:
    """The first `count` messages as a new list (a `MessageRows` shares its columns)."""
    return messages.cut(count) if isinstance(messages, MessageRows) else messages[:count]


def _next_message(
    messages: Sequence[Message], role: str, text: str, name: str = "", time: str = ""
) -> Message:
    seq = messages[-1].seq if messages else 0
    if role == "assistant":
        seq += 1
    return Message(seq, role, text, len(messages), name, time)  # type: ignore[arg-type]


def _cut_file(path: Path, count: int, removed: int) -> bool:
    """Drop the last `removed` of the `count` message lines of a chat file in place (one
    truncate: a regenerate in a long chat rewrote every line); False, and nothing done, when
    the file is not one header line and `count` message lines, each ending in a newline."""
    try:
        with path.open("r+b") as handle:
            data = handle.read()
            if not data.endswith(b"\n") or data.count(b"\n") != count + 1:
                return False
            end = len(data) - 1  # the last line's newline
            for _ in range(removed):
                end = data.rindex(b"\n", 0, end)
            handle.truncate(end + 1)
    except (OSError, ValueError):
        return False
    return True


def _read_whole(lines: list[str]) -> MessageRows | None:
    """Every message of a chat file's message lines, parsed as one JSON array in one orjson call
    (a 61k-message chat: about a third of the line-by-line time) and kept as columns, each
    message made on its first read (`message_rows`); None when any line is not a plain
    message object (a torn or glued line, a blank line, what only `json` reads), which the
    line-by-line read then handles and names."""
    if not all(line[:1] == "{" and line[-1:] == "}" for line in lines):
        return None
    try:
        rows = orjson.loads("[" + ",".join(lines) + "]")
    except orjson.JSONDecodeError:
        return None
    if len(rows) != len(lines):  # a line holding two objects ("{..},{..}") reads as two
        return None
    return message_rows(rows)


def _parse_line(line: str) -> tuple[Role, str, str, str]:
    """(role, text, name, time) of one message line; ValueError/KeyError/TypeError if bad."""
    try:  # orjson: a fifth of json's time, for the lines of a long chat's first read
        raw = orjson.loads(line)
    except orjson.JSONDecodeError:  # what orjson refuses (a lone surrogate, NaN): json decides
        raw = json.loads(line)
    role, text = raw["role"], raw["text"]
    name, when = raw.get("name", ""), raw.get("time", "")
    if role not in ROLES or not isinstance(text, str):
        raise ValueError(f"bad role or text: {raw!r}")
    if not isinstance(name, str) or not isinstance(when, str):
        raise ValueError(f"bad name or time: {raw!r}")
    return role, text, name, when


def _cut_short(line: str) -> bool:
    """True when ``line`` is the start of a JSON object that ends too soon (a torn write), not
    some other malformed text."""
    if not line.startswith("{"):
        return False
    try:
        json.loads(line)
    except json.JSONDecodeError as exc:
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(line.rstrip())
    return False


def _glued_message(line: str) -> tuple[int, tuple[Role, str, str, str]] | None:
    """A whole message line glued after a torn one (an append before appends began on a new
    line): (where the message starts, its parsed parts), or None."""
    start = line.rfind('{"role"')
    while start > 0:
        try:
            return start, _parse_line(line[start:])
        except (ValueError, KeyError, TypeError):
            start = line.rfind('{"role"', 0, start)
    return None


def _line(message: Message) -> str:
    raw: dict[str, str] = {"role": message.role, "text": message.text}
    if message.name:
        raw["name"] = message.name
    if message.time:
        raw["time"] = message.time
    return json.dumps(raw, ensure_ascii=False) + "\n"


class ChatStore:
    """The chats of one host, each loaded on first use and then kept."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._chats: dict[str, Chat] = {}

    def chat(self, chat_id: str) -> Chat:
        """The chat, made on first use; its id is checked then (`host.chats.chat_ids`), once:
        an id already kept here passed that check."""
        with self._lock:
            chat = self._chats.get(chat_id) if isinstance(chat_id, str) else None
            if chat is None:
                check_chat_id(chat_id)
                chat = Chat(chat_id, self.folder / chat_file_name(chat_id))
                self._chats[chat_id] = chat
            return chat

    def has(self, chat_id: str) -> bool:
        """Whether the chat's file is on disk or it holds messages here (opening it does not)."""
        chat = self._chats.get(chat_id)
        return bool(chat is not None and chat.read_yet and len(chat)) or (
            self.folder / chat_file_name(chat_id)
        ).is_file()

    def chat_ids(self) -> list[str]:
        """Every chat stored on disk or holding messages in this process, sorted."""
        ids = {c for c, chat in list(self._chats.items()) if chat.read_yet and len(chat)}
        if self.folder.is_dir():
            for path in self.folder.glob("*.jsonl"):
                try:
                    with path.open(encoding="utf-8") as handle:
                        ids.add(json.loads(handle.readline())["chat_id"])
                except (OSError, ValueError, KeyError, TypeError):
                    log.warning("%s: unreadable chat header", path)
        return sorted(ids)
