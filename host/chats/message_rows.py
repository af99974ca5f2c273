"""`MessageRows`: a chat file's messages as read, each `Message` made on its first read.

A long chat's first read (61k messages) made a frozen `Message` per line while the memory
graph loaded the chat's store beside it: Python work on the same GIL, and 61k more objects
for the collector to walk when the load's pause ended. A turn reads the newest messages only,
so the file's messages are kept as columns of their parsed parts and a message is made when
something reads it (and kept, so a message read twice is the same object). Appended messages
are kept as they are given.

A long chat file is parsed by pyarrow's JSON reader (`message_columns`): its C++ parser runs with
the GIL released while the memory graph loads the chat's store beside it; orjson's
one-call parse of the same 61k lines held the GIL for 25-45 ms, and making its 61k dicts' columns
20-30 ms more. A file the reader is not sure of is left to the orjson read (`message_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, repeat
from typing import Any, overload

from host.chats.context import ROLES, Message

__all__ = ["COLUMNS_FROM", "MessageRows", "message_columns", "message_rows"]

#: Files of at least this many bytes are parsed by pyarrow (`message_columns`); a smaller one
#: takes orjson about as long as pyarrow's set-up.
COLUMNS_FROM = 1 << 16

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

    def cut(self, count: int) -> MessageRows:
        """The first `count` messages, as a new `MessageRows` sharing the columns (this one
        unchanged: the columns are never written, only `_made` grows): a regenerate's cut of
        a long chat makes no message."""
        rows = MessageRows.__new__(MessageRows)
        rows._roles, rows._texts, rows._names, rows._times = (
            self._roles,
            self._texts,
            self._names,
            self._times,
        )
        rows._seqs = self._seqs
        rows._made = self._made[: max(0, count)]
        return rows

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


def message_columns(data: bytes) -> MessageRows | None:
    """The messages of a whole chat file (`data`: its bytes, the header line first), parsed by
    pyarrow's JSON reader; None whenever the result might differ from the line-by-line read's,
    which then decides (and names a bad line):

    - a line that does not begin with ``{`` (a blank one, a BOM) or a ``\\r`` that does not end a
      line (text mode splits lines there): the reader skips or ignores them;
    - two objects on a line (a glued append): the reader counts them as two rows;
    - a value the reader refuses or types otherwise (a number, a duplicate key, a lone
      surrogate, keys of changing types), a missing role or text, an unknown role;
    - a null name or time where ``null`` is written in the file (the reader cannot tell an
      explicit ``null``, which is an error, from a key left out).
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    if not data.startswith(b"{") or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
        return None
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    starts = ends[ends < len(data) - 1] + 1  # each line after the first
    if starts.size and not (np.frombuffer(data, np.uint8)[starts] == ord("{")).all():
        return None
    lines = ends.size + (not data.endswith(b"\n"))
    try:
        # on this thread, the GIL released: Arrow's pool of threads would take the cores the
        # store's read needs (measured: no faster)
        options = pj.ReadOptions(use_threads=False)
        table = pj.read_json(pa.BufferReader(data), read_options=options)
        table.validate(full=True)  # text that is not UTF-8 (which `read_text` refuses)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if table.num_rows != lines:
        return None
    table = table.slice(1)  # the header line
    count = table.num_rows
    if not count:
        return MessageRows([], [], [], [], [])
    columns: dict[str, Any] = {}
    for key in ("role", "text", "name", "time"):
        column = table.column(key).combine_chunks() if key in table.column_names else None
        if column is not None and column.type == pa.string() and not column.null_count:
            columns[key] = column
        elif column is not None and column.type not in (pa.string(), pa.null()):
            return None  # (numbers, objects)
        elif key in ("role", "text") or (column is not None and b"null" in data):
            return None  # no role or text; or maybe an explicit null name or time
        elif column is None:
            columns[key] = [""] * count
        else:  # a name or time left out of some lines
            columns[key] = pc.fill_null(column.cast(pa.string()), "")
    roles = pc.dictionary_encode(columns.pop("role"))
    kinds = roles.dictionary.to_pylist()
    if not set(kinds) <= _ROLES:
        return None
    codes = roles.indices.to_numpy(zero_copy_only=False)
    # a message's seq counts the assistant messages up to and including it
    seqs = (
        np.cumsum(codes == kinds.index("assistant")).tolist()
        if "assistant" in kinds
        else [0] * count
    )
    texts, names, times = (c if type(c) is list else c.to_pylist() for c in columns.values())
    role_list = np.array(kinds, dtype=object)[codes].tolist()  # the few role strings, shared
    return MessageRows(role_list, texts, names, times, seqs)
