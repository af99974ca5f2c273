"""`MessageRows`: a chat file's messages as read, each `Message` made on its first read.

A long chat's first read (61k messages) made a frozen `Message` per line while the memory
graph loaded the chat's store beside it: Python work on the same GIL, and 61k more objects
for the collector to walk when the load's pause ended. A turn reads the newest messages only,
so the file's messages are kept as columns of their parsed parts and a message is made when
something reads it (and kept, so a message read twice is the same object). Appended messages
are kept as they are given.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, repeat
from typing import Any, overload

from host.chats.context import ROLES, Message

__all__ = ["MessageRows", "message_rows"]

_ROLES = frozenset(ROLES)
_DICT = {dict}
_STR = {str}


class MessageRows(Sequence[Message]):
    """The messages of a chat: those read from its file as columns (role, text, name, time,
    seq by position), then those appended. Grows only by `append`; a slice is a list."""

    __slots__ = ("_roles", "_texts", "_names", "_times", "_seqs", "_made")

    def __init__(
        self,
        roles: list[str],
        texts: list[str],
        names: list[str],
        times: list[str],
        seqs: list[int],
    ) -> None:
        self._roles, self._texts, self._names, self._times = roles, texts, names, times
        self._seqs = seqs
        self._made: list[Message | None] = [None] * len(roles)

    def __len__(self) -> int:
        return len(self._made)

    def _at(self, index: int) -> Message:
        message = self._made[index]
        if message is None:  # a row of the file: every appended message is made already
            message = self._made[index] = Message(
                self._seqs[index],
                self._roles[index],  # type: ignore[arg-type]  # checked by `message_rows`
                self._texts[index],
                index,
                self._names[index],
                self._times[index],
            )
        return message

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        count = len(self._made)
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(count))]
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("message index out of range")
        return self._at(index)

    def __iter__(self) -> Iterator[Message]:
        at = self._at
        return (at(i) for i in range(len(self._made)))

    def __reversed__(self) -> Iterator[Message]:
        at = self._at
        return (at(i) for i in range(len(self._made) - 1, -1, -1))

    def __add__(self, other: Iterable[Message]) -> list[Message]:
        return [*self, *other]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"MessageRows({len(self)} messages)"

    def append(self, message: Message) -> None:
        """Add a message after the others (its index is the chat's length before it)."""
        self._made.append(message)


def message_rows(rows: list[Any]) -> MessageRows | None:
    """The messages of a chat file's parsed lines (`rows`, oldest first), or None when any is
    not a plain message object (a dict with a known role, a text, and a name and time that
    are text when given). Checked a column at a time: no Python code runs per message."""
    if set(map(type, rows)) - _DICT:
        return None
    roles = list(map(dict.get, rows, repeat("role")))
    texts = list(map(dict.get, rows, repeat("text")))
    names = list(map(dict.get, rows, repeat("name"), repeat("")))
    times = list(map(dict.get, rows, repeat("time"), repeat("")))
    if set(map(type, roles)) - _STR or not set(roles) <= _ROLES:
        return None
    for column in (texts, names, times):
        if set(map(type, column)) - _STR:
            return None
    # a message's seq counts the assistant messages up to and including it
    seqs = list(accumulate(map("assistant".__eq__, roles), initial=0))[1:]
    return MessageRows(roles, texts, names, times, seqs)
